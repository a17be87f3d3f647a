package fakeserver

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The kinds of a Chunk, as documented on Chunk.Kind.
const (
	chunkRole      = "role"
	chunkReasoning = "reasoning"
	chunkContent   = "content"
	chunkFinish    = "finish"
	chunkUsage     = "usage"
	chunkDone      = "done"
	chunkComment   = "comment"
	chunkError     = "error"
	chunkFraming   = "framing"
	chunkPing      = "ping"
	chunkMalformed = "malformed"
	chunkOversized = "oversized"
	chunkBody      = "body"
)

// Chunk is one write of a response. Offsets are durations since the request
// arrived at the handler (monotonic readings do not compare across
// processes, durations do). Scheduled is when the engine's step produced the
// tokens; Written is when the write and flush of the chunk returned (over
// net.Pipe, when the client had read it).
type Chunk struct {
	// Kind is what was written: "role" (the role-only first chunk),
	// "reasoning" or "content" (a delta of that text), "finish" (an empty
	// delta with the finish_reason), "usage" (the "choices": [] usage
	// chunk), "done" (data: [DONE]), "comment" (an SSE keep-alive comment),
	// "error" (an in-stream {"error": ...}), "malformed" (the malformed_json
	// fault's cut-short JSON), "oversized" (the oversized_event fault's
	// event) or "body" (a whole non-streamed body).
	Kind      string        `json:"kind"`
	Tokens    int           `json:"tokens"`       // output tokens it carried (0 for framing)
	Bytes     int           `json:"bytes"`        // bytes written, SSE framing included
	Scheduled time.Duration `json:"scheduled_ns"` // when the engine produced its tokens
	Written   time.Duration `json:"written_ns"`   // when its write and flush returned
}

// The ends a Trace records, as documented on Trace.End.
const (
	endComplete   = "complete"    // the response was written in full
	endClientGone = "client_gone" // the client went away (or Close) first
	endDropped    = "dropped"     // the drop fault aborted the connection
	endRejected   = "rejected"    // an error status was answered
)

// Trace is the ground truth of one chat completion request: what the server
// scheduled and when it wrote each chunk.
type Trace struct {
	// Index is the 0-based arrival order among the requests of every API.
	Index int `json:"index"`
	// API is the API the request spoke: "chat", "responses", "messages",
	// "completions" or "embeddings".
	API string `json:"api"`
	// RequestID is the request's X-Request-Id header.
	RequestID    string `json:"request_id,omitempty"`
	Model        string `json:"model"`           // the model served (the request's, or Config.Model)
	Stream       bool   `json:"stream"`          // the request asked for a stream
	IncludeUsage bool   `json:"include_usage"`   // stream_options.include_usage was true
	Fault        Fault  `json:"fault,omitempty"` // the fault applied, "" if none
	Status       int    `json:"status"`          // HTTP status answered (0 before the headers)

	PromptTokens     int    `json:"prompt_tokens"`              // prompt tokens, chat template included
	Inputs           int    `json:"inputs,omitempty"`           // embeddings: the inputs embedded
	TruncatedTokens  int    `json:"truncated_tokens,omitempty"` // prompt tokens dropped by Dialect.TruncatePrompt
	CachedTokens     int    `json:"cached_tokens"`              // prompt tokens found in the prefix cache
	ReasoningTokens  int    `json:"reasoning_tokens"`           // reasoning tokens written
	ContentTokens    int    `json:"content_tokens"`             // content tokens written
	CompletionTokens int    `json:"completion_tokens"`          // reasoning + content tokens written
	MaxTokens        int    `json:"max_tokens"`                 // the completion budget in effect
	FinishReason     string `json:"finish_reason,omitempty"`    // "stop" or "length"
	// Marker is the ANVIL_REQ_ marker the answer carries ("" if none; after
	// "Answer:" under the late_marker fault);
	// Words the N of an "exactly N" instruction (0 if none).
	Marker string `json:"marker,omitempty"`
	Words  int    `json:"words,omitempty"`

	// Queued is when the engine admitted the request and PrefillDone when
	// its prefill ended (the first token), both scheduled.
	Queued      time.Duration `json:"queued_ns"`
	PrefillDone time.Duration `json:"prefill_done_ns"`
	// Headers is when the response headers were flushed; FirstReasoning,
	// FirstContent and Last when the first reasoning chunk, the first
	// content chunk and the last byte were written. -1 when none.
	Headers        time.Duration `json:"headers_ns"`
	FirstReasoning time.Duration `json:"first_reasoning_ns"`
	FirstContent   time.Duration `json:"first_content_ns"`
	Last           time.Duration `json:"last_ns"`

	// Chunks are the response's writes in order.
	Chunks []Chunk `json:"chunks"`
	// End is how the handler ended: "complete" (the response was written
	// in full), "client_gone" (the client went away, or Close, first),
	// "dropped" (the drop fault aborted the connection) or "rejected" (an
	// error status was answered); empty while the handler still runs.
	End string `json:"end,omitempty"`
}

