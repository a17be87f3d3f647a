package itl

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Gaps is the gap distribution of a Run as plain values: what the run keeps,
// and nothing else, so it can be stored with a run's result and merged with
// other runs' later (the shards of one workload, each measured by its own
// process). A Run given the Gaps of several runs with AddGaps reports the
// percentiles a single Run given every stream would: the exact gaps while
// their total is at most ExactGaps, else the sketch of them all, whose
// bucket counts are exact integers, so merging loses nothing the sketch had.
//
// Exactly one of Exact and Sketch is set for a run with gaps; both are
// empty for a run without any.
type Gaps struct {
	// Exact holds every gap in ascending order while the run keeps them
	// exactly (at most ExactGaps of them).
	Exact []time.Duration
	// Sketch is the run's sketch once it held more than ExactGaps gaps.
	Sketch *SketchedGaps
}

// SketchedGaps is the content of a run's sketch: the gaps in milliseconds
// in logarithmic buckets of relative accuracy RelativeAccuracy
// (buckets.go), plus what the run keeps exactly beside it.
type SketchedGaps struct {
	Count int           // number of gaps
	Max   time.Duration // the largest gap, exact
	// Zero is the number of gaps of 0 ns, which no bucket holds.
	Zero int
	// Bins are the non-empty buckets, by ascending index.
	Bins []Bin
}

// Bin is one bucket of a sketch: the gaps whose value v (in ms) has
// floor(ln v / ln gamma) = Index, gamma = (1+RelativeAccuracy)/(1-RelativeAccuracy),
// the logarithmic mapping of a DDSketch (buckets.go).
type Bin struct {
	Index int
	Count int
}

// Count returns the number of gaps in g.
func (g Gaps) Count() int {
	if g.Sketch != nil {
		return g.Sketch.Count
	}
	return len(g.Exact)
}

// Gaps returns the run's gap distribution. It may reorder the stored gaps
// (as Result does), so it must not run concurrently with other methods.
func (r *Run) Gaps() Gaps {
	g := &r.gaps
	if !g.spilled {
		g.prepare()
		return Gaps{Exact: slices.Clone(g.exact)}
	}
	s := &SketchedGaps{Count: g.n, Max: g.max, Zero: g.sketch.zero}
	g.sketch.each(func(index, count int) { s.Bins = append(s.Bins, Bin{Index: index, Count: count}) })
	return Gaps{Sketch: s}
}

// AddGaps adds a stored distribution to the run's, as Merge adds a run's.
// It changes only the distribution: the run's stall and tokens-per-chunk
// totals belong to the streams and are not in Gaps. It fails with an
// *field.Error (Kind ErrInvalidInput), leaving r unchanged, when g is not a distribution a Run
// could have kept: both members set, an exact list longer than ExactGaps,
// out of order or negative, a sketch whose counts do not add up to Count
// or whose largest bucket cannot hold Max.
func (r *Run) AddGaps(g Gaps) error {
	o, err := g.set()
	if err != nil {
		return err
	}
	r.gaps.merge(o)
	return nil
}

// set checks g and builds the gapSet it describes.
func (g Gaps) set() (*gapSet, error) {
	bad := func(name string, value any, rule string) error {
		return inputError(name, value, rule)
	}
	if g.Sketch == nil {
		switch {
		case len(g.Exact) > ExactGaps:
			return nil, bad("Gaps.Exact", len(g.Exact), fmt.Sprintf("must hold at most ExactGaps = %d gaps", ExactGaps))
		case len(g.Exact) > 0 && g.Exact[0] < 0:
			return nil, bad("Gaps.Exact[0]", g.Exact[0], "must be >= 0")
		case !slices.IsSorted(g.Exact):
			return nil, bad("Gaps.Exact", "unsorted", "must be in ascending order")
		}
		return &gapSet{exact: g.Exact}, nil
	}
	s := g.Sketch
	if len(g.Exact) > 0 {
		return nil, bad("Gaps.Exact", len(g.Exact), "must be empty when Gaps.Sketch is set")
	}
	if s.Count <= ExactGaps {
		return nil, bad("Gaps.Sketch.Count", s.Count, fmt.Sprintf("must exceed ExactGaps = %d (a run sketches only past it)", ExactGaps))
	}
	if s.Max < 0 || s.Zero < 0 {
		return nil, bad("Gaps.Sketch", fmt.Sprintf("max %v, zero %d", s.Max, s.Zero), "max and zero must be >= 0")
	}
	set := &gapSet{spilled: true, n: s.Count, max: s.Max}
	set.sketch.zero = s.Zero
	total := s.Zero
	lowest, highest := mapping.index(ms(1)), mapping.index(ms(math.MaxInt64))
	for i, b := range s.Bins {
		if b.Count < 1 || i > 0 && b.Index <= s.Bins[i-1].Index {
			return nil, bad(fmt.Sprintf("Gaps.Sketch.Bins[%d]", i), fmt.Sprintf("%+v", b), "counts must be >= 1 and indexes ascending")
		}
		if b.Index < lowest || b.Index > highest {
			return nil, bad(fmt.Sprintf("Gaps.Sketch.Bins[%d].Index", i), b.Index,
				fmt.Sprintf("must be in %d..%d, the buckets of 1 ns..%v", lowest, highest, time.Duration(math.MaxInt64)))
		}
		if b.Count > s.Count-total {
			return nil, bad("Gaps.Sketch.Bins", "counts", fmt.Sprintf("must add up to Count = %d", s.Count))
		}
		total += b.Count
		set.sketch.addAt(b.Index, b.Count)
	}
	if total != s.Count {
		return nil, bad("Gaps.Sketch.Bins", total, fmt.Sprintf("zero and bin counts must add up to Count = %d", s.Count))
	}
	if len(s.Bins) > 0 {
		if top := s.Bins[len(s.Bins)-1].Index; s.Max <= 0 || mapping.index(ms(s.Max)) != top {
			return nil, bad("Gaps.Sketch.Max", s.Max, fmt.Sprintf("must fall in the largest bucket, %d", top))
		}
	} else if s.Max != 0 {
		return nil, bad("Gaps.Sketch.Max", s.Max, "must be 0 when every gap is 0")
	}
	return set, nil
}
