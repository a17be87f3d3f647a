package fakeserver

import (
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// streamWriter writes SSE events of one response and records them.
type streamWriter struct {
	w    http.ResponseWriter
	gz   *gzip.Writer // Dialect.Gzip's compressor, nil when not compressing
	rc   *http.ResponseController
	st   *reqState
	rend *renderer
	h    header
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

func (sw *streamWriter) chunk(kind string, tokens int, at time.Duration, dl *delta) bool {
	return sw.write(kind, tokens, at, sw.rend.event(sw.rend.chunk(&sw.h, dl)))
}

// stream answers a streamed request.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, st *reqState) string {
	d := &s.cfg.Dialect
	sw := &streamWriter{w: w, rc: http.NewResponseController(w), st: st, rend: newRenderer(d),
		h: s.header(st, "chat.completion.chunk")}
	ct := d.contentType()
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
	plan := sq.plan
	defer finishTrace(st.tr, sq, plan)
	defer sq.cancelled.Store(true) // a no-op for a finished sequence

	var keepAlive <-chan time.Time
	var ka *time.Timer
	if d.KeepAlive > 0 {
		ka = time.NewTimer(d.KeepAlive)
		defer ka.Stop()
		keepAlive = ka.C
	}
	includeUsage := st.tr.IncludeUsage && d.Usage != usageNone
	u := func() *usage {
		return &usage{Prompt: st.tr.PromptTokens, Completion: st.tr.CompletionTokens, Cached: sq.cachedTokens(), Reasoning: st.tr.ReasoningTokens,
			BadTotal: st.fault == faultUsageTotal}
	}
	chunks, fired := 0, false
	ck := chunker{plan: plan, size: s.cfg.TokensPerChunk}
	var stalled time.Duration // StallEvery pauses so far
	thinking := false         // ThinkTags: <think> sent, </think> not yet
	for {
		select {
		case <-sq.notify:
		case <-keepAlive:
			if !sw.write(chunkComment, 0, -1, sw.rend.comment("keep-alive")) {
				return endClientGone
			}
			ka.Reset(d.KeepAlive)
			continue
		case <-r.Context().Done():
			return endClientGone
		}
		outs, final := sq.take()
		gs := ck.feed(outs, final)
		for i, g := range gs {
			if n := s.cfg.StallEvery; n > 0 && chunks > 0 && chunks%n == 0 {
				stalled += s.cfg.scaled(s.cfg.StallFor)
			}
			if d := time.Until(st.arrived.Add(g.at + stalled)); stalled > 0 && d > 0 && !s.sleep(r, d) {
				return endClientGone
			}
			if d.Role == roleChunk && chunks == 0 {
				if !sw.chunk(chunkRole, 0, g.at, &delta{Role: true}) {
					return endClientGone
				}
			}
			last := final && i == len(gs)-1
			dl := delta{Role: chunks == 0 && d.Role == roleFirst}
			kind := chunkContent
			switch {
			case g.kind == kindReasoning && d.ThinkTags:
				dl.Content, dl.HasText, kind = g.text, true, chunkReasoning
				if !thinking {
					dl.Content, thinking = thinkOpen+g.text, true
				}
				st.tr.ReasoningTokens += g.tokens
			case g.kind == kindReasoning:
				dl.Reasoning, kind = g.text, chunkReasoning
				st.tr.ReasoningTokens += g.tokens
			default:
				dl.Content, dl.HasText = g.text, true
				if thinking {
					dl.Content, thinking = thinkClose+g.text, false
				}
				st.tr.ContentTokens += g.tokens
			}
			st.tr.CompletionTokens += g.tokens
			if last && !d.FinishChunk {
				dl.Finish = plan.finish
				if includeUsage && d.Usage == usageLastChoice {
					dl.Usage = u()
				}
			}
			if !sw.chunk(kind, g.tokens, g.at, &dl) {
				return endClientGone
			}
			chunks++
			if st.fault.midStream() && !fired && (chunks >= s.cfg.Faults.After || last) {
				fired = true
				if end, stop := s.midStreamFault(sw, r); stop {
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
		if d.FinishChunk {
			dl := delta{HasText: true, Finish: plan.finish}
			if includeUsage && d.Usage == usageLastChoice {
				dl.Usage = u()
			}
			if !sw.chunk(chunkFinish, 0, -1, &dl) {
				return endClientGone
			}
		}
		if includeUsage && d.Usage == usageFinal {
			if !sw.write(chunkUsage, 0, -1, sw.rend.event(sw.rend.usageChunk(&sw.h, u()))) {
				return endClientGone
			}
		}
		if !d.OmitDone && !sw.write(chunkDone, 0, -1, sw.rend.event([]byte("[DONE]"))) {
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

// streamErrorBody is faultStreamError's in-stream error object.
const streamErrorBody = `{"error":{"message":"Simulated engine failure during generation.","type":"server_error","param":null,"code":500}}`

// midStreamFault applies a mid-stream fault; stop reports that the stream
// ends with end.
func (s *Server) midStreamFault(sw *streamWriter, r *http.Request) (end string, stop bool) {
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
		b := sw.rend.chunk(&sw.h, &delta{Content: "x"})
		if !sw.write(chunkMalformed, 0, -1, sw.rend.event(b[:len(b)/2])) {
			return endClientGone, true
		}
	case faultOversized:
		big := strings.Repeat("x", s.cfg.Faults.OversizeBytes)
		if !sw.chunk(chunkOversized, 0, -1, &delta{Content: big}) {
			return endClientGone, true
		}
	case faultStreamError:
		if !sw.write(chunkError, 0, -1, sw.rend.event([]byte(streamErrorBody))) {
			return endClientGone, true
		}
		if !s.cfg.Dialect.OmitDone && !sw.write(chunkDone, 0, -1, sw.rend.event([]byte("[DONE]"))) {
			return endClientGone, true
		}
		return endComplete, true
	}
	return "", false
}
