package contextdraw

// This file reproduces the draws of Python's random.Random(seed).random()
// bit for bit, so a seeded plan attempts exactly the contexts the reference
// tool attempts for the same seed.
//
// Python seeds its Mersenne Twister (MT19937, Matsumoto and Nishimura 1998)
// from an integer by init_by_array over the 32-bit words of |seed|, least
// significant word first; seed 0 gives the key [0]. random() takes two
// 32-bit outputs a and b and returns (a>>5 * 2^26 + b>>6) / 2^53, a float64
// in [0, 1) with 53 random bits (genrand_res53).

const (
	mtN         = 624
	mtM         = 397
	mtMatrixA   = 0x9908b0df
	mtUpperMask = 0x80000000
	mtLowerMask = 0x7fffffff
)

// pyRandom is the state of one Python random.Random generator. It is a
// value owned by one goroutine; there is no shared state.
type pyRandom struct {
	mt  [mtN]uint32
	mti int
}

// newPyRandom returns the generator of random.Random(seed).
func newPyRandom(seed int64) *pyRandom {
	// |seed| as uint64: for math.MinInt64 the two's-complement negation
	// wraps to itself, whose uint64 reading is 2^63, the true magnitude.
	mag := uint64(seed)
	if seed < 0 {
		mag = uint64(-seed)
	}
	key := make([]uint32, 0, 2)
	for mag > 0 {
		key = append(key, uint32(mag))
		mag >>= 32
	}
	if len(key) == 0 {
		key = append(key, 0)
	}
	r := &pyRandom{}
	r.initByArray(key)
	return r
}

// initGenrand is MT19937's init_genrand.
func (r *pyRandom) initGenrand(s uint32) {
	r.mt[0] = s
	for i := 1; i < mtN; i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	r.mti = mtN
}

// initByArray is MT19937's init_by_array, as Python's random_seed calls it.
func (r *pyRandom) initByArray(key []uint32) {
	r.initGenrand(19650218)
	i, j := 1, 0
	k := max(mtN, len(key))
	for ; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= mtN {
			r.mt[0] = r.mt[mtN-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k = mtN - 1; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= mtN {
			r.mt[0] = r.mt[mtN-1]
			i = 1
		}
	}
	r.mt[0] = 0x80000000 // MSB is 1, assuring a non-zero initial array
}

// uint32 is MT19937's genrand_uint32.
func (r *pyRandom) uint32() uint32 {
	if r.mti >= mtN {
		var y uint32
		kk := 0
		for ; kk < mtN-mtM; kk++ {
			y = (r.mt[kk] & mtUpperMask) | (r.mt[kk+1] & mtLowerMask)
			r.mt[kk] = r.mt[kk+mtM] ^ (y >> 1) ^ (-(y & 1) & mtMatrixA)
		}
		for ; kk < mtN-1; kk++ {
			y = (r.mt[kk] & mtUpperMask) | (r.mt[kk+1] & mtLowerMask)
			r.mt[kk] = r.mt[kk+(mtM-mtN)] ^ (y >> 1) ^ (-(y & 1) & mtMatrixA)
		}
		y = (r.mt[mtN-1] & mtUpperMask) | (r.mt[0] & mtLowerMask)
		r.mt[mtN-1] = r.mt[mtM-1] ^ (y >> 1) ^ (-(y & 1) & mtMatrixA)
		r.mti = 0
	}
	y := r.mt[r.mti]
	r.mti++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// float64 is Python's random(): genrand_res53, a float64 in [0, 1).
func (r *pyRandom) float64() float64 {
	a, b := r.uint32()>>5, r.uint32()>>6
	return (float64(a)*(1<<26) + float64(b)) * (1.0 / (1 << 53))
}
