package itl

import (
	"slices"
	"time"
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

// gapSet is a multiset of gaps: exact up to ExactGaps, then logarithmic
// buckets of every gap in milliseconds (buckets.go). The zero gapSet is
// empty and ready. The exact path stores each gap above 0 and counts the
// gaps of 0 ns apart (events that one read completed share its stamp, so a
// fast stream's gaps are mostly 0), so that add stays a compare and a
// count or an append, and sorting and storing handle only the others; its
// count and maximum are derived when asked for.
type gapSet struct {
	exact   []time.Duration // every gap > 0 while !spilled; empty (capacity kept) after
	zeros   int             // the gaps of 0 while !spilled; 0 after (the sketch counts them)
	sketch  buckets         // every gap while spilled; empty (memory kept) before
	spilled bool
	n       int           // number of gaps, while spilled
	max     time.Duration // exact largest gap, while spilled
}

// add records one gap d >= 0.
func (g *gapSet) add(d time.Duration) {
	if len(g.exact)+g.zeros < ExactGaps && !g.spilled {
		if d == 0 {
			g.zeros++
		} else {
			g.exact = append(g.exact, d)
		}
		return
	}
	g.addSketched(d)
}

// addSketched is the slow path of add, past ExactGaps.
func (g *gapSet) addSketched(d time.Duration) {
	if !g.spilled {
		g.spill()
	}
	g.n++
	g.max = max(g.max, d)
	g.sketch.add(d)
}

// count returns the number of gaps.
func (g *gapSet) count() int {
	if g.spilled {
		return g.n
	}
	return len(g.exact) + g.zeros
}

// largest returns the largest gap, 0 when there is none.
func (g *gapSet) largest() time.Duration {
	if g.spilled || len(g.exact) == 0 {
		return g.max // 0 when empty
	}
	return slices.Max(g.exact)
}

// spill moves every exact gap into the sketch.
func (g *gapSet) spill() {
	g.n, g.max = g.count(), g.largest()
	g.sketch.zero += g.zeros
	for _, d := range g.exact {
		g.sketch.add(d)
	}
	g.exact, g.zeros = g.exact[:0], 0
	g.spilled = true
}

// reset empties g, keeping its memory.
func (g *gapSet) reset() {
	g.exact, g.zeros = g.exact[:0], 0
	g.sketch.reset()
	g.spilled = false
	g.n = 0
	g.max = 0
}

// merge adds every gap of o to g, leaving o unchanged.
func (g *gapSet) merge(o *gapSet) {
	on := o.count()
	switch {
	case on == 0:
		return
	case !g.spilled && !o.spilled && g.count()+on <= ExactGaps:
		g.exact = append(g.exact, o.exact...)
		g.zeros += o.zeros
		return
	}
	if !g.spilled {
		g.spill()
	}
	if o.spilled {
		g.sketch.merge(&o.sketch)
	} else {
		g.sketch.zero += o.zeros
		for _, d := range o.exact {
			g.sketch.add(d)
		}
	}
	g.n += on
	g.max = max(g.max, o.largest())
}

// rank returns the 1-based nearest-rank index of percentile perMille/10 of n
// samples: ceil(perMille*n/1000), at least 1.
func rank(perMille, n int) int {
	return max((perMille*n+999)/1000, 1)
}

// prepare readies g for at: it sorts the exact gaps above 0 (their order
// carries no meaning; the zeros come first).
func (g *gapSet) prepare() {
	if !g.spilled {
		slices.Sort(g.exact)
	}
}

// at returns, in milliseconds, the gap at 1-based rank r (1 <= r <= g.count()) of
// the ascending order; g must be prepared. Exact gaps give it exactly; the
// sketch gives it within RelativeAccuracy, and never above the exact max.
func (g *gapSet) at(r int) float64 {
	if !g.spilled {
		if r <= g.zeros {
			return 0
		}
		return ms(g.exact[r-1-g.zeros])
	}
	return min(g.sketch.at(r-1), ms(g.max)) // spilled: g.max is current
}

// nanos is at in nanoseconds, exact on the exact path (where at's
// conversion to milliseconds and back could round).
func (g *gapSet) nanos(r int) float64 {
	if !g.spilled {
		if r <= g.zeros {
			return 0
		}
		return float64(g.exact[r-1-g.zeros])
	}
	return g.at(r) * 1e6
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
		n := len(g.exact) - lo
		if 0 > threshold {
			n += g.zeros
		}
		return n
	}
	if float64(g.max) <= threshold { // spilled: g.max is current
		return 0
	}
	return g.sketch.above(threshold / 1e6)
}
