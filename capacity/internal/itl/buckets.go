package itl

import (
	"math"
	"slices"
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
// RelativeAccuracy as sketches-go computes them.
type logMapping struct {
	gamma      float64 // (1+a)/(1-a)
	multiplier float64 // 1/ln gamma
	accuracy   float64 // 1 - 2/(1+gamma): a, as rounded by sketches-go
}

// mapping is the one mapping of this package. It is set at initialization
// and never changed.
var mapping = newLogMapping(RelativeAccuracy)

func newLogMapping(a float64) logMapping {
	gamma := (1 + a) / (1 - a)
	return logMapping{gamma: gamma, multiplier: 1 / math.Log(gamma), accuracy: 1 - 2/(1+gamma)}
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
// run of buckets from index offset on. Gaps of 1 ns (1e-6 ms, bucket -691)
// to the longest time.Duration (about 9.2e12 ms, bucket 1492) span at most
// 2,184 buckets; the zero value is empty.
type buckets struct {
	zero   int   // gaps of 0 ns
	offset int   // the index of counts[0]
	counts []int // counts[k]: gaps in bucket offset+k
}

// add counts the gap d >= 0.
func (b *buckets) add(d time.Duration) {
	if d <= 0 {
		b.zero++
		return
	}
	b.addAt(mapping.index(ms(d)), 1)
}

// addAt adds n >= 1 gaps to bucket i.
func (b *buckets) addAt(i, n int) {
	b.cover(i, i)
	b.counts[i-b.offset] += n
}

// cover grows counts, with empty buckets, to reach buckets lo..hi.
func (b *buckets) cover(lo, hi int) {
	if len(b.counts) == 0 {
		b.offset = lo
		b.counts = append(b.counts, make([]int, hi-lo+1)...)
		return
	}
	if lo < b.offset {
		b.counts = slices.Insert(b.counts, 0, make([]int, b.offset-lo)...)
		b.offset = lo
	}
	if top := b.offset + len(b.counts) - 1; hi > top {
		b.counts = append(b.counts, make([]int, hi-top)...)
	}
}

// merge adds every gap of o to b.
func (b *buckets) merge(o *buckets) {
	b.zero += o.zero
	if len(o.counts) == 0 {
		return
	}
	b.cover(o.offset, o.offset+len(o.counts)-1)
	to := b.counts[o.offset-b.offset:]
	for k, n := range o.counts {
		to[k] += n
	}
}

// reset empties b, keeping its memory.
func (b *buckets) reset() {
	b.zero, b.offset = 0, 0
	b.counts = b.counts[:0]
}

// at is the value, in ms, of the gap of 0-based rank k in ascending order
// (0 <= k < the count of b): 0 among the zero gaps, else its bucket's.
func (b *buckets) at(k int) float64 {
	k -= b.zero
	if k < 0 {
		return 0
	}
	for j, n := range b.counts {
		if k < n {
			return mapping.value(b.offset + j)
		}
		k -= n
	}
	return mapping.value(b.offset + len(b.counts) - 1)
}

// above counts the gaps whose representative value exceeds t ms.
func (b *buckets) above(t float64) int {
	count := 0
	if 0 > t {
		count = b.zero
	}
	for j, n := range b.counts {
		if n > 0 && mapping.value(b.offset+j) > t {
			count += n
		}
	}
	return count
}

// each calls f with every non-empty bucket, by ascending index.
func (b *buckets) each(f func(index, count int)) {
	for j, n := range b.counts {
		if n > 0 {
			f(b.offset+j, n)
		}
	}
}
