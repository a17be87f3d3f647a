package fakeserver

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxBodyBytes bounds a request body (a 1M-token prompt at 4 characters per
// token, with room for JSON escaping).
const maxBodyBytes = 16 << 20

// faultSalt separates a request's fault draw from its output draws.
const faultSalt = 0x9e3779b97f4a7c15

// Handler returns the server's routes: GET /v1/models, POST
// /v1/chat/completions, /v1/responses, /v1/messages, /v1/completions and
// /v1/embeddings, POST /tokenize (also under /v1), GET /fake/trace, GET
// /metrics (vLLM's Prometheus names, metrics.go), GET
// /dcgm-exporter/metrics (the GPUs', gpu_metrics.go; 404 without
// Config.GPUs), and, when the Dialect
// serves them, GET /props, GET /api/ps and POST /api/show (404 otherwise).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", s.serveModels)
	for _, a := range apis {
		mux.HandleFunc("POST "+a.path(), func(w http.ResponseWriter, r *http.Request) { s.serveAPI(w, r, a) })
	}
	mux.HandleFunc("POST "+embeddingsPath, s.serveEmbeddings)
	mux.HandleFunc("POST /tokenize", s.serveTokenize)
	mux.HandleFunc("POST /v1/tokenize", s.serveTokenize)
	mux.HandleFunc("GET /fake/trace", s.serveTrace)
	mux.HandleFunc("GET "+metricsPath, s.serveMetrics)
	mux.HandleFunc("GET "+dcgmPath, s.serveDCGM)
	mux.HandleFunc("GET /props", s.serveProps)
	mux.HandleFunc("GET /api/ps", s.serveOllamaPS)
	mux.HandleFunc("POST /api/show", s.serveOllamaShow)
	return mux
}

// message is one chat message; Content is a string or an array of parts.
type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

func (m message) text() (string, error) {
	var s string
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return "", nil
	}
	if err := json.Unmarshal(m.Content, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return "", fmt.Errorf("messages[].content: want a string or an array of text parts: %w", err)
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// prompt is a parsed prompt: all messages with their roles (hashed for the
// prefix cache), the message texts alone, the user text, the token count.
type prompt struct {
	all     string
	content string
	user    string
	tokens  int
}

// parsePrompt reads the messages of a prompt; field names them in an
// error ("messages", "input").
func (s *Server) parsePrompt(msgs []message, template int, field string) (prompt, error) {
	var all, content, user strings.Builder
	n := 0
	for i, m := range msgs {
		t, err := m.text()
		if err != nil {
			return prompt{}, fmt.Errorf("%s[%d]: %w", field, i, err)
		}
		n += s.cfg.countTokens(t)
		content.WriteString(t)
		all.WriteString(m.Role)
		all.WriteByte('\n')
		all.WriteString(t)
		all.WriteByte('\n')
		if m.Role == "user" {
			user.WriteString(t)
			user.WriteByte('\n')
		}
	}
	return prompt{all: all.String(), content: content.String(), user: user.String(), tokens: n + template}, nil
}

// reqState is one admitted request.
type reqState struct {
	api     api      // a generating API's; nil for embeddings
	errs    errorAPI // how its errors are written
	req     request
	prompt  prompt
	in      instructions
	budget  int
	limited bool // the request set a token limit
	window  int  // completion tokens the context window leaves
	fault   Fault
	rng     *rand.Rand
	arrived time.Time
	tr      *Trace
}

// serveAPI answers a request of one of the generating APIs.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, a api) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.writeAPIError(w, a, &apiError{status: http.StatusServiceUnavailable, message: "server closed", typ: "server_error"})
		return
	}
	s.active.Add(1)
	s.mu.Unlock()
	defer s.active.Done()

	st := &reqState{api: a, errs: a, arrived: time.Now()}
	idx := int(s.arrived.Add(1) - 1)
	st.tr = newTrace(idx)
	st.tr.API = a.name()
	st.tr.RequestID = r.Header.Get(requestIDHeader)
	if st.tr.RequestID != "" {
		w.Header().Set(requestIDHeader, st.tr.RequestID)
	}
	defer func() { s.traces.put(st.tr) }() // also runs when faultDrop panics
	s.traces.put(st.tr)

	frng := rand.New(rand.NewPCG(s.cfg.Seed^faultSalt, uint64(idx)))
	fault, ok := s.chooseFault(w, r, st, frng)
	if !ok {
		return
	}
	if !s.admitRequest(w, r, st) {
		return
	}
	st.fault = fault
	if fault == faultSlowHeaders && !s.sleep(r, s.cfg.scaled(s.cfg.Faults.SlowHeaders)) {
		st.tr.End = endClientGone
		return
	}
	if st.req.Stream {
		st.tr.End = s.stream(w, r, st)
	} else {
		st.tr.End = s.complete(w, r, st)
	}
}

