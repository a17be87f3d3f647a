package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config is what a Client needs to know of its requests. Package capacity
// makes it from a run's Target and Workload; the client knows neither.
type Config struct {
	// BaseURL is the API root as users write it ("http://host:8000/v1",
	// no trailing slash): the measured requests go to BaseURL +
	// Dialect.Path(), the connection warm-up's to BaseURL + "/models".
	BaseURL string
	// HTTPClient sends every request. A run's goes through the connection
	// rule (WithConnectionRule), whose state Rule reports.
	HTTPClient *http.Client
	// Header holds the headers every request carries (Target.Headers); it
	// is copied. APIKey, when not empty, is the credential: the dialect's
	// header of the measured requests, the bearer token of the others.
	Header http.Header
	APIKey string
	// Secrets are scrubbed from every message the client writes (see
	// SecretsOf).
	Secrets Secrets
	// Timeout bounds each request from t0 to the end of its answer
	// (Workload.Timeout). StallTimeout, when in (0, Timeout), bounds the
	// time a request receives nothing (Workload.StallTimeout); otherwise
	// there is no stall limit below Timeout.
	Timeout, StallTimeout time.Duration
	// Checks are the response contracts Evaluate applies.
	Checks Checks
	// Dialect is what the measured requests speak: their route, headers,
	// bodies and the decoding of their answers (nil: ChatCompletions).
	Dialect Dialect
}

// A Client sends the requests of one run and turns each answer into a
// timing row or a failure row. It is safe for concurrent use; the state of
// one request lives in its Exchange.
type Client struct {
	hc      *http.Client
	dialect Dialect
	// dimension is the length of the run's embeddings vectors, set by its
	// first valid answer (0 before): every later answer must have it.
	dimension atomic.Int64
	tmpl      *http.Request // method, URL and headers of every measured request
	base      http.Header   // Config.Header and the credential: every unmeasured request's
	timeout   time.Duration
	stall     time.Duration // 0: no stall limit below timeout
	secrets   Secrets       // scrubbed from every message (Exchange.fail)
	checks    Checks
	// decoders holds the decoders no request is reading, made by the
	// dialect and reused from one request to the next: at most as many as
	// requests were ever in flight at once, never dropped (a sync.Pool
	// empties at every GC, and their buffers would grow again).
	decMu    sync.Mutex
	decoders []Decoder

	modelsURL string // GET {BaseURL}/models: the connection warm-up's request
	// underRule: hc sends through a ConnectionRule, which calls a request's
	// connTrace from its own trace (withRuleTrace).
	underRule bool
}

// New returns the client of cfg. Its one error is a base URL no request
// can be made for.
func New(cfg Config) (*Client, error) {
	d := cfg.Dialect
	if d == nil {
		d = ChatCompletions
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	tmpl, err := http.NewRequest(http.MethodPost, base+d.Path(), nil)
	if err != nil {
		return nil, fmt.Errorf("capacity: Target.BaseURL: %w", UnwrapURLError(err))
	}
	header := http.Header{}
	for k, vs := range cfg.Header {
		for _, v := range vs {
			header.Add(k, v)
		}
	}
	tmpl.Header = header.Clone()
	tmpl.Header.Set("Content-Type", jsonType)
	d.Header(tmpl.Header, cfg.APIKey)
	if cfg.APIKey != "" {
		header.Set("Authorization", "Bearer "+cfg.APIKey) // the unmeasured requests' credential
	}
	if tmpl.Header.Get("Accept-Encoding") == "" {
		// An uncompressed stream: a compressor on the server buffers events,
		// which would delay their arrival stamps (Go's transport otherwise
		// asks for gzip on its own). Config.Header may still ask for one.
		tmpl.Header.Set("Accept-Encoding", "identity")
	}
	c := &Client{hc: cfg.HTTPClient, dialect: d, tmpl: tmpl, base: header, timeout: cfg.Timeout, secrets: cfg.Secrets,
		checks: cfg.Checks, modelsURL: base + "/models"}
	if c.hc == nil {
		c.hc = http.DefaultClient
	}
	_, c.underRule = c.hc.Transport.(*ConnectionRule)
	if cfg.StallTimeout > 0 && cfg.StallTimeout < cfg.Timeout {
		c.stall = cfg.StallTimeout
	}
	return c, nil
}

// takeDecoder returns a decoder ready for an answer; giveDecoder takes it
// back once the answer is read.
func (c *Client) takeDecoder() Decoder {
	c.decMu.Lock()
	var dec Decoder
	if n := len(c.decoders); n > 0 {
		dec, c.decoders = c.decoders[n-1], c.decoders[:n-1]
	}
	c.decMu.Unlock()
	if dec == nil {
		dec = c.dialect.NewDecoder()
	}
	dec.Reset()
	return dec
}

// giveDecoder gives back a decoder takeDecoder returned.
func (c *Client) giveDecoder(dec Decoder) {
	c.decMu.Lock()
	c.decoders = append(c.decoders, dec)
	c.decMu.Unlock()
}

// Dialect is what the client's measured requests speak (Config.Dialect).
func (c *Client) Dialect() Dialect { return c.dialect }

// Scrub returns text without any of the client's secrets (Config.Secrets).
func (c *Client) Scrub(text string) string { return c.secrets.Scrub(text) }

// NewRequest returns an unmeasured request to url (a GET without body, or
// a POST of a JSON body) carrying Config.Header, the bearer token and
// Accept: application/json: the model probe's, the discovery's, the
// tokenizer's and the connection warm-up's requests. Do sends it.
func (c *Client) NewRequest(ctx context.Context, method, url string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, err
	}
	req.Header = c.base.Clone()
	req.Header.Set("Accept", jsonType)
	if body != nil {
		req.Header.Set("Content-Type", jsonType)
	}
	return req, nil
}

// Do sends an unmeasured request through the client's HTTP client (and so
// its connection rule).
func (c *Client) Do(req *http.Request) (*http.Response, error) { return c.hc.Do(req) }

// Transport is the transport under the client's connection rule, for what
// asks about the transport's own settings (TransportHint).
func (c *Client) Transport() http.RoundTripper { return baseTransport(c.hc.Transport) }
