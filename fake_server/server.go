package fakeserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// inMemoryURL is the URL of a server started with StartInMemory. Only the
// Server's Client can reach it.
const inMemoryURL = "http://fakeserver.invalid"

// Server is a simulated OpenAI-compatible serving engine, started and closed
// like an httptest.Server. It always serves an in-memory transport (see
// Client); Start also serves a real loopback socket at URL. All methods are
// safe for concurrent use; one Server may be shared by parallel tests.
type Server struct {
	// URL is the base URL without the "/v1" suffix:
	// "http://127.0.0.1:port", or "http://fakeserver.invalid" after
	// StartInMemory.
	URL string
	// Listener, when set before Start, is served instead of a new listener
	// on Config.Addr.
	Listener net.Listener

	cfg     Config
	engine  *engine
	traces  traceStore
	arrived atomic.Int64
	mem     *pipeListener
	servers []*http.Server
	serving sync.WaitGroup // Serve goroutines
	active  sync.WaitGroup // chat handlers

	mu      sync.Mutex
	started bool
	closed  bool
	client  *http.Client

	gpuMu   sync.Mutex
	gpuLast gpuScrape // the DCGM endpoint's last scrape (gpu_metrics.go)
}

// New returns a started Server (loopback socket and in-memory transport).
// It panics if cfg is invalid (see Config.Validate) or the socket cannot be
// opened, like httptest.NewServer.
func New(cfg Config) *Server {
	s := NewUnstarted(cfg)
	s.Start()
	return s
}

// NewInMemory returns a Server started with StartInMemory: it opens no
// socket, so it can live inside a testing/synctest bubble.
func NewInMemory(cfg Config) *Server {
	s := NewUnstarted(cfg)
	s.StartInMemory()
	return s
}

// NewUnstarted returns a Server that is not yet serving; set Listener if
// wanted, then call Start or StartInMemory. It panics if cfg is invalid.
func NewUnstarted(cfg Config) *Server {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	cfg = cfg.withDefaults()
	return &Server{cfg: cfg, traces: traceStore{limit: cfg.MaxTraces}}
}

// BaseURL is URL + "/v1", the base an OpenAI client is configured with
// (it appends "/chat/completions" and "/models").
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Config returns the configuration in effect, defaults applied.
func (s *Server) Config() Config { return s.cfg }

// Start serves the in-memory transport and a loopback socket (Listener, or a
// new listener on Config.Addr). It panics if the socket cannot be opened.
func (s *Server) Start() {
	if s.Listener == nil {
		ln, err := net.Listen("tcp", s.cfg.Addr)
		if err != nil {
			panic(fmt.Sprintf("fakeserver: listen on %s: %v", s.cfg.Addr, err))
		}
		s.Listener = ln
	}
	s.start()
	s.URL = "http://" + s.Listener.Addr().String()
	s.serve(s.Listener)
}

// StartInMemory serves only the in-memory transport: no socket, no goroutine
// outside the caller's testing/synctest bubble. URL becomes
// "http://fakeserver.invalid", which only Client reaches.
func (s *Server) StartInMemory() {
	s.start()
	s.URL = inMemoryURL
}

func (s *Server) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		panic("fakeserver: Server started twice")
	}
	s.started = true
	s.engine = newEngine(&s.cfg)
	if s.cfg.SlotPrefill > 0 {
		go s.engine.runSlots()
	} else {
		go s.engine.run()
	}
	s.mem = newPipeListener()
	s.serve(s.mem)
}

func (s *Server) serve(ln net.Listener) {
	hs := &http.Server{Handler: s.Handler(), IdleTimeout: s.cfg.IdleTimeout}
	s.servers = append(s.servers, hs)
	s.serving.Add(1)
	go func() {
		defer s.serving.Done()
		_ = hs.Serve(ln) // returns http.ErrServerClosed on Close
	}()
}

// Close closes the listeners and every connection, waits for the handlers
// and the engine to finish, and closes the Client's idle connections. Traces
// stay readable after Close.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed || !s.started {
		s.closed = true
		s.mu.Unlock()
		return
	}
	s.closed = true
	client := s.client
	s.mu.Unlock()
	for _, hs := range s.servers {
		_ = hs.Close()
	}
	s.serving.Wait()
	s.active.Wait()
	s.engine.stop()
	if client != nil {
		client.CloseIdleConnections()
	}
}

// Client returns an HTTP client whose transport reaches this server in
// memory over net.Pipe, whatever host the request URL names. It works inside
// a testing/synctest bubble when the Server was created in that bubble.
func (s *Server) Client() *http.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client == nil {
		s.client = &http.Client{Transport: &http.Transport{
			DialContext:         s.dialPipe,
			MaxIdleConnsPerHost: 1024,
			DisableCompression:  true,
		}}
	}
	return s.client
}

func (s *Server) dialPipe(ctx context.Context, _, _ string) (net.Conn, error) {
	if s.mem == nil {
		return nil, errors.New("fakeserver: Client used before Start")
	}
	return s.mem.dial(ctx)
}

// pipeListener is a net.Listener whose connections are net.Pipe pairs.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) dial(ctx context.Context) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, fmt.Errorf("fakeserver: dial %s: %w", inMemoryURL, net.ErrClosed)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

var _ net.Listener = (*pipeListener)(nil)

// Accept implements net.Listener.
func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener.
func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr implements net.Listener.
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }

var _ net.Addr = pipeAddr{}

func (pipeAddr) String() string { return "fakeserver.invalid:80" }