// chooseFault picks the request's fault and answers an HTTP fault (or an
// unknown fault name) itself; ok is false when it did.
func (s *Server) chooseFault(w http.ResponseWriter, r *http.Request, st *reqState, rng *rand.Rand) (Fault, bool) {
	fault, err := s.cfg.Faults.choose(r, st.tr.Index, rng)
	if err != nil {
		s.reject(w, st, &apiError{status: http.StatusBadRequest, message: err.Error(), typ: "invalid_request_error", param: faultHeader})
		return "", false
	}
	st.tr.Fault = fault
	if hf, ok := httpFaults[fault]; ok {
		if fault == faultHTTP429 {
			w.Header().Set("Retry-After", strconv.Itoa(s.cfg.Faults.RetryAfter))
		}
		s.writeAPIError(w, st.errs, &apiError{status: hf.status, message: hf.message, typ: hf.typ, code: hf.code})
		st.tr.Status, st.tr.End = hf.status, endRejected
		return "", false
	}
	return fault, true
}

// reject answers a bad request (see badRequest) and records it.
func (s *Server) reject(w http.ResponseWriter, st *reqState, e *apiError) {
	st.tr.Status = s.badRequest(w, st.errs, e)
	st.tr.End = endRejected
}

// admitRequest parses and validates the request, fills the trace and the
// request's generator; it answers the error itself and returns false on a
// bad request.
func (s *Server) admitRequest(w http.ResponseWriter, r *http.Request, st *reqState) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		s.reject(w, st, &apiError{status: http.StatusBadRequest, message: "invalid request body: " + err.Error(), typ: "invalid_request_error"})
		return false
	}
	q, bad := st.api.parse(body)
	if bad != nil {
		s.reject(w, st, bad)
		return false
	}
	st.req = q
	tr := st.tr
	tr.Model, tr.Stream, tr.IncludeUsage = q.Model, q.Stream, q.IncludeUsage
	if tr.Model == "" {
		tr.Model = s.cfg.Model
	}
	if q.Model != "" && q.Model != s.cfg.Model {
		s.reject(w, st, &apiError{status: http.StatusNotFound, message: fmt.Sprintf("The model `%s` does not exist.", q.Model),
			typ: "invalid_request_error", param: "model", code: "model_not_found"})
		return false
	}
	template := s.cfg.TemplateTokens
	if q.Raw {
		template = 0
	}
	if st.prompt, err = s.parsePrompt(q.Messages, template, q.PromptField); err != nil {
		s.reject(w, st, &apiError{status: http.StatusBadRequest, message: err.Error(), typ: "invalid_request_error", param: q.PromptField})
		return false
	}
	if over := st.prompt.tokens - s.cfg.MaxModelLen; s.cfg.Dialect.TruncatePrompt && over > 0 {
		st.prompt.tokens = s.cfg.MaxModelLen
		tr.TruncatedTokens = over
	}
	tr.PromptTokens = st.prompt.tokens
	st.window = s.cfg.MaxModelLen - st.prompt.tokens
	st.budget = st.window
	mt := q.MaxTokens
	if s.cfg.Dialect.TruncatePrompt && mt == nil {
		st.budget = s.cfg.MaxModelLen // the natural answer ends first
	}
	if mt != nil {
		if *mt < 1 {
			s.reject(w, st, &apiError{status: http.StatusBadRequest, message: fmt.Sprintf("%s = %d: want >= 1", q.MaxField, *mt),
				typ: "invalid_request_error", param: q.MaxField})
			return false
		}
		st.budget, st.limited = *mt, true
	}
	tr.MaxTokens = st.budget
	if total := st.prompt.tokens + st.budget; !s.cfg.Dialect.TruncatePrompt && (total > s.cfg.MaxModelLen || st.budget < 1) {
		s.reject(w, st, &apiError{status: http.StatusBadRequest, message: fmt.Sprintf(
			"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
			s.cfg.MaxModelLen, total, st.prompt.tokens, st.budget), typ: "invalid_request_error", param: q.PromptField, code: "context_length_exceeded"})
		return false
	}
	st.in = parseInstructions(st.prompt.user)
	tr.Words = st.in.words
	st.rng = rand.New(rand.NewPCG(s.cfg.Seed, s.textStream(q, &st.prompt, tr.Index)))
	return true
}

// textStream is the second seed of a request's generator, which draws its
// text, its lengths and its speculative steps: the prompt's hash at
// temperature 0 (identical prompts get identical answers, as greedy
// decoding does), the arrival index otherwise or when
// Config.Nondeterministic is set.
func (s *Server) textStream(q request, p *prompt, index int) uint64 {
	if q.Temperature == nil || *q.Temperature != 0 || s.cfg.Nondeterministic {
		return uint64(index)
	}
	h := fnv.New64a()
	_, _ = io.WriteString(h, p.all)
	if !q.thinking() {
		h.Write([]byte{0}) // thinking off is another answer
	}
	return h.Sum64()
}

