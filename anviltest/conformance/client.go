package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
)

// maxBodyExcerpt bounds the bytes of a non-stream answer the checks read.
const maxBodyExcerpt = 64 << 10

// maxCapture bounds the characters of content and reasoning one stream
// observation keeps.
const maxCapture = 64 << 10

// prober sends the suite's requests to one target and remembers what every
// check may share: the discovery and the base exchange.
type prober struct {
	base  string // BaseURL without a trailing slash
	where string // BaseURL as recorded: no userinfo, query or fragment
	model string // the model sent
	// disc is what capacity.Discover found (the model list, the windows,
	// the slots and where each came from), discErr its error.
	disc    capacity.Discovery
	discErr error
	hc      *http.Client
	headers http.Header
	apiKey  string
	scrub   func(string) string // capacity's credential scrubber for this target
	timeout time.Duration
	nonce   string
	target  capacity.Target
	run     func(ctx context.Context, t capacity.Target, w capacity.Workload) (*artifact.Report, error)
	extra   map[string]any
	w       *wire // the API the checks speak (Target.API)

	baseOnce     sync.Once
	baseQuestion string // the base exchange's one user message
	baseSeen     *streamSeen
}

// newProber resolves the target (BaseURL, headers, key, client), finds the
// model to send (Target.Model, else the first id of GET /models) and the
// context window as capacity.Run does (capacity.Discover, through the
// suite's client, each request within the request timeout) and draws the
// run's nonce.
func newProber(ctx context.Context, c Config) (*prober, error) {
	rt, err := c.Target.Resolved()
	if err != nil {
		return nil, fmt.Errorf("conformance: %w", err)
	}
	w, ok := wireOf(rt.API)
	if !ok {
		return nil, fmt.Errorf("conformance: Target.API %q: want chat, responses, messages, completions or embeddings", rt.API)
	}
	p := &prober{
		w:       w,
		base:    rt.BaseURL,
		where:   redactURL(rt.BaseURL),
		model:   rt.Model,
		hc:      rt.HTTPClient,
		headers: rt.Headers.Clone(),
		apiKey:  c.APIKey,
		timeout: c.Timeout,
		target:  c.Target,
		run:     c.Run,
		extra:   rt.ExtraBody,
	}
	if p.headers == nil {
		p.headers = http.Header{}
	}
	if p.apiKey != "" {
		p.headers.Set("Authorization", "Bearer "+p.apiKey)
	}
	p.scrub = rt.Redactor(p.apiKey)
	if p.hc == nil {
		p.hc = &http.Client{
			Transport:     http.DefaultTransport.(*http.Transport).Clone(),
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	// The module's one connection rule (capacity/PROTOCOL.md#connection-rule):
	// no check is measured, so a request that met a kept-alive connection
	// the server had closed is sent again on a fresh one, and a server
	// that closes every connection it answered on (llama.cpp's
	// llama-server) is served without reuse instead of failing checks at
	// random.
	hc := *p.hc
	hc.Transport = capacity.NewConnectionRule(hc.Transport) // unchanged when it already follows the rule
	p.hc = &hc
	var b [6]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	p.nonce = hex.EncodeToString(b[:])

	// The discovery sends what every check sends: the target's headers
	// with the bearer token (Config.APIKey) among them.
	// Each of its requests is bounded by the request timeout (GET
	// /models) or by the shorter bound of a native step (capacity's), not
	// all of them by one: a native endpoint that never answers costs its
	// bound and the steps after it are still asked.
	dc := *p.hc
	dc.Timeout = p.timeout
	dt := rt
	dt.HTTPClient, dt.APIKeyEnv, dt.Headers = &dc, "", p.headers.Clone()
	p.disc, p.discErr = capacity.Discover(ctx, dt)
	if p.model == "" {
		p.model = p.disc.Model
	}
	return p, nil
}

// window is the discovered window a truncation shows at
// (Discovery.TruncationWindow: the served window when the server
// advertises one, else the declared one, else the smaller of a declared
// window and Ollama's trained maximum), 0 when none was found, and where
// it came from.
func (p *prober) window() (int, string) {
	d := p.disc
	if d.Advertised > 0 && d.TruncationWindow == d.Advertised {
		return d.TruncationWindow, advertisedFrom(d)
	}
	return d.TruncationWindow, "Target.MaxModelLen"
}

// advertisedFrom is where the server advertised its window: the
// Discovery's source, with the /models entry's field ("/models
// meta.n_ctx", "/props", "/api/ps").
func advertisedFrom(d capacity.Discovery) string {
	if d.AdvertisedField != "" {
		return d.AdvertisedSource + " " + d.AdvertisedField
	}
	return d.AdvertisedSource
}

// runCheck runs one check and makes its text safe to print.
func (p *prober) runCheck(ctx context.Context, c check) Verdict {
	var v Verdict
	if why := p.notAPIRoot(); why != "" && c.name != nameModels {
		v = verdict(Skip, "not run: "+why+" (see the models check)")
	} else {
		v = c.run(p, ctx)
	}
	v.Check = c.name
	v.Reason = p.safe(v.Reason)
	for i, n := range v.Notes {
		v.Notes[i] = p.safe(n)
	}
	return v
}

// notAPIRoot says, when the discovery found the base URL is not the API
// root (GET /models a 404 while the same server lists models at
// {BaseURL}/v1/models: capacity's "did you mean .../v1"), that it is not
// and which URL is; "" otherwise. Every request of the suite would meet
// the same 404, so the models check fails with the discovery's error
// and the other checks are not run.
func (p *prober) notAPIRoot() string {
	if p.disc.SuggestedBaseURL == "" {
		return ""
	}
	return fmt.Sprintf("Target.BaseURL %s is not the API root, GET /models there is 404; did you mean %s?", p.where, p.disc.SuggestedBaseURL)
}

// safe removes every credential of the target from text (the API key, the
// value of every header, the base URL's userinfo, raw and JSON-escaped:
// capacity's scrubber) and escapes it for a terminal.
func (p *prober) safe(s string) string {
	return safeText(p.scrub(s), maxNoteRunes)
}

// redactURL drops userinfo, query and fragment from a base URL.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// root is the server's root: the base URL without a final /v1, where vLLM
// and llama.cpp serve /tokenize.
func (p *prober) root() string {
	return strings.TrimSuffix(p.base, "/v1")
}

// httpSeen is a non-stream answer.
type httpSeen struct {
	status      int
	contentType string
	body        []byte              // at most maxBodyExcerpt bytes
	scrub       func(string) string // the prober's, for excerpts
	elapsed     time.Duration
}

// do sends one request with the target's headers, bounded by timeout, and
// reads at most maxBodyExcerpt bytes of the answer.
func (p *prober) do(ctx context.Context, method, u string, body []byte, hdr http.Header, timeout time.Duration) (*httpSeen, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	p.setHeaders(req, hdr)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	resp, err := p.hc.Do(req)
	if err != nil {
		return nil, p.requestError(method, u, err, timeout)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyExcerpt))
	seen := &httpSeen{scrub: p.scrub, status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: b, elapsed: time.Since(start)}
	if err != nil {
		return seen, p.requestError(method, u, err, timeout)
	}
	return seen, nil
}

func (p *prober) setHeaders(req *http.Request, hdr http.Header) {
	for k, vs := range p.headers {
		req.Header[k] = append([]string(nil), vs...)
	}
	for k, vs := range hdr {
		req.Header[k] = append([]string(nil), vs...)
	}
}

// requestError names the request and says when the timeout ended it.
func (p *prober) requestError(method, u string, err error, timeout time.Duration) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s %s: no complete answer within %s", method, redactURL(u), timeout)
	}
	return fmt.Errorf("%s %s: %w", method, redactURL(u), err)
}

