package client

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/h1"
	"github.com/anvilbench/anvil/capacity/internal/pipenet"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// faultOutcome is what the run records of a request a fault ended: its
// classification and which of its phases were reached.
type faultOutcome struct {
	Class                     artifact.FailureClass
	ErrType                   string
	Reused, Retried           bool
	Connect, Wrote, FirstByte bool
}

func faultOf(ex *Exchange) faultOutcome {
	return faultOutcome{Class: ex.class, ErrType: ex.errType, Reused: ex.reused, Retried: ex.retried,
		Connect: ex.connectMS != nil, Wrote: ex.wroteMS != nil, FirstByte: ex.firstByteMS != nil}
}

// sameFaults compares what each transport recorded with want. net/http
// calls WroteRequest on its writer goroutine after the last write of
// the body, which races the answer its reader hands over: when the
// answer won, the request's phases lack wrote_request_ms although the
// server read it whole. h1 writes, then reads, on one goroutine, and
// always has it.
func sameFaults(t *testing.T, want faultOutcome, got map[string]faultOutcome) {
	t.Helper()
	if std := got["net/http"]; std.FirstByte && !std.Wrote {
		std.Wrote = true
		got["net/http"] = std
	}
	if diff := cmp.Diff(map[string]faultOutcome{"net/http": want, "h1": want}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// runTransports are the two transports a run without Target.HTTPClient
// could send over: net/http's, and h1's over a fallback like it, each
// under the connection rule watching its dials, as Run does.
func runTransports(t *testing.T, setup func(*http.Transport)) map[string]*http.Client {
	clients := map[string]*http.Client{}
	for _, name := range []string{"net/http", "h1"} {
		own := &http.Transport{MaxIdleConnsPerHost: 4}
		if setup != nil {
			setup(own)
		}
		var rt http.RoundTripper = own
		if name == "h1" {
			h := h1.New(own)
			t.Cleanup(h.CloseIdleConnections)
			rt = h
		}
		t.Cleanup(own.CloseIdleConnections)
		clients[name], _ = WithConnectionRule(&http.Client{Transport: rt}, own)
	}
	return clients
}

// streamHead is the head of a streamed answer, chunked.
const streamHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"

// firstEvent is the first event of a stream, one chunk.
var firstEvent = func() string {
	e := "data: {\"choices\":[{\"delta\":{\"content\":\"hel\"}}]}\n\n"
	return fmt.Sprintf("%x\r\n%s\r\n", len(e), e)
}()

// reset makes the server's close of c a reset.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
}

// TestH1FaultsAsNetHTTP: every fault a server's socket can show a
// request (closed or reset before the answer, on a fresh or a reused
// connection; reset or cut inside the body; a bad status line; nothing
// listening) is recorded the same over the h1 transport as over
// net/http's: the same failure class and error_type, and the same phases
// reached.
func TestH1FaultsAsNetHTTP(t *testing.T) {
	tests := []struct {
		name   string
		reused bool // a good answer comes first, on the same connection
		script func(c net.Conn) bool
		want   faultOutcome
	}{
		{name: "closed before answering", script: func(net.Conn) bool { return false },
			want: faultOutcome{Class: artifact.FailureRequestError, ErrType: ErrorTypeEOF, Connect: true, Wrote: true}},
		{name: "kept-alive closed before answering", reused: true, script: func(net.Conn) bool { return false },
			want: faultOutcome{Class: artifact.FailureRequestError, ErrType: ErrorTypeEOF, Reused: true, Wrote: true}},
		{name: "reset before answering", script: func(c net.Conn) bool { reset(c); return false },
			want: faultOutcome{Class: artifact.FailureRequestError, ErrType: ErrorTypeConnectionReset, Connect: true, Wrote: true}},
		{name: "reset mid-body", script: func(c net.Conn) bool {
			fmt.Fprint(c, streamHead+firstEvent)
			reset(c)
			return false
		}, want: faultOutcome{Class: artifact.FailureStreamValidation, ErrType: ErrorTypeConnectionReset, Connect: true, Wrote: true, FirstByte: true}},
		{name: "truncated chunked body", script: func(c net.Conn) bool {
			fmt.Fprint(c, streamHead+firstEvent+"ff\r\ndata: {")
			return false
		}, want: faultOutcome{Class: artifact.FailureStreamValidation, ErrType: ErrorTypeEOF, Connect: true, Wrote: true, FirstByte: true}},
		{name: "cut content-length body", script: func(c net.Conn) bool {
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 1000\r\n\r\ndata: {")
			return false
		}, want: faultOutcome{Class: artifact.FailureStreamValidation, ErrType: ErrorTypeEOF, Connect: true, Wrote: true, FirstByte: true}},
		{name: "bad status line", script: func(c net.Conn) bool {
			fmt.Fprint(c, "HTTP/1.1 abc OK\r\n\r\n")
			return false
		}, want: faultOutcome{Class: artifact.FailureRequestError, ErrType: ErrorTypeNetwork, Connect: true, Wrote: true, FirstByte: true}},
		{name: "error status", script: func(c net.Conn) bool {
			fmt.Fprint(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy")
			return true
		}, want: faultOutcome{Class: artifact.FailureHTTPError, ErrType: ErrorTypeHTTPStatus, Connect: true, Wrote: true, FirstByte: true}},
		{name: "refused", want: faultOutcome{Class: artifact.FailureRequestError, ErrType: ErrorTypeConnectionRefused}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			base := "http://" + ln.Addr().String() + "/v1"
			if tt.script == nil {
				require.NoError(t, ln.Close())
			} else {
				wiretest.StartRaw(t, ln, func(c net.Conn, n int, _ *http.Request) bool {
					if tt.reused && n == 1 {
						wiretest.AnswerStream(c)
						return true
					}
					return tt.script(c)
				})
			}
			got := map[string]faultOutcome{}
			for name, hc := range runTransports(t, nil) {
				cl := testClient(t, Config{BaseURL: base, HTTPClient: hc, Checks: Checks{MaxTokens: 8}})
				if tt.reused {
					ex := &Exchange{}
					cl.Send(t.Context(), promptBody(t, 8), ex)
					require.Empty(t, ex.class, ex.message)
				}
				ex := &Exchange{}
				cl.Send(t.Context(), promptBody(t, 8), ex)
				got[name] = faultOf(ex)
			}
			sameFaults(t, tt.want, got)
		})
	}
}

// TestH1LimitsAsNetHTTP: a run cancelled, Workload.Timeout or
// Workload.StallTimeout running out before the first byte or inside the
// body ends the request at that instant, recorded the same over the h1
// transport as over net/http's.
func TestH1LimitsAsNetHTTP(t *testing.T) {
	const at = 5 * time.Second
	tests := []struct {
		name    string
		midBody bool
		cfg     Config
		cancel  bool
		want    faultOutcome
	}{
		{name: "cancelled before the first byte", cancel: true,
			want: faultOutcome{Class: artifact.FailureCancelled, ErrType: ErrorTypeCancelled, Wrote: true}},
		{name: "cancelled mid-body", cancel: true, midBody: true,
			want: faultOutcome{Class: artifact.FailureCancelled, ErrType: ErrorTypeCancelled, Wrote: true, FirstByte: true}},
		{name: "timeout before the first byte", cfg: Config{Timeout: at},
			want: faultOutcome{Class: artifact.FailureTimeout, ErrType: ErrorTypeTimeout, Wrote: true}},
		{name: "timeout mid-body", cfg: Config{Timeout: at}, midBody: true,
			want: faultOutcome{Class: artifact.FailureTimeout, ErrType: ErrorTypeTimeout, Wrote: true, FirstByte: true}},
		{name: "stall mid-body", cfg: Config{Timeout: time.Hour, StallTimeout: at}, midBody: true,
			want: faultOutcome{Class: artifact.FailureTimeout, ErrType: ErrorTypeStall, Wrote: true, FirstByte: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ln := pipenet.Listen()
				wiretest.StartRaw(t, ln, func(c net.Conn, _ int, _ *http.Request) bool {
					if tt.midBody {
						fmt.Fprint(c, streamHead+firstEvent)
					}
					time.Sleep(time.Minute)
					return false
				})
				got := map[string]faultOutcome{}
				for name, hc := range runTransports(t, func(tr *http.Transport) { tr.DialContext = ln.DialContext }) {
					cfg := tt.cfg
					cfg.HTTPClient, cfg.Checks = hc, Checks{MaxTokens: 8}
					cl := testClient(t, cfg)
					ctx, cancel := context.WithCancel(t.Context())
					if tt.cancel {
						time.AfterFunc(at, cancel)
					}
					ex := &Exchange{}
					cl.Send(ctx, promptBody(t, 8), ex)
					cancel()
					require.Equal(t, at, ex.endAt.Sub(ex.start), name)
					got[name] = faultOf(ex)
				}
				sameFaults(t, tt.want, got)
			})
		})
	}
}
