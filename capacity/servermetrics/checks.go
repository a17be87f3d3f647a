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
	// ClientFirstTokenMeanMS is the client's mean time to the first output
	// token (reasoning or content: what the servers' histograms time) over
	// the successful requests; nil when none succeeded.
	ClientFirstTokenMeanMS *float64
}

// check computes the cross-checks of a finished member against the run's
// facts (the rules are in capacity/PROTOCOL.md#anvil-go). A check whose
// inputs the endpoint lacks is nil; nil when neither can be made.
//
// Generation tokens: the server's counter increase S against the client's
// usage sum C, difference D = S - C. D = 0 is exact. The window edges and
// the client's blind spots explain some difference, one way each:
//
//   - D < 0 (the server counted fewer): tokens generated before the first
//     sample landed belong to the phase but not to the increase; at most
//     the run's mean rate over that time, ceil(C * first / duration), with
//     first the offset of the counter's first sample;
//   - D > 0 (the server counted more): each unreported request may have
//     generated up to MaxTokens tokens the client never saw counted.
//
// Within that allowance it agrees; beyond, it is a mismatch with the
// likely cause named. A counter that was reset during the phase is a
// mismatch whatever D.
//
// TTFT: the increase of the histogram's _sum over that of its _count is
// the server's mean time to first token; the client's mean minus it is
// what the network and the client add.
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
	if spec.ttft != "" && f.ClientFirstTokenMeanMS != nil {
		c.TTFT = ttftCheck(m, spec.ttft, *f.ClientFirstTokenMeanMS)
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
	d := inc - float64(f.CompletionTokens)
	tc := &artifact.TokenCheck{Counter: counter, ServerIncrease: inc, ClientTokens: f.CompletionTokens, Difference: d}
	switch {
	case d < 0 && f.DurationMS > 0:
		tc.Allowance = math.Ceil(float64(f.CompletionTokens) * max(first, 0) / f.DurationMS)
	case d > 0:
		tc.Allowance = float64(f.UnreportedRequests) * float64(max(f.MaxTokens, 0))
	}
	tc.Judge(resets)
	return tc
}

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
// still carried usage; as unreported, the requests sent
// (anvil_go.run.sent_requests, else every row and failure) less those;
// max_tokens; wall_clock_ms as the phase's duration; the mean
// time_to_first_output_ms of the timing rows.
func factsOf(r *artifact.Report) runFacts {
	f := runFacts{MaxTokens: r.MaxTokens, DurationMS: r.WallClockMS}
	reported := 0
	ttfo := 0.0
	for i := range r.RequestTimings {
		row := &r.RequestTimings[i]
		ttfo += row.TimeToFirstOutputMS
		if row.OutputTokens != nil {
			f.CompletionTokens += *row.OutputTokens
			reported++
		}
	}
	for i := range r.Failures {
		if md := r.Failures[i].ResponseMetadata; md != nil && md.Usage != nil && md.Usage.CompletionTokens != nil {
			f.CompletionTokens += *md.Usage.CompletionTokens
			reported++
		}
	}
	sent := len(r.RequestTimings) + len(r.Failures)
	if r.AnvilGo != nil && r.AnvilGo.Run != nil {
		sent = r.AnvilGo.Run.SentRequests
	}
	f.UnreportedRequests = max(sent-reported, 0)
	if n := len(r.RequestTimings); n > 0 {
		f.ClientFirstTokenMeanMS = new(ttfo / float64(n))
	}
	return f
}