// body is a request of the API: its one user message, the model, the
// fields that make it stream (and report usage), limit in the API's
// token-limit field (when limit > 0), the given fields, then the
// target's ExtraBody fields the request does not set.
func (p *prober) body(user string, limit int, fields map[string]any) []byte {
	body := map[string]any{p.w.promptKey: p.w.prompt(user)}
	if p.model != "" {
		body["model"] = p.model
	}
	for k, v := range p.w.stream {
		body[k] = v
	}
	if limit > 0 && len(p.w.limits) > 0 {
		body[p.w.limits[0]] = limit
	}
	for k, v := range fields {
		body[k] = v
	}
	for k, v := range p.extra {
		if _, set := body[k]; !set {
			body[k] = v
		}
	}
	b, _ := json.Marshal(body) // maps of strings, numbers and bools always marshal
	return b
}

// excerpt is the start of a body for a note. It is scrubbed of the
// target's credentials before it is cut: a credential across the cut would
// otherwise leave its first characters, which no later scrub recognises.
// A nil scrub keeps the text.
func excerpt(scrub func(string) string, b []byte) string {
	const n = 200
	s := string(b)
	if scrub != nil {
		s = scrub(s)
	}
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// sentence says what one answer was, for a note.
func (h *httpSeen) String() string {
	return fmt.Sprintf("HTTP %d, Content-Type %q, %d ms: %s", h.status, h.contentType, h.elapsed.Milliseconds(), excerpt(h.scrub, h.body))
}
