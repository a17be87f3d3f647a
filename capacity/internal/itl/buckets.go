package itl

import (
	"math"
	"time"
)

// The sketch past ExactGaps: a logarithmic histogram of the gaps in
// milliseconds, the mapping of a DDSketch (Masson, Rim and Lee, "DDSketch:
// a fast and fully-mergeable quantile sketch with relative-error
// guarantees", VLDB 2019) with exact integer counts.
//
// With a = RelativeAccuracy and gamma = (1+a)/(1-a), a gap of v > 0 ms goes
// to bucket
//
//	index(v) = floor(ln v / ln gamma)
//
// which holds the values in [gamma^i, gamma^(i+1)), and a bucket stands for
//
//	value(i) = gamma^i * (1 + a)
//
// Every v in bucket i lies within a of value(i): v/value(i) is in
// [1/(1+a), gamma/(1+a)) = [1/(1+a), 1/(1-a)). A quantile is read by
// finding the rank exactly in the cumulative counts and answering its
// bucket's value; two histograms of one mapping merge by adding their
// counts, losing nothing either had. A gap of 0 ns has no logarithm and is
// counted apart (zero), below every bucket.
//
// The arithmetic is written exactly as github.com/DataDog/sketches-go
// v1.4.8 computes its LogarithmicMapping (index offset 0), down to the
// float64 rounding of each step, so that the buckets and values of the
// artifacts it wrote read back identically (buckets_test.go compares the
// two).

// logMapping holds the mapping's float64 constants, computed once from
// RelativeAccuracy as sketches-go computes them, and the range of buckets a
// gap can reach.
type logMapping struct {
	gamma      float64 // (1+a)/(1-a)
	multiplier float64 // 1/ln gamma
	accuracy   float64 // 1 - 2/(1+gamma): a, as rounded by sketches-go
	// lowest and highest are the buckets of 1 ns and of the longest
	// time.Duration: every gap > 0 is in lowest..highest.
	lowest, highest int
}

// mapping is the one mapping of this package. It is set at initialization
// and never changed.
var mapping = newLogMapping(RelativeAccuracy)

func newLogMapping(a float64) logMapping {
	gamma := (1 + a) / (1 - a)
	m := logMapping{gamma: gamma, multiplier: 1 / math.Log(gamma), accuracy: 1 - 2/(1+gamma)}
	m.lowest, m.highest = m.index(ms(1)), m.index(ms(math.MaxInt64))
	return m
}

// index is the bucket of v ms, v > 0. The floor is taken as sketches-go
// takes it (int truncation, minus one below zero), which differs from
// math.Floor only when ln v / ln gamma is a negative integer.
func (m logMapping) index(v float64) int {
	i := math.Log(v) * m.multiplier
	if i >= 0 {
		return int(i)
	}
	return int(i) - 1
}

// value is the representative value of bucket i, in ms.
func (m logMapping) value(i int) float64 {
	return math.Exp(float64(i)/m.multiplier) * (1 + m.accuracy)
}

// buckets counts gaps under mapping: zero gaps apart, the others in a dense
// run of every bucket a gap can reach, mapping.lowest (1 ns, bucket -691)
// to mapping.highest (the longest time.Duration, about 9.2e12 ms, bucket
// 1492): 2,184 counts, 17 KiB, allocated with the first gap counted, so
// that counting and merging never allocate after it. Every pass over the
// counts covers only the span of the non-empty ones. The zero value is
// empty.
type buckets struct {
	zero   int   // gaps of 0 ns
	counts []int // counts[k]: gaps in bucket mapping.lowest+k; nil before the first
	// lo..hi-1 holds every non-empty count; lo == hi when there is none.
	lo, hi int
}

// add counts the gap d >= 0.
func (b *buckets) add(d time.Duration) {
	if d <= 0 {
		b.zero++
		return
	}
	b.addAt(mapping.index(ms(d)), 1)
}

// addAt adds n >= 1 gaps to bucket i, in mapping.lowest..mapping.highest.
func (b *buckets) addAt(i, n int) {
	b.ready()
	k := i - mapping.lowest
	b.counts[k] += n
	b.span(k, k+1)
}

// span widens lo..hi to cover lo2..hi2, a non-empty span.
func (b *buckets) span(lo2, hi2 int) {
	if b.lo == b.hi {
		b.lo, b.hi = lo2, hi2
		return
	}
	b.lo, b.hi = min(b.lo, lo2), max(b.hi, hi2)
}

// ready allocates the counts, once.
func (b *buckets) ready() {
	if b.counts == nil {
		b.counts = make([]int, mapping.highest-mapping.lowest+1)
	}
}

// merge adds every gap of o to b.
func (b *buckets) merge(o *buckets) {
	b.zero += o.zero
	if o.lo == o.hi {
		return
	}
	b.ready()
	to := b.counts[o.lo:o.hi]
	for k, n := range o.counts[o.lo:o.hi] {
		to[k] += n
	}
	b.span(o.lo, o.hi)
}

// reset empties b, keeping its memory.
func (b *buckets) reset() {
	b.zero = 0
	if b.lo < b.hi {
		clear(b.counts[b.lo:b.hi])
	}
	b.lo, b.hi = 0, 0
}

// at is the value, in ms, of the gap of 0-based rank k in ascending order
// (0 <= k < the count of b): 0 among the zero gaps, else its bucket's.
func (b *buckets) at(k int) float64 {
	k -= b.zero
	if k < 0 {
		return 0
	}
	for j, n := range b.counts[b.lo:b.hi] {
		if k < n {
			return mapping.value(mapping.lowest + b.lo + j)
		}
		k -= n
	}
	return mapping.value(mapping.lowest + b.hi - 1)
}

// above counts the gaps whose representative value exceeds t ms.
func (b *buckets) above(t float64) int {
	count := 0
	if 0 > t {
		count = b.zero
	}
	for j, n := range b.counts[b.lo:b.hi] {
		if n > 0 && mapping.value(mapping.lowest+b.lo+j) > t {
			count += n
		}
	}
	return count
}

// each calls f with every non-empty bucket, by ascending index.
func (b *buckets) each(f func(index, count int)) {
	for j, n := range b.counts[b.lo:b.hi] {
		if n > 0 {
			f(mapping.lowest+b.lo+j, n)
		}
	}
}
