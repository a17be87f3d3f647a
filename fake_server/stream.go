package fakeserver

import (
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// streamWriter writes one response, streamed or not, and records what it
// wrote in the request's trace.
type streamWriter struct {
	srv  *Server
	w    http.ResponseWriter
	gz   *gzip.Writer // Dialect.Gzip's compressor, nil when not compressing
	rc   *http.ResponseController
	st   *reqState
	d    *Dialect
	rend *renderer
	// plan and sq are the streamed answer's, set once it is submitted.
	plan *outputPlan
	sq   *seq
}

// newResponse returns the writer of st's response.
func (s *Server) newResponse(w http.ResponseWriter, st *reqState) *streamWriter {
	return &streamWriter{srv: s, w: w, rc: http.NewResponseController(w), st: st, d: &s.cfg.Dialect, rend: newRenderer(&s.cfg.Dialect)}
}

// usage is the streamed answer's token accounting so far.
func (sw *streamWriter) usage() *usage {
	tr := sw.st.tr
	return &usage{Prompt: tr.PromptTokens, Completion: tr.CompletionTokens, Cached: sw.sq.cachedTokens(), Reasoning: tr.ReasoningTokens,
		BadTotal: sw.st.fault == faultUsageTotal}
}

// write sends b, flushes it and records the chunk; scheduled < 0 means
// "scheduled when written".
func (sw *streamWriter) write(kind string, tokens int, scheduled time.Duration, b []byte) bool {
	if sw.gz != nil {
		if _, err := sw.gz.Write(b); err != nil || sw.gz.Flush() != nil {
			return false
		}
	} else if _, err := sw.w.Write(b); err != nil {
		return false
	}
	if err := sw.rc.Flush(); err != nil {
		return false
	}
	at := time.Since(sw.st.arrived)
	if scheduled < 0 {
		scheduled = at
	}
	sw.st.tr.wrote(Chunk{Kind: kind, Tokens: tokens, Bytes: len(b), Scheduled: scheduled, Written: at})
	return true
}

// thinkTagged is how the answer's group g goes out with
// Dialect.ThinkTags in an API whose reasoning has a channel of its own
// (Responses, Messages): reasoning as visible text inside "<think>" and
// "</think>"; open says whether "<think>" is open. kind is the group's
// trace kind (chunkReasoning for reasoning, tagged or not).
func (sw *streamWriter) thinkTagged(g *group, open *bool) (text, kind string) {
	text, kind = g.text, chunkContent
	switch {
	case g.kind == kindReasoning:
		kind = chunkReasoning
		if !*open {
			text, *open = thinkOpen+text, true
		}
	case *open:
		text, *open = thinkClose+text, false
	}
	return text, kind
}

// event writes one SSE event named name ("" for none) with data.
func (sw *streamWriter) event(kind string, tokens int, scheduled time.Duration, name string, data []byte) bool {
	return sw.write(kind, tokens, scheduled, sw.rend.namedEvent(name, data))
}

// A framer writes the events of one API's stream around the engine's
// output, as one dialect frames them.
type framer interface {
	// begin writes what precedes the first output, g, at its scheduled
	// time (chat's role chunk, Responses' response.created, Messages'
	// message_start, ...).
	begin(g *group) bool
	// output writes one group of output tokens; last says it is the
	// answer's last.
	output(g *group, last bool) bool
	// end writes what follows the last output: the finish, the usage and
	// the end of the stream.
	end() bool
	// keepAlive writes a keep-alive: an SSE comment, or an event of the
	// API's own.
	keepAlive() bool
	// streamError writes the stream_error fault's in-stream error; the
	// stream ends after it.
	streamError() bool
	// malformed writes an event whose JSON is cut short.
	malformed() bool
	// oversized writes one content event of text.
	oversized(text string) bool
}

// stream answers a streamed request.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, st *reqState) string {
	d := &s.cfg.Dialect
	sw := s.newResponse(w, st)
	ct := st.api.contentType(d)
	if st.fault == faultWrongContentType {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-cache")
	if d.Gzip == gzipAlways || d.Gzip == gzipIfAccepted && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Add("Vary", "Accept-Encoding")
		sw.gz = gzip.NewWriter(w)
		defer func() {
			if sw.gz.Close() == nil {
				_ = sw.rc.Flush()
			}
		}()
	}
	w.WriteHeader(http.StatusOK)
	st.tr.Status = http.StatusOK
	if sw.rc.Flush() != nil {
		return endClientGone
	}
	st.tr.Headers = time.Since(st.arrived)
	if st.fault == faultEmptyBody {
		return endComplete
	}
	sq := s.submit(st)
	sw.sq, sw.plan = sq, sq.plan
	defer finishTrace(st.tr, sq, sq.plan)
	defer sq.cancelled.Store(true) // a no-op for a finished sequence
	f := st.api.framer(sw)

	var keepAlive <-chan time.Time
	var ka *time.Timer
	if d.KeepAlive > 0 {
		ka = time.NewTimer(d.KeepAlive)
		defer ka.Stop()
		keepAlive = ka.C
	}
	chunks, fired := 0, false
	ck := chunker{plan: sq.plan, size: s.cfg.TokensPerChunk}
	var stalled time.Duration // StallEvery pauses so far
	for {
		select {
		case <-sq.notify:
		case <-keepAlive:
			if !f.keepAlive() {
				return endClientGone
			}
			ka.Reset(d.KeepAlive)
			continue
		case <-r.Context().Done():
			return endClientGone
		}
		outs, final := sq.take()
		gs := ck.feed(outs, final)
		for i := range gs {
			g := &gs[i]
			if n := s.cfg.StallEvery; n > 0 && chunks > 0 && chunks%n == 0 {
				stalled += s.cfg.scaled(s.cfg.StallFor)
			}
			if d := time.Until(st.arrived.Add(g.at + stalled)); stalled > 0 && d > 0 && !s.sleep(r, d) {
				return endClientGone
			}
			if chunks == 0 && !f.begin(g) {
				return endClientGone
			}
			if g.kind == kindReasoning {
				st.tr.ReasoningTokens += g.tokens
			} else {
				st.tr.ContentTokens += g.tokens
			}
			st.tr.CompletionTokens += g.tokens
			last := final && i == len(gs)-1
			if !f.output(g, last) {
				return endClientGone
			}
			chunks++
			if st.fault.midStream() && !fired && (chunks >= s.cfg.Faults.After || last) {
				fired = true
				if end, stop := s.midStreamFault(sw, f, r); stop {
					return end
				}
			}
		}
		if ka != nil && len(gs) > 0 {
			ka.Reset(d.KeepAlive)
		}
		if !final {
			continue
		}
		if !f.end() {
			return endClientGone
		}
		return endComplete
	}
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip: a
// "gzip" or "*" entry whose q parameter, if any, is not 0.
func acceptsGzip(h string) bool {
	for _, e := range strings.Split(h, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(e), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name != "gzip" && name != "*" {
			continue
		}
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "q="); ok {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					q = f
				}
			}
		}
		if q > 0 {
			return true
		}
	}
	return false
}

func (sq *seq) cachedTokens() int {
	sq.mu.Lock()
	defer sq.mu.Unlock()
	return sq.cached
}

// streamErrorMessage is the message of faultStreamError's in-stream error.
const streamErrorMessage = "Simulated engine failure during generation."

// midStreamFault applies a mid-stream fault; stop reports that the stream
// ends with end.
func (s *Server) midStreamFault(sw *streamWriter, f framer, r *http.Request) (end string, stop bool) {
	ok := true
	switch sw.st.fault {
	case faultDrop:
		sw.st.tr.End = endDropped
		s.traces.put(sw.st.tr)
		panic(http.ErrAbortHandler)
	case faultStall:
		if !s.sleep(r, s.cfg.scaled(s.cfg.Faults.Stall)) {
			return endClientGone, true
		}
	case faultMalformedJSON:
		ok = f.malformed()
	case faultOversized:
		ok = f.oversized(strings.Repeat("x", s.cfg.Faults.OversizeBytes))
	case faultStreamError:
		if !f.streamError() {
			return endClientGone, true
		}
		return endComplete, true
	}
	if !ok {
		return endClientGone, true
	}
	return "", false
}
