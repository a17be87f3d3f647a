package capacity

// The reference's context distribution (DESIGN.md section 5): cumulative
// probability bounds and the planned context of each bucket. A draw u from
// random() lands in the first bucket whose bound is >= u; above the last
// bound it is ContextBucketTop.
const (
	ContextBucket16K  = 16000  // u <= 0.218
	ContextBucket32K  = 32768  // u <= 0.602
	ContextBucket64K  = 65536  // u <= 0.906
	ContextBucket128K = 131072 // u <= 0.995
	ContextBucketTop  = 262144 // u > 0.995
)

// contextBuckets pairs each cumulative bound with its context, in order.
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
