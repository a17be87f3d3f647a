package reporters

import "math"

// ptrOrNaN returns *p, or NaN when p is nil (a value the artifact did not
// record).
func ptrOrNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// positive returns v, or NaN when v <= 0 (a value the artifact did not
// record).
func positive(v float64) float64 {
	if v > 0 {
		return v
	}
	return math.NaN()
}

// cmpOrNaN returns a, or b when a is NaN.
func cmpOrNaN(a, b float64) float64 {
	if math.IsNaN(a) {
		return b
	}
	return a
}
