package conformance

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

// TestDiscoveryStepBounded: a /props that accepts the request and never
// answers costs the suite's discovery capacity's bound of a native step
// (5 s), not the request timeout, /api/ps is still asked, and the models
// check passes with the window it gave, its notes listing each step.
func TestDiscoveryStepBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var asked []string
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			asked = append(asked, r.Method+" "+r.URL.Path)
			mu.Unlock()
			switch r.URL.Path {
			case "/v1/models":
				_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"tiny:latest","object":"model"}]}`))
			case "/props":
				<-r.Context().Done()
			case "/api/ps":
				_, _ = w.Write([]byte(`{"models":[{"name":"tiny:latest","model":"tiny:latest","context_length":4096}]}`))
			default:
				http.NotFound(w, r)
			}
		})
		start := time.Now()
		s, err := New(t.Context(), Config{
			Target:  capacity.Target{BaseURL: "http://hang.invalid/v1", HTTPClient: pipeClient(t, h)},
			Timeout: time.Minute,
		})
		require.NoError(t, err)
		require.Equal(t, 5*time.Second, time.Since(start), "the hanging /props costs capacity's native step bound, not Config.Timeout")
		require.Equal(t, []string{"GET /v1/models", "GET /props", "GET /api/ps"}, asked)
		v := s.Check(t.Context(), nameModels)
		require.Equal(t, Pass, v.Outcome, "%s %q", v.Reason, v.Notes)
		require.Equal(t, `lists "tiny:latest", context window 4096 advertised by /api/ps`, v.Reason)
		for _, step := range []string{"GET /models: 1 model, no window", "GET /props: timed out after 5s", "GET /api/ps: answered, window 4096"} {
			require.Contains(t, v.Notes, step)
		}
	})
}

// pipeClient serves h over in-memory connections (net.Pipe), so a test
// in a synctest bubble waits on them durably; the server closes with the
// test.
func pipeClient(t *testing.T, h http.Handler) *http.Client {
	l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			c, s := net.Pipe()
			select {
			case l.conns <- s:
				return c, nil
			case <-l.done:
				return nil, net.ErrClosed
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
	}}
}

// pipeListener hands the server ends of pipeClient's connections to
// http.Server.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }
