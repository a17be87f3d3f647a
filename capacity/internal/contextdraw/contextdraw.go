// Package contextdraw draws the planned contexts of the reference tool's
// context distribution (capacity/PROTOCOL.md#context-sampling): one draw
// of CPython's random.Random(seed).random() per request, reproduced bit
// for bit by a Mersenne Twister (MT19937), mapped to the bucket whose
// cumulative bound it falls under. Sample returns a seed's contexts;
// package capacity clamps them to a run's prompt budget.
package contextdraw

// The planned contexts of the reference's context distribution (capacity/PROTOCOL.md#context-sampling
// section 5), smallest first. A draw u from random() lands in the first
// bucket of buckets whose cumulative bound is >= u; above the last
// bound it is BucketTop.
const (
	Bucket16K  = 16000
	Bucket32K  = 32768
	Bucket64K  = 65536
	Bucket128K = 131072
	BucketTop  = 262144
)

// buckets pairs each cumulative probability bound with its context,
// in order: the one definition of the bounds.
var buckets = [...]struct {
	upTo    float64
	context int
}{
	{0.218, Bucket16K},
	{0.602, Bucket32K},
	{0.906, Bucket64K},
	{0.995, Bucket128K},
}

// ForDraw maps one random() draw to its bucket's context.
func ForDraw(u float64) int {
	for _, b := range buckets {
		if u <= b.upTo {
			return b.context
		}
	}
	return BucketTop
}

// Sample returns the n unclamped contexts the reference draws for
// seed: one draw of Python's random.Random(seed).random() per request, in
// index order, mapped to the bucket contexts. It returns nil for n <= 0.
func Sample(seed int64, n int) []int {
	if n <= 0 {
		return nil
	}
	r := newPyRandom(seed)
	out := make([]int, n)
	for i := range out {
		out[i] = ForDraw(r.float64())
	}
	return out
}
