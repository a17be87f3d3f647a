package capacity

// The planned contexts of the reference's context distribution (capacity/PROTOCOL.md#context-sampling
// section 5), smallest first. A draw u from random() lands in the first
// bucket of contextBuckets whose cumulative bound is >= u; above the last
// bound it is contextBucketTop.
const (
	contextBucket16K  = 16000
	contextBucket32K  = 32768
	contextBucket64K  = 65536
	contextBucket128K = 131072
	contextBucketTop  = 262144
)

// contextBuckets pairs each cumulative probability bound with its context,
// in order: the one definition of the bounds.
var contextBuckets = [...]struct {
	upTo    float64
	context int
}{
	{0.218, contextBucket16K},
	{0.602, contextBucket32K},
	{0.906, contextBucket64K},
	{0.995, contextBucket128K},
}

// contextForDraw maps one random() draw to its bucket's context.
func contextForDraw(u float64) int {
	for _, b := range contextBuckets {
		if u <= b.upTo {
			return b.context
		}
	}
	return contextBucketTop
}

// sampleContexts returns the n unclamped contexts the reference draws for
// seed: one draw of Python's random.Random(seed).random() per request, in
// index order, mapped to the bucket contexts. It returns nil for n <= 0.
func sampleContexts(seed int64, n int) []int {
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
