package steady

// A Log is what a warm-up until steady keeps of its requests to test them
// for a steady window as they go: each one's send and end, in ms on the
// warm-up's clock. The zero value is an empty log.
type Log struct {
	requests  []Request // by warm-up index; End -1 while in flight
	checkedMS float64   // when Steady last tested (0: the start)
	reached   bool
}

// Sent records request k sent at ms.
func (l *Log) Sent(k int, ms float64) {
	for len(l.requests) <= k {
		l.requests = append(l.requests, Request{})
	}
	l.requests[k] = Request{At: ms, Sent: ms, End: -1}
}

// Ended records request k's end at endMS; sentMS, when >= 0, is its send
// as the client stamped it (t0), which replaces the dispatch's; ttft is
// its TTFT when it succeeded (ok).
func (l *Log) Ended(k int, sentMS, endMS float64, ok bool, ttft float64) {
	q := &l.requests[k]
	if sentMS >= 0 {
		q.Sent, q.At = sentMS, sentMS
	}
	q.End = endMS
	if ok {
		q.OK, q.TTFT = true, ttft
	}
}

// Steady tests the requests so far at nowMS with a closed loop's target
// of concurrency, at most once every everyMS from the start; once it reported true it
// always does. It reports whether they have a steady window that reaches
// their last two bins and holds at least half of their bins (a trend the
// test is too weak to see in few bins still leaves MSER cutting half or
// more): the warm-up is over.
func (l *Log) Steady(nowMS, everyMS float64, concurrency int) bool {
	if l.reached || nowMS-l.checkedMS < everyMS {
		return l.reached
	}
	l.checkedMS = nowMS
	in := Input{PhaseMS: nowMS, Load: InFlight, Concurrency: concurrency, Requests: make([]Request, 0, len(l.requests))}
	for _, q := range l.requests {
		if q.End < 0 {
			q.End = nowMS // in flight: busy to now, not yet a completion
		}
		in.Requests = append(in.Requests, q)
	}
	w := Find(in)
	l.reached = w.Found && *w.EndMS >= float64(w.Bins-2)*w.BinMS && *w.EndMS-*w.StartMS >= float64(w.Bins)*w.BinMS/2
	return l.reached
}

// Reached reports whether Steady found the window.
func (l *Log) Reached() bool { return l.reached }
