package arrival

import "time"

// Offered returns the request rate a schedule plans, in requests per
// second: the number of intervals over the span they cover,
//
//	(len(schedule) - 1) / (max(schedule) - min(schedule)).
//
// Counting n-1 intervals, not n requests, makes the rate of a schedule
// whose intervals all equal 1/λ exactly λ; n/span would overstate it by a
// factor n/(n-1). For a schedule from Schedule the span is the last offset,
// since the first is 0 and the offsets are non-decreasing; the order of the
// offsets does not matter.
//
// With fewer than two offsets there is no interval and Offered returns 0.
// With two or more offsets at one instant the rate is unbounded and
// Offered returns +Inf.
func Offered(schedule []time.Duration) float64 {
	if len(schedule) < 2 {
		return 0
	}
	lo, hi := schedule[0], schedule[0]
	for _, d := range schedule[1:] {
		lo, hi = min(lo, d), max(hi, d)
	}
	return perSecond(len(schedule)-1, hi-lo)
}

// Achieved returns the request rate a run achieved from the times its
// requests were actually sent, with Offered's definition: the number of
// intervals, len(sent)-1, over the span from the earliest to the latest
// send time (so the order of sent does not matter; times from time.Now
// are compared by their monotonic clock readings). Comparing it with the
// Offered rate of the schedule shows whether the load generator kept up.
// Fewer than two times give 0, and two or more at one instant +Inf.
func Achieved(sent []time.Time) float64 {
	if len(sent) < 2 {
		return 0
	}
	lo, hi := sent[0], sent[0]
	for _, t := range sent[1:] {
		if t.Before(lo) {
			lo = t
		}
		if t.After(hi) {
			hi = t
		}
	}
	return perSecond(len(sent)-1, hi.Sub(lo))
}

// perSecond returns intervals / span in events per second; a zero span
// gives +Inf.
func perSecond(intervals int, span time.Duration) float64 {
	return float64(intervals) / span.Seconds()
}
