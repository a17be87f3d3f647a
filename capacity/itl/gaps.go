package itl

import (
	"fmt"
	"slices"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"
)

const (
	// ExactGaps is the most gaps a Stream or a Run keeps exactly (8 bytes
	// each: 512 KiB). While it holds at most this many, every percentile is
	// exact; past it, they come from a sketch with RelativeAccuracy.
	ExactGaps = 1 << 16
	// RelativeAccuracy is the sketch's relative error bound: a sketched
	// percentile q of a distribution whose exact nearest-rank value is x
	// satisfies |q - x| <= RelativeAccuracy * x.
	RelativeAccuracy = 0.01
)

// gapSet is a multiset of gaps: exact up to ExactGaps, then a DDSketch of
// every gap in milliseconds. The zero gapSet is empty and ready.
type gapSet struct {
	exact   []time.Duration    // every gap while !spilled; empty (capacity kept) after
	sketch  *ddsketch.DDSketch // every gap, in ms, while spilled; kept for reuse
	spilled bool
	n       int           // number of gaps
	max     time.Duration // exact largest gap
}

// add records one gap d >= 0.
func (g *gapSet) add(d time.Duration) {
	g.n++
	g.max = max(g.max, d)
	if !g.spilled && len(g.exact) < ExactGaps {
		g.exact = append(g.exact, d)
		return
	}
	g.addSketched(d)
}

// addSketched is the slow path of add, past ExactGaps.
func (g *gapSet) addSketched(d time.Duration) {
	if !g.spilled {
		g.spill()
	}
	sketchAdd(g.sketch, d)
}

// spill moves every exact gap into the sketch.
func (g *gapSet) spill() {
	if g.sketch == nil {
		s, err := ddsketch.LogUnboundedDenseDDSketch(RelativeAccuracy)
		if err != nil { // RelativeAccuracy is a valid constant in (0, 1)
			panic(fmt.Sprintf("itl: building the sketch: %v", err))
		}
		g.sketch = s
	}
	for _, d := range g.exact {
		sketchAdd(g.sketch, d)
	}
	g.exact = g.exact[:0]
	g.spilled = true
}

// sketchAdd adds d to s in milliseconds. A duration is finite, so the only
// errors DDSketch can return (NaN, out of the indexable range of about
// ±1.8e308) cannot happen.
func sketchAdd(s *ddsketch.DDSketch, d time.Duration) {
	if err := s.Add(ms(d)); err != nil {
		panic(fmt.Sprintf("itl: sketching a gap of %v: %v", d, err))
	}
}

// reset empties g, keeping its memory.
func (g *gapSet) reset() {
	g.exact = g.exact[:0]
	if g.sketch != nil {
		g.sketch.Clear()
	}
	g.spilled = false
	g.n = 0
	g.max = 0
}

// merge adds every gap of o to g, leaving o unchanged.
func (g *gapSet) merge(o *gapSet) {
	if o.n == 0 {
		return
	}
	switch {
	case !g.spilled && !o.spilled && g.n+o.n <= ExactGaps:
		g.exact = append(g.exact, o.exact...)
	case o.spilled:
		if !g.spilled {
			g.spill()
		}
		if err := g.sketch.MergeWith(o.sketch); err != nil { // both use RelativeAccuracy
			panic(fmt.Sprintf("itl: merging sketches: %v", err))
		}
	default:
		if !g.spilled {
			g.spill()
		}
		for _, d := range o.exact {
			sketchAdd(g.sketch, d)
		}
	}
	g.n += o.n
	g.max = max(g.max, o.max)
}

// rank returns the 1-based nearest-rank index of percentile perMille/10 of n
// samples: ceil(perMille*n/1000), at least 1.
func rank(perMille, n int) int {
	return max((perMille*n+999)/1000, 1)
}

// prepare readies g for at: it sorts the exact gaps (their order carries no
// meaning).
func (g *gapSet) prepare() {
	if !g.spilled {
		slices.Sort(g.exact)
	}
}

// at returns, in milliseconds, the gap at 1-based rank r (1 <= r <= g.n) of
// the ascending order; g must be prepared. Exact gaps give it exactly; the
// sketch gives it within RelativeAccuracy, and never above the exact max.
func (g *gapSet) at(r int) float64 {
	if !g.spilled {
		return ms(g.exact[r-1])
	}
	// KeyAtRank(k) is the bucket holding the sample of 0-based rank k
	// among the positive values: the first whose cumulative count exceeds
	// k. Counts are whole numbers, exact in float64 up to 2^53.
	k := float64(r-1) - g.sketch.GetZeroCount()
	if k < 0 {
		return 0
	}
	v := g.sketch.Value(g.sketch.GetPositiveValueStore().KeyAtRank(k))
	return min(v, ms(g.max))
}

// above counts the gaps longer than threshold nanoseconds; g must be
// prepared. Exact gaps are counted exactly; sketched ones by their bucket's
// representative value.
func (g *gapSet) above(threshold float64) int {
	if !g.spilled {
		// First index whose gap exceeds the threshold, by bisection.
		lo, hi := 0, len(g.exact)
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if float64(g.exact[mid]) > threshold {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return len(g.exact) - lo
	}
	if float64(g.max) <= threshold {
		return 0
	}
	t := threshold / 1e6
	var count float64
	g.sketch.ForEach(func(value, c float64) bool {
		if value > t {
			count += c
		}
		return false
	})
	return int(count)
}
