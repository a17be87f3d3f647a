package capacity

import (
	"context"
	"net/http/httptrace"
	"sync/atomic"
	"time"
)

// connTrace records, through net/http/httptrace, what the client needs to
// know of one attempt's connection: when it was obtained, whether it came
// from the keep-alive pool, and whether any response byte arrived.
type connTrace struct {
	gotConn   atomic.Int64 // monotonic nanoseconds after t0 of GotConn, -1 before
	reused    atomic.Bool
	firstByte atomic.Bool
	start     time.Time
}

// attach returns ctx carrying a trace that fills ct for an attempt whose t0
// is start.
func (ct *connTrace) attach(ctx context.Context, start time.Time) context.Context {
	ct.start = start
	ct.gotConn.Store(-1)
	ct.reused.Store(false)
	ct.firstByte.Store(false)
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			ct.gotConn.Store(int64(time.Since(ct.start)))
			ct.reused.Store(info.Reused)
		},
		GotFirstResponseByte: func() { ct.firstByte.Store(true) },
	})
}

// staleConnection reports whether a failed attempt is a kept-alive
// connection the server had closed while it was idle, so that the request
// never reached the server: the connection came from the pool, no response
// byte arrived, the request was not interrupted, and the transport's error
// is one an idle close gives (net/http's "server closed idle connection",
// EOF before any response byte, a write error or a reset). Such a failure
// is not the server's: the request is sent once more with t0 taken again.
func staleConnection(ct *connTrace, reqCtx context.Context, err error) bool {
	if !ct.reused.Load() || ct.firstByte.Load() || reqCtx.Err() != nil {
		return false
	}
	switch transportErrorType(unwrapURLError(err)) {
	case ErrorTypeEOF, ErrorTypeConnectionReset, ErrorTypeNetwork:
		return true
	}
	return false
}

// phasesOf is the minimal phase record of a sent request (the connection
// was obtained, reused, retried).
func phasesOf(ex *exchange) *phaseRecord {
	if ex.start.IsZero() {
		return nil
	}
	return &phaseRecord{gotConnMS: ex.gotConnMS, reused: ex.reused, retried: ex.retried}
}

// phaseRecord is what the exchange learned of its request's phases.
type phaseRecord struct {
	gotConnMS float64
	reused    bool
	retried   bool
}