// Done reports whether the handler has finished, so the Trace is final.
func (t *Trace) Done() bool { return t.End != "" }

func newTrace(index int) *Trace {
	return &Trace{Index: index, Headers: -1, FirstReasoning: -1, FirstContent: -1, Last: -1}
}

// wrote records a chunk written now.
func (t *Trace) wrote(c Chunk) {
	switch {
	case c.Kind == chunkReasoning && t.FirstReasoning < 0:
		t.FirstReasoning = c.Written
	case (c.Kind == chunkContent || c.Kind == chunkOversized) && t.FirstContent < 0:
		t.FirstContent = c.Written
	}
	t.Last = c.Written
	t.Chunks = append(t.Chunks, c)
}

// traceStore keeps the traces of the last limit requests (all when limit
// is 0); traces[i] is the request with index base+i.
type traceStore struct {
	limit  int
	mu     sync.Mutex
	base   int
	traces []Trace
}

func (ts *traceStore) put(t *Trace) {
	c := *t
	c.Chunks = append([]Chunk(nil), t.Chunks...)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t.Index < ts.base {
		return // already dropped
	}
	for ts.base+len(ts.traces) <= t.Index {
		ts.traces = append(ts.traces, Trace{Index: ts.base + len(ts.traces)})
	}
	ts.traces[t.Index-ts.base] = c
	if over := len(ts.traces) - ts.limit; ts.limit > 0 && over > 0 {
		ts.traces = append(ts.traces[:0], ts.traces[over:]...)
		ts.base += over
	}
}

func (ts *traceStore) get(i int) (Trace, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if i < ts.base || i >= ts.base+len(ts.traces) {
		return Trace{}, false
	}
	return ts.traces[i-ts.base], true
}

// Trace returns the trace of the request that arrived index-th (0-based)
// and whether it is known (arrived, and not dropped by Config.MaxTraces). It is final when Done reports true:
// the handler records the end after its last write, so a client that just
// read the end of a stream may need to wait (synctest.Wait, or Close).
func (s *Server) Trace(index int) (Trace, bool) { return s.traces.get(index) }

// TraceByRequestID returns the trace of the request sent with the given
// X-Request-Id header value.
func (s *Server) TraceByRequestID(id string) (Trace, bool) {
	s.traces.mu.Lock()
	defer s.traces.mu.Unlock()
	for _, t := range s.traces.traces {
		if t.RequestID == id {
			return t, true
		}
	}
	return Trace{}, false
}

// Traces returns every kept trace in arrival order.
func (s *Server) Traces() []Trace {
	s.traces.mu.Lock()
	defer s.traces.mu.Unlock()
	return append([]Trace(nil), s.traces.traces...)
}

// serveTrace answers GET /fake/trace: every trace as a JSON array, or one
// trace as an object with ?index=N or ?request_id=ID (404 if unknown).
func (s *Server) serveTrace(w http.ResponseWriter, r *http.Request) {
	var v any
	switch q := r.URL.Query(); {
	case q.Has("index"):
		i, err := strconv.Atoi(q.Get("index"))
		if err != nil {
			writeError(w, http.StatusBadRequest, "index "+strconv.Quote(q.Get("index"))+" is not an integer", "invalid_request_error", "index", "")
			return
		}
		t, ok := s.Trace(i)
		if !ok {
			writeError(w, http.StatusNotFound, "no request with index "+strconv.Itoa(i), "not_found_error", "index", "")
			return
		}
		v = t
	case q.Has("request_id"):
		t, ok := s.TraceByRequestID(q.Get("request_id"))
		if !ok {
			writeError(w, http.StatusNotFound, "no request with id "+strconv.Quote(q.Get("request_id")), "not_found_error", "request_id", "")
			return
		}
		v = t
	default:
		v = s.Traces()
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
