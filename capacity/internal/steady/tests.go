package steady

import (
	"math"
	"slices"
)

// mser is the MSER truncation of y (White 1997): the cut d in
// 0..floor(m/2) that minimises the marginal standard error of what is
// left,
//
//	MSER(d) = sum_{i=d}^{m-1} (y_i - mean(y_d..y_{m-1}))^2 / (m-d)^2,
//
// the smallest d on a tie. The sum of squares of each suffix is kept by
// Welford's update from the end, so each d costs O(1) and a constant
// suffix sums to exactly 0 (its ties are exact).
func mser(y []float64) int {
	m := len(y)
	best, bestD := math.Inf(1), 0
	var mean, sse float64
	for i := m - 1; i >= 0; i-- {
		k := float64(m - i)
		delta := y[i] - mean
		mean += delta / k
		sse += delta * (y[i] - mean)
		if i > m/2 {
			continue
		}
		if e := sse / (k * k); e <= best {
			best, bestD = e, i // ties go to the smaller d, reached later
		}
	}
	return bestD
}

// cut is the number of leading bins MSER cuts from the two series of the
// candidate: the larger of the completions' cut and the TTFT's (counted
// over the bins with a TTFT value: a cut of d of its values ends after the
// bin of its d-th value).
func cut(completions, ttft []float64) int {
	d := mser(completions)
	var pos []int
	var vals []float64
	for k, v := range ttft {
		if !math.IsNaN(v) {
			pos, vals = append(pos, k), append(vals, v)
		}
	}
	if dt := mser(vals); dt > 0 {
		d = max(d, pos[dt-1]+1)
	}
	return d
}

// reversed returns y in reverse order, as a new slice.
func reversed(y []float64) []float64 {
	out := slices.Clone(y)
	slices.Reverse(out)
	return out
}

// present returns the values of y that are not NaN, in order.
func present(y []float64) []float64 {
	var out []float64
	for _, v := range y {
		if !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

// mannKendall is the Mann-Kendall trend statistic of y: with S the sum
// over i < j of sign(y_j - y_i) and its variance under no trend
//
//	Var S = (n(n-1)(2n+5) - sum_t t(t-1)(2t+5)) / 18,
//
// t running over the sizes of the groups of tied values, z = (S - sign S)
// / sqrt(Var S), with the continuity correction; 0 when S is 0 or every
// value is tied. |z| >= 1.96 is a trend at the 5 % level, two-sided.
func mannKendall(y []float64) float64 {
	n := len(y)
	s := 0
	for i := range n {
		for j := i + 1; j < n; j++ {
			switch {
			case y[j] > y[i]:
				s++
			case y[j] < y[i]:
				s--
			}
		}
	}
	sorted := slices.Clone(y)
	slices.Sort(sorted)
	ties := 0.0
	for i := 0; i < n; {
		j := i
		for j < n && sorted[j] == sorted[i] {
			j++
		}
		t := float64(j - i)
		ties += t * (t - 1) * (2*t + 5)
		i = j
	}
	nf := float64(n)
	v := (nf*(nf-1)*(2*nf+5) - ties) / 18
	if s == 0 || !(v > 0) {
		return 0
	}
	corrected := float64(s) - math.Copysign(1, float64(s))
	return corrected / math.Sqrt(v)
}

// spread accumulates, per bin of width bin, the time intervals spend in
// it, times a weight: each interval adds its two partial bins directly
// and its whole bins through a difference array, so an interval costs
// O(1) whatever its length.
type spread struct {
	bin         float64
	part, whole []float64 // whole is a difference array, one longer than part
}

func newSpread(n int, bin float64) *spread {
	return &spread{bin: bin, part: make([]float64, n), whole: make([]float64, n+1)}
}

// add spreads [s, e), clipped to the bins, with weight w per ms.
func (p *spread) add(s, e, w float64) {
	n := len(p.part)
	s, e = max(s, 0), min(e, float64(n)*p.bin)
	if !(e > s) {
		return
	}
	ks, ke := int(s/p.bin), min(int(e/p.bin), n)
	if ks >= n {
		return
	}
	if ks == ke {
		p.part[ks] += (e - s) * w
		return
	}
	p.part[ks] += (float64(ks+1)*p.bin - s) * w
	if ke < n {
		p.part[ke] += (e - float64(ke)*p.bin) * w
	}
	if ks+1 < ke {
		p.whole[ks+1] += p.bin * w
		p.whole[ke] -= p.bin * w
	}
}

// total returns the accumulated time per bin.
func (p *spread) total() []float64 {
	out := slices.Clone(p.part)
	run := 0.0
	for k := range out {
		run += p.whole[k]
		out[k] += run
	}
	return out
}