// submit plans the output and hands the request to the engine.
func (s *Server) submit(st *reqState) *seq {
	pi := planInput{in: st.in, budget: st.budget, limited: st.limited, window: max(st.window, st.budget),
		ignoreEOS: st.req.IgnoreEOS, fault: st.fault}
	if st.req.thinking() {
		pi.reasoning = draw(st.rng, s.cfg.ReasoningTokens)
	}
	pi.answer = draw(st.rng, s.cfg.AnswerTokens)
	plan := planOutput(pi, st.rng)
	st.tr.Marker = plan.marker
	hs := hashBlocks(st.prompt.all, s.cfg.blockEnds(st.prompt.all))
	sq := newSeq(st.arrived, st.prompt.tokens, hs, plan, s.cfg.SpecTokens, st.rng)
	s.engine.submit(sq)
	return sq
}

func draw(rng *rand.Rand, r Range) int {
	if r.Max <= r.Min {
		return r.Min
	}
	return r.Min + rng.IntN(r.Max-r.Min+1)
}

// sleep waits d or until the request is cancelled; false if cancelled.
func (s *Server) sleep(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// finishTrace copies the engine's bookkeeping into the trace.
func finishTrace(tr *Trace, sq *seq, plan *outputPlan) {
	sq.mu.Lock()
	tr.CachedTokens, tr.Queued, tr.PrefillDone = sq.cached, sq.queued, sq.prefillDone
	sq.mu.Unlock()
	tr.FinishReason = plan.finish
}

// complete answers a non-streamed request.
func (s *Server) complete(w http.ResponseWriter, r *http.Request, st *reqState) string {
	if st.fault == faultEmptyBody {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		st.tr.Status = http.StatusOK
		return endComplete
	}
	sq := s.submit(st)
	var last time.Duration
	for final := false; !final; {
		select {
		case <-sq.notify:
		case <-r.Context().Done():
			sq.cancelled.Store(true)
			return endClientGone
		}
		var outs []stepOut
		outs, final = sq.take()
		if len(outs) > 0 {
			last = outs[len(outs)-1].at
		}
	}
	if st.fault == faultDrop {
		st.tr.End = endDropped
		panic(http.ErrAbortHandler)
	}
	finishTrace(st.tr, sq, sq.plan)
	var reasoning, content strings.Builder
	for _, t := range sq.plan.tokens {
		if t.kind == kindReasoning {
			reasoning.WriteString(t.text)
			st.tr.ReasoningTokens++
		} else {
			content.WriteString(t.text)
			st.tr.ContentTokens++
		}
	}
	st.tr.CompletionTokens = len(sq.plan.tokens)
	sw := s.newResponse(w, st)
	sw.sq, sw.plan = sq, sq.plan
	ans := answer{reasoning: reasoning.String(), content: content.String(), finish: sq.plan.finish,
		usage: usage{Prompt: st.tr.PromptTokens, Completion: st.tr.CompletionTokens, Cached: st.tr.CachedTokens,
			Reasoning: st.tr.ReasoningTokens, BadTotal: st.fault == faultUsageTotal}}
	body := st.api.body(sw, &ans)
	at, ok := writeBody(w, st, body, st.tr.CompletionTokens, last)
	if !ok {
		return endClientGone
	}
	if st.tr.ContentTokens > 0 {
		st.tr.FirstContent = at
	}
	if st.tr.ReasoningTokens > 0 {
		st.tr.FirstReasoning = at
	}
	return endComplete
}

// writeBody answers 200 with a whole JSON body (labelled text/plain under
// the wrong_content_type fault) and records it, its tokens scheduled at
// scheduled; it returns when the write returned and false when it failed.
func writeBody(w http.ResponseWriter, st *reqState, body []byte, tokens int, scheduled time.Duration) (time.Duration, bool) {
	ct := "application/json"
	if st.fault == faultWrongContentType {
		ct = "text/plain; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	st.tr.Status = http.StatusOK
	if _, err := w.Write(body); err != nil {
		return 0, false
	}
	at := time.Since(st.arrived)
	st.tr.Headers = at
	st.tr.wrote(Chunk{Kind: chunkBody, Tokens: tokens, Bytes: len(body), Scheduled: scheduled, Written: at})
	return at, true
}

// answer is the whole of a non-streamed answer.
type answer struct {
	reasoning, content string
	finish             string // "stop" or "length"
	usage              usage
}

// ids returns the generator of st's response ids: the same for a request
// index and seed, whatever the API.
func (s *Server) ids(st *reqState) *rand.Rand {
	return rand.New(rand.NewPCG(s.cfg.Seed, ^uint64(st.tr.Index)))
}
