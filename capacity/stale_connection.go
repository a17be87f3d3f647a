package capacity

import (
	"context"
	"crypto/tls"
	"net/http/httptrace"
	"sync/atomic"
	"time"
)

// connTrace records, through net/http/httptrace, what the client needs to
// know of one attempt's connection and phases: when a dial started and
// ended (DNS, TCP and TLS), when the connection was obtained and whether it
// came from the keep-alive pool, when the request was written, and when
// the first response byte arrived. Every moment is monotonic nanoseconds
// after the attempt's t0, -1 until it happens; the transport calls the
// hooks on its own goroutines, hence the atomics.
type connTrace struct {
	dialStart atomic.Int64 // first of DNSStart and ConnectStart
	dialDone  atomic.Int64 // last of ConnectDone and TLSHandshakeDone
	gotConn   atomic.Int64
	wrote     atomic.Int64 // WroteRequest
	firstByte atomic.Int64 // GotFirstResponseByte
	reused    atomic.Bool
	start     time.Time
}

// attach returns ctx carrying a trace that fills ct for one attempt. The
// caller sets ct.start to the attempt's t0 after attaching and before
// issuing the request, so building the trace is never inside the measured
// time.
func (ct *connTrace) attach(ctx context.Context) context.Context {
	for _, m := range []*atomic.Int64{&ct.dialStart, &ct.dialDone, &ct.gotConn, &ct.wrote, &ct.firstByte} {
		m.Store(-1)
	}
	ct.reused.Store(false)
	since := func() int64 { return int64(time.Since(ct.start)) }
	dialStarted := func() { ct.dialStart.CompareAndSwap(-1, since()) }
	dialEnded := func() { ct.dialDone.Store(since()) }
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		DNSStart:         func(httptrace.DNSStartInfo) { dialStarted() },
		ConnectStart:     func(string, string) { dialStarted() },
		ConnectDone:      func(string, string, error) { dialEnded() },
		TLSHandshakeDone: func(tls.ConnectionState, error) { dialEnded() },
		GotConn: func(info httptrace.GotConnInfo) {
			ct.gotConn.Store(since())
			ct.reused.Store(info.Reused)
		},
		WroteRequest:         func(httptrace.WroteRequestInfo) { ct.wrote.CompareAndSwap(-1, since()) },
		GotFirstResponseByte: func() { ct.firstByte.CompareAndSwap(-1, since()) },
	})
}

// responseByte reports whether any response byte arrived.
func (ct *connTrace) responseByte() bool { return ct.firstByte.Load() >= 0 }

// traceMS is a trace moment in ms after t0; nil when it never came.
func traceMS(m *atomic.Int64) *float64 {
	v := m.Load()
	if v < 0 {
		return nil
	}
	ms := monoMS(time.Duration(v))
	return &ms
}

// record copies the attempt's phases into ex. The connect time is the
// dial's (DNS, TCP and TLS) when this attempt's connection was a fresh one
// it dialed; on a reused connection it is nil.
func (ct *connTrace) record(ex *exchange) {
	if ct.gotConn.Load() < 0 {
		return
	}
	ex.gotConnMS, ex.reused = monoMS(time.Duration(ct.gotConn.Load())), ct.reused.Load()
	ex.wroteMS, ex.firstByteMS = traceMS(&ct.wrote), traceMS(&ct.firstByte)
	if s, d := ct.dialStart.Load(), ct.dialDone.Load(); !ex.reused && s >= 0 && d >= s {
		ms := monoMS(time.Duration(d - s))
		ex.connectMS = &ms
	}
}

// staleConnection reports whether a failed attempt is a kept-alive
// connection the server had closed while it was idle, so that the request
// never reached the server: the connection came from the pool, no response
// byte arrived, the request was not interrupted, and the transport's error
// is one an idle close gives (net/http's "server closed idle connection",
// EOF before any response byte, a write error or a reset). Such a failure
// is not the server's: the request is sent once more with t0 taken again.
func staleConnection(ct *connTrace, reqCtx context.Context, err error) bool {
	if !ct.reused.Load() || ct.responseByte() || reqCtx.Err() != nil {
		return false
	}
	switch transportErrorType(unwrapURLError(err)) {
	case ErrorTypeEOF, ErrorTypeConnectionReset, ErrorTypeNetwork:
		return true
	}
	return false
}

// phasesOf is the phase record of a sent request; nil when never sent.
func phasesOf(ex *exchange) *phaseRecord {
	if ex.start.IsZero() {
		return nil
	}
	return &phaseRecord{gotConnMS: ex.gotConnMS, reused: ex.reused, retried: ex.retried,
		connectMS: ex.connectMS, wroteMS: ex.wroteMS, firstByteMS: ex.firstByteMS,
		firstEventMS: sinceMS(ex.start, ex.stream.firstEvent)}
}

// phaseRecord is what the exchange learned of its request's phases, in ms
// after t0 (anvil_go.requests[i].phases).
type phaseRecord struct {
	gotConnMS    float64
	reused       bool
	retried      bool
	connectMS    *float64 // dial + TLS of a fresh connection
	wroteMS      *float64
	firstByteMS  *float64
	firstEventMS *float64
}
