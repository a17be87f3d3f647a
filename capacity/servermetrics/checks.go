package servermetrics

import (
	"math"
	"slices"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// runFacts are what the run itself measured, for the cross-checks.
type runFacts struct {
	// CompletionTokens is the sum of usage.completion_tokens over the
	// measured requests whose responses reported usage.
	CompletionTokens int
	// UnreportedRequests counts measured requests sent whose completion
	// tokens the client never learned (failed, cut off, or no usage): the
	// server may have generated up to MaxTokens for each.
	UnreportedRequests int
	// MaxTokens is one request's completion cap (max_tokens).
	MaxTokens int
	// DurationMS is the measured phase's wall time.
	DurationMS float64
	// ShardIndex and ShardCount are the run's shard (anvil_go.shard);
	// ShardCount is 0 for a run that is not a shard. A shard of more than
	// one sees the other shards' tokens in the server's counter: its
	// generation-token check is marked so (TokenCheck.ForShard).
	ShardIndex, ShardCount int
	// ClientFirstTokenMeanMS is the client's mean time to the first output
	// token (reasoning or content: what the servers' histograms time) over
	// the successful requests; nil when none succeeded.
	ClientFirstTokenMeanMS *float64
	// Prompt is what the successful requests whose responses carried the
	// server's own prompt time (server_timings.prompt_ms) measured; its
	// N is 0 when none did.
	Prompt promptFacts
}

// promptFacts are the server's and the client's means over the requests
// with a server prompt time.
type promptFacts struct {
	N                int
	ServerMeanMS     float64 // server_timings.prompt_ms
	ClientTTFOMeanMS float64 // time_to_first_output_ms of the same requests
}

// check computes the cross-checks of a finished member against the run's
// facts (the rules are in capacity/PROTOCOL.md#anvil-go). A check whose
// inputs the endpoint lacks is nil; nil when neither can be made.
//
// Generation tokens: the server's counter increase against the client's
// usage sum, judged by artifact.TokenCheck.Judge; a shard's is marked as
// such (artifact.TokenCheck.ForShard).
//
// TTFT: the increase of the histogram's _sum over that of its _count is
// the server's mean time to first token; the client's mean minus it is
// what the network and the client add. An engine without the histogram
// that reports each response's prompt time (llama.cpp) is checked on
// those: the mean of server_timings.prompt_ms against the client's mean
// time to the first output over the same requests; the prompt time is
// the prefill alone, so the difference also holds a wait for a free slot
// (requests_deferred) and the request's parsing.
func check(m *artifact.ServerMetrics, f runFacts) *artifact.ServerChecks {
	if m == nil || m.Engine == nil {
		return nil
	}
	spec := specOf(engineName(*m.Engine))
	if spec == nil {
		return nil
	}
	var c artifact.ServerChecks
	if spec.generationTokens != "" {
		c.GenerationTokens = tokenCheck(m, spec.generationTokens, f)
	}
	switch {
	case spec.ttft != "" && f.ClientFirstTokenMeanMS != nil:
		c.TTFT = ttftCheck(m, spec.ttft, *f.ClientFirstTokenMeanMS)
	case spec.promptTimings && f.Prompt.N > 0:
		p := f.Prompt
		c.TTFT = &artifact.TTFTCheck{Histogram: promptTimingsSource, ServerRequests: float64(p.N), ServerMeanMS: p.ServerMeanMS,
			ClientMeanMS: p.ClientTTFOMeanMS, NetworkAndClientMS: p.ClientTTFOMeanMS - p.ServerMeanMS}
	}
	if c.GenerationTokens == nil && c.TTFT == nil {
		return nil
	}
	return &c
}

// counterOf sums the increases and resets of the counter series named
// name and returns the earliest first offset; ok is false when there is
// none.
func counterOf(m *artifact.ServerMetrics, name string) (inc float64, resets int, first float64, ok bool) {
	first = math.Inf(1)
	for i := range m.Series {
		s := &m.Series[i]
		if s.Name != name || s.Increase == nil || len(s.OffsetsMS) == 0 {
			continue
		}
		ok = true
		inc += *s.Increase
		if s.Resets != nil {
			resets += *s.Resets
		}
		first = min(first, slices.Min(s.OffsetsMS))
	}
	return inc, resets, first, ok
}

func tokenCheck(m *artifact.ServerMetrics, counter string, f runFacts) *artifact.TokenCheck {
	inc, resets, first, ok := counterOf(m, counter)
	if !ok {
		return nil
	}
	tc := &artifact.TokenCheck{Counter: counter, ServerIncrease: inc, ClientTokens: f.CompletionTokens}
	tc.Allow(first, f.DurationMS, f.UnreportedRequests, f.MaxTokens)
	tc.Judge(resets)
	if f.ShardCount > 1 {
		tc.ForShard(f.ShardIndex, f.ShardCount)
	}
	return tc
}

// promptTimingsSource names the per-response prompt times in a TTFT
// check's histogram key.
const promptTimingsSource = "server_timings.prompt_ms"

func ttftCheck(m *artifact.ServerMetrics, hist string, clientMS float64) *artifact.TTFTCheck {
	sum, _, _, okS := counterOf(m, hist+"_sum")
	n, _, _, okN := counterOf(m, hist+"_count")
	if !okS || !okN || n <= 0 {
		return nil
	}
	server := sum / n * 1000
	return &artifact.TTFTCheck{Histogram: hist, ServerRequests: n, ServerMeanMS: server, ClientMeanMS: clientMS,
		NetworkAndClientMS: clientMS - server}
}

// factsOf reads the cross-checks' facts from a run's report: the usage
// completion tokens of its timing rows and of the failures whose response
// still carried usage, and of its probe requests
// (anvil_go.probe_requests); as unreported, the requests sent
// (anvil_go.run.sent_requests, else every row and failure) less those,
// and the probes that reported no usage;
// max_tokens; wall_clock_ms as the phase's duration; the mean
// time_to_first_output_ms of the timing rows that have one, and over
// those whose request's anvil_go.requests entry has
// server_timings.prompt_ms, the means of both.
func factsOf(r *artifact.Report) runFacts {
	f := runFacts{MaxTokens: r.MaxTokens, DurationMS: r.WallClockMS}
	tokens, reported := r.CompletionTokens()
	f.CompletionTokens = tokens
	ttfo, timed := 0.0, 0
	for i := range r.RequestTimings {
		row := &r.RequestTimings[i]
		if !row.TokenTimed() { // an embeddings answer's
			continue
		}
		ttfo += row.TimeToFirstOutputMS
		timed++
		if d := r.AnvilGo.Request(row.RequestIndex); d != nil && d.ServerTimings != nil && d.ServerTimings.PromptMS != nil {
			f.Prompt.N++
			f.Prompt.ServerMeanMS += *d.ServerTimings.PromptMS
			f.Prompt.ClientTTFOMeanMS += row.TimeToFirstOutputMS
		}
	}
	if n := float64(f.Prompt.N); n > 0 {
		f.Prompt.ServerMeanMS /= n
		f.Prompt.ClientTTFOMeanMS /= n
	}
	sent := len(r.RequestTimings) + len(r.Failures)
	if r.AnvilGo != nil && r.AnvilGo.Run != nil {
		sent = r.AnvilGo.Run.SentRequests
	}
	f.UnreportedRequests = max(sent-reported, 0)
	if pr := probesOf(r); pr != nil {
		// The server counted the probes' tokens too.
		f.CompletionTokens += pr.CompletionTokens
		f.UnreportedRequests += max(pr.Sent-pr.Reported, 0)
	}
	if r.AnvilGo != nil && r.AnvilGo.Shard != nil {
		f.ShardIndex, f.ShardCount = r.AnvilGo.Shard.Index, r.AnvilGo.Shard.Count
	}
	if timed > 0 {
		f.ClientFirstTokenMeanMS = new(ttfo / float64(timed))
	}
	return f
}

// probesOf is r's anvil_go.probe_requests, nil when none.
func probesOf(r *artifact.Report) *artifact.ProbeRequests {
	if r.AnvilGo == nil {
		return nil
	}
	return r.AnvilGo.ProbeRequests
}
