package client

import (
	"context"
	"crypto/tls"
	"net/http/httptrace"
	"sync"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// connTrace records, through net/http/httptrace, what the client needs to
// know of a request's connection and phases: when a dial started and ended
// (DNS, TCP and TLS), when the connection was obtained and whether it came
// from the keep-alive pool, when the request was completely written, and
// when the first response byte arrived. Every moment is ns after the
// request's t0, -1 until it happens. A request sent again under the
// connection rule (connection_rule.go: by the rule, or by net/http itself
// when the connection it took was closed before anything was written)
// takes a second connection: the first attempt is then kept in failed, and
// every phase is the last attempt's, still after the first attempt's t0.
// The transport calls the hooks on its own goroutines, hence the mutex
// (a handful of calls per request).
type connTrace struct {
	start time.Time

	mu       sync.Mutex
	cur      attemptPhases
	next     attemptPhases // a dial begun while cur already had its connection
	failed   *attemptPhases
	attempts int
	conn     *watchedConn // the last attempt's connection, when one of the run's own
}

// attemptPhases are the moments of one attempt, ns after t0, -1 when not
// reached.
type attemptPhases struct {
	dialStart, dialDone, gotConn, wrote, firstByte, ended int64
	reused                                                bool
}

func unreached() attemptPhases {
	return attemptPhases{dialStart: -1, dialDone: -1, gotConn: -1, wrote: -1, firstByte: -1, ended: -1}
}

// attach returns ctx carrying a trace that fills ct: for the
// ConnectionRule under the request to call from its own (underRule), or
// as the request's httptrace. The caller sets ct.start to t0 after
// attaching and before issuing the request, so building the trace is
// never inside the measured time.
func (ct *connTrace) attach(ctx context.Context, underRule bool) context.Context {
	ct.cur, ct.next, ct.failed, ct.attempts, ct.conn = unreached(), unreached(), nil, 0, nil
	since := func() int64 { return int64(time.Since(ct.start)) }
	// dialing returns the attempt a dial belongs to: the next one when
	// the current attempt already has its connection.
	dialing := func() *attemptPhases {
		if ct.cur.gotConn >= 0 {
			return &ct.next
		}
		return &ct.cur
	}
	dialStarted := func() {
		ct.mu.Lock()
		if a := dialing(); a.dialStart < 0 {
			a.dialStart = since()
		}
		ct.mu.Unlock()
	}
	dialEnded := func() {
		ct.mu.Lock()
		dialing().dialDone = since()
		ct.mu.Unlock()
	}
	trace := &httptrace.ClientTrace{
		DNSStart:         func(httptrace.DNSStartInfo) { dialStarted() },
		ConnectStart:     func(string, string) { dialStarted() },
		ConnectDone:      func(string, string, error) { dialEnded() },
		TLSHandshakeDone: func(tls.ConnectionState, error) { dialEnded() },
		GotConn: func(info httptrace.GotConnInfo) {
			ct.mu.Lock()
			defer ct.mu.Unlock()
			now := since()
			if ct.attempts++; ct.attempts > 1 {
				if ct.failed == nil {
					first := ct.cur
					first.ended = now
					ct.failed = &first
				}
				ct.cur, ct.next = ct.next, unreached()
			}
			ct.cur.gotConn, ct.cur.reused = now, info.Reused
			ct.conn = watchedOf(info.Conn)
		},
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err != nil {
				return // not completely written
			}
			ct.mu.Lock()
			if ct.cur.wrote < 0 {
				ct.cur.wrote = since()
			}
			ct.mu.Unlock()
		},
		GotFirstResponseByte: func() {
			ct.mu.Lock()
			if ct.cur.firstByte < 0 {
				ct.cur.firstByte = ct.arrival(since())
			}
			ct.mu.Unlock()
		},
	}
	if underRule {
		return withRuleTrace(ctx, trace)
	}
	return httptrace.WithClientTrace(ctx, trace)
}

// arrival is the moment, ns after t0, the first response byte reached
// the process, now being the moment the transport saw it: on one of the
// run's own connections its last read's stamp (the kernel's receive time
// where there is one, package rxstamp), as every event of the body is
// stamped, kept between t0 and now; else now. (The request's own write
// is no bound: its stamp is taken when the write returns, after which a
// quick server's answer may already have arrived.)
func (ct *connTrace) arrival(now int64) int64 {
	if ct.conn == nil {
		return now
	}
	return min(max(int64(ct.conn.lastRead().Sub(ct.start)), 0), now)
}

// nsMS is a trace moment in ms after t0; nil when it never came.
func nsMS(v int64) *float64 {
	if v < 0 {
		return nil
	}
	ms := MS(time.Duration(v))
	return &ms
}

// connectMS is the attempt's dial (DNS, TCP and TLS) when its connection
// was a fresh one it dialed; nil on a reused connection.
func (a *attemptPhases) connectMS() *float64 {
	if a.reused || a.dialStart < 0 || a.dialDone < a.dialStart {
		return nil
	}
	return nsMS(a.dialDone - a.dialStart)
}

// record copies the request's phases into ex.
func (ct *connTrace) record(ex *Exchange) {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if f := ct.failed; f != nil {
		ex.retried = true
		ex.failedAttempt = &failedAttempt{gotConnMS: MS(time.Duration(f.gotConn)), reused: f.reused,
			connectMS: f.connectMS(), wroteMS: nsMS(f.wrote), endedMS: MS(time.Duration(f.ended))}
	}
	a := &ct.cur
	if a.gotConn < 0 {
		return
	}
	ex.gotConnMS, ex.reused, ex.conn = MS(time.Duration(a.gotConn)), a.reused, ct.conn
	ex.wroteMS, ex.firstByteMS, ex.connectMS = nsMS(a.wrote), nsMS(a.firstByte), a.connectMS()
}

// failedAttempt is the first attempt of a request sent again
// (anvil_go.requests[i].phases.failed_attempt), in ms after t0.
type failedAttempt struct {
	gotConnMS float64
	reused    bool
	connectMS *float64
	wroteMS   *float64
	endedMS   float64
}

// Phases is the record of the request's connection and phases
// (anvil_go.requests[i].phases), in ms after t0; nil when it was never
// sent.
func (ex *Exchange) Phases() *artifact.Phases {
	if ex.start.IsZero() {
		return nil
	}
	ph := &artifact.Phases{GotConnMS: ex.gotConnMS, Reused: ex.reused, Retried: ex.retried,
		ConnectMS: ex.connectMS, WroteRequestMS: ex.wroteMS, FirstByteMS: ex.firstByteMS,
		FirstEventMS: SinceMS(ex.start, ex.stream.firstEvent)}
	if f := ex.failedAttempt; f != nil {
		ph.FailedAttempt = &artifact.FailedAttempt{GotConnMS: f.gotConnMS, Reused: f.reused, ConnectMS: f.connectMS,
			WroteRequestMS: f.wroteMS, EndedMS: f.endedMS}
	}
	return ph
}

// SinceMS is the milliseconds from a to b; nil when either is zero.
func SinceMS(a, b time.Time) *float64 {
	if a.IsZero() || b.IsZero() {
		return nil
	}
	ms := MS(b.Sub(a))
	return &ms
}

// Rule is the connection rule the client's requests go through, nil when
// its HTTP client has none (a client made for a test).
func (c *Client) Rule() *ConnectionRule {
	r, _ := c.hc.Transport.(*ConnectionRule)
	return r
}
