package itl

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/field"
)

// A Run's gap distribution stored with its result, as the artifact holds
// it ("anvil_go.chunk_timing.distribution", artifact.GapDistribution): what
// the run keeps, and nothing else, so that it can be merged with other
// runs' later (the shards of one workload, each measured by its own
// process). A Run given the distributions of several runs with
// AddDistribution reports the percentiles a single Run given every stream
// would: the exact gaps while their total is at most ExactGaps, else the
// buckets of them all, whose counts are exact integers, so merging loses
// nothing the sketches had.

// Distribution returns the run's gap distribution as the artifact stores
// it, nil when the run has no gap: the exact gaps, ascending, while it
// keeps them, else its sketch. It may reorder the stored gaps (as Result
// does), so it must not run concurrently with other methods.
func (r *Run) Distribution() *artifact.GapDistribution {
	g := &r.gaps
	switch {
	case g.count() == 0:
		return nil
	case !g.spilled:
		g.prepare()
		ns := make([]int64, g.count()) // the zeros first, then the others
		for i, d := range g.exact {
			ns[g.zeros+i] = int64(d)
		}
		return &artifact.GapDistribution{ExactNS: ns}
	}
	s := &artifact.GapSketch{RelativeAccuracy: RelativeAccuracy, Count: g.n, MaxNS: int64(g.max),
		Zero: g.sketch.zero, Bins: make(map[int]int)}
	g.sketch.each(func(index, count int) { s.Bins[index] = count })
	return &artifact.GapDistribution{Sketch: s}
}

// AddDistribution adds a stored distribution to the run's, as Merge adds a
// run's. It changes only the distribution: the run's stall and
// tokens-per-chunk totals belong to the streams and are not stored with
// it. It fails with a *field.Error (Kind ErrInvalidInput) whose Field is
// the member's key within the distribution ("sketch.count"), leaving r
// unchanged, when d is not a distribution a Run could
// have kept: both members set, an exact list longer than ExactGaps, out of
// order or negative, a sketch of another accuracy, whose counts do not add
// up to its count, with a bucket no duration reaches, or whose largest
// bucket cannot hold its max.
func (r *Run) AddDistribution(d *artifact.GapDistribution) error {
	if d == nil {
		return nil
	}
	o, err := storedSet(d)
	if err != nil {
		return err
	}
	r.gaps.merge(o)
	return nil
}

// storedSet checks d and builds the gapSet it describes.
func storedSet(d *artifact.GapDistribution) (*gapSet, error) {
	// The caller names the distribution; the error names its member.
	bad := func(name string, value any, rule string) error {
		return &field.Error{Field: name, Value: value, Rule: rule, Kind: ErrInvalidInput}
	}
	if d.Sketch == nil {
		switch {
		case len(d.ExactNS) > ExactGaps:
			return nil, bad("exact_ns", len(d.ExactNS), fmt.Sprintf("must hold at most ExactGaps = %d gaps", ExactGaps))
		case len(d.ExactNS) > 0 && d.ExactNS[0] < 0:
			return nil, bad("exact_ns[0]", d.ExactNS[0], "must be >= 0")
		case !slices.IsSorted(d.ExactNS):
			return nil, bad("exact_ns", "unsorted", "must be in ascending order")
		}
		zeros := 0
		for zeros < len(d.ExactNS) && d.ExactNS[zeros] == 0 {
			zeros++
		}
		g := &gapSet{zeros: zeros, exact: make([]time.Duration, len(d.ExactNS)-zeros)}
		for i, ns := range d.ExactNS[zeros:] {
			g.exact[i] = time.Duration(ns)
		}
		return g, nil
	}
	s := d.Sketch
	switch {
	case len(d.ExactNS) > 0:
		return nil, bad("exact_ns", len(d.ExactNS), "must be null when sketch is set")
	case s.RelativeAccuracy != RelativeAccuracy:
		return nil, bad("sketch.relative_accuracy", s.RelativeAccuracy, fmt.Sprintf("must be %v, which fixes this version's buckets", RelativeAccuracy))
	case s.Count <= ExactGaps:
		return nil, bad("sketch.count", s.Count, fmt.Sprintf("must exceed ExactGaps = %d (a run sketches only past it)", ExactGaps))
	case s.MaxNS < 0 || s.Zero < 0:
		return nil, bad("sketch", fmt.Sprintf("max_ns %d, zero %d", s.MaxNS, s.Zero), "max_ns and zero must be >= 0")
	}
	set := &gapSet{spilled: true, n: s.Count, max: time.Duration(s.MaxNS)}
	set.sketch.zero = s.Zero
	total := s.Zero
	lowest, highest := mapping.lowest, mapping.highest
	indexes := slices.Sorted(maps.Keys(s.Bins))
	for _, i := range indexes {
		n := s.Bins[i]
		switch {
		case i < lowest || i > highest:
			return nil, bad("sketch.bins", i, fmt.Sprintf("bucket indexes must be in %d..%d, the buckets of 1 ns..%v", lowest, highest, time.Duration(math.MaxInt64)))
		case n < 1:
			return nil, bad(fmt.Sprintf("sketch.bins[%d]", i), n, "must be >= 1 (only non-empty buckets are stored)")
		case n > s.Count-total:
			return nil, bad("sketch.bins", "counts", fmt.Sprintf("zero and bin counts must add up to count = %d", s.Count))
		}
		total += n
		set.sketch.addAt(i, n)
	}
	if total != s.Count {
		return nil, bad("sketch.bins", total, fmt.Sprintf("zero and bin counts must add up to count = %d", s.Count))
	}
	if len(indexes) > 0 {
		if top := indexes[len(indexes)-1]; s.MaxNS <= 0 || mapping.index(ms(time.Duration(s.MaxNS))) != top {
			return nil, bad("sketch.max_ns", s.MaxNS, fmt.Sprintf("must fall in the largest bucket, %d", top))
		}
	} else if s.MaxNS != 0 {
		return nil, bad("sketch.max_ns", s.MaxNS, "must be 0 when every gap is 0")
	}
	return set, nil
}
