package capacity

// The planned contexts of the reference's context distribution (capacity/PROTOCOL.md#context-sampling
// section 5), smallest first. A draw u from random() lands in the first
// bucket of contextBuckets whose cumulative bound is >= u; above the last
// bound it is ContextBucketTop.
const (
	ContextBucket16K  = 16000
	ContextBucket32K  = 32768
	ContextBucket64K  = 65536
	ContextBucket128K = 131072
	ContextBucketTop  = 262144
)

// contextBuckets pairs each cumulative probability bound with its context,
// in order: the one definition of the bounds.
var contextBuckets = [...]struct {
	upTo    float64
	context int
}{
	{0.218, ContextBucket16K},
	{0.602, ContextBucket32K},
	{0.906, ContextBucket64K},
	{0.995, ContextBucket128K},
}

// contextForDraw maps one random() draw to its bucket's context.
func contextForDraw(u float64) int {
	for _, b := range contextBuckets {
		if u <= b.upTo {
			return b.context
		}
	}
	return ContextBucketTop
}

// SampleContexts returns the n unclamped contexts the reference draws for
// seed: one draw of Python's random.Random(seed).random() per request, in
// index order, mapped to the bucket contexts. It returns nil for n <= 0.
func SampleContexts(seed int64, n int) []int {
	if n <= 0 {
		return nil
	}
	r := newPyRandom(seed)
	out := make([]int, n)
	for i := range out {
		out[i] = contextForDraw(r.float64())
	}
	return out
}
