package servermetrics

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// specNames are an engine's speculative-decoding metrics: counters of
// drafts (verification steps), drafted tokens, accepted tokens and
// accepted tokens per draft position (label "position"); or gauges of
// the engine's running acceptance rate and length, and a counter of its
// verify calls. Empty names: the engine has none.
type specNames struct {
	drafts, draftTokens, accepted, perPos string
	acceptRate, acceptLength, verifyCalls string
}

// The verdicts of SpecDecode.Agreement, and the tolerance between the
// client's tokens per chunk and the server's tokens per step.
const (
	specAgree    = "agree"
	specDisagree = "disagree"
	// specTolerance is how far, relatively, the client's tokens per chunk
	// may be from the server's mean accepted length and agree.
	specTolerance = 0.1
)

// The methods of anvil_go.server_metrics.spec_decode.method.
const (
	specCounters = "counters"
	specGauges   = "gauges"
	specNone     = "none"
)

// specDecodeOf computes anvil_go.server_metrics.spec_decode of m against
// the run's report (capacity/PROTOCOL.md#spec_decode): nil for an engine
// with no speculation metrics anvil-go knows (TGI); method "none", with a
// note saying why, when the engine showed no speculation over the phase.
func specDecodeOf(m *artifact.ServerMetrics, rep *artifact.Report) *artifact.SpecDecode {
	if m == nil || m.Engine == nil {
		return nil
	}
	spec := specOf(engineName(*m.Engine))
	if spec == nil || spec.spec == (specNames{}) {
		return nil
	}
	sd := specMeasured(m, spec)
	sd.ClientTokensPerChunk = clientTokensPerChunk(rep)
	judgeSpec(sd)
	return sd
}

// specMeasured is the server's side of spec_decode: its counters over the
// phase, or its gauges' mean, or method "none".
func specMeasured(m *artifact.ServerMetrics, spec *engineSpec) *artifact.SpecDecode {
	n := spec.spec
	switch {
	case n.drafts != "":
		drafts, _, _, okD := counterOf(m, n.drafts)
		draft, _, _, okT := counterOf(m, n.draftTokens)
		accepted, _, _, okA := counterOf(m, n.accepted)
		switch {
		case !okD || !okT || !okA:
			return specAbsent(fmt.Sprintf("the endpoint serves no %s, %s and %s: speculative decoding is off (the engine serves them only with a draft model)",
				n.drafts, n.draftTokens, n.accepted))
		case drafts <= 0:
			return specAbsent(fmt.Sprintf("%s did not rise over the phase: no step was speculated", n.drafts))
		}
		sd := &artifact.SpecDecode{Method: specCounters, Drafts: &drafts, DraftTokens: &draft, AcceptedTokens: &accepted}
		if draft > 0 {
			sd.AcceptanceRate = new(accepted / draft)
		}
		sd.MeanAcceptedLength = new(1 + accepted/drafts)
		sd.PerPosition = perPosition(m, n.perPos, drafts)
		return sd
	default:
		rate, okR := gaugeMean(m, n.acceptRate)
		length, okL := gaugeMean(m, n.acceptLength)
		verify, _, _, okV := counterOf(m, n.verifyCalls)
		gen, _, _, okG := counterOf(m, spec.generationTokens)
		if !okR && !okL && !(okV && verify > 0) {
			return specAbsent(fmt.Sprintf("the endpoint serves no %s, %s or rising %s: speculative decoding is off",
				n.acceptRate, n.acceptLength, n.verifyCalls))
		}
		sd := &artifact.SpecDecode{Method: specGauges}
		if okR {
			sd.AcceptanceRate = &rate
		}
		if okL {
			sd.MeanAcceptedLength = &length
		}
		if okV && okG && verify > 0 {
			// Tokens per verified step over exactly the phase.
			sd.Method, sd.Drafts, sd.MeanAcceptedLength = specCounters, &verify, new(gen/verify)
		}
		return sd
	}
}

// specAbsent is spec_decode of an engine that showed no speculation.
func specAbsent(why string) *artifact.SpecDecode {
	return &artifact.SpecDecode{Method: specNone, Note: &why}
}

// perPosition is the accepted count of each draft position over drafts,
// from the counter series of name labelled position (summed over its
// other labels), positions 0..max; nil when there is none.
func perPosition(m *artifact.ServerMetrics, name string, drafts float64) []float64 {
	if name == "" {
		return nil
	}
	byPos := map[int]float64{}
	for i := range m.Series {
		s := &m.Series[i]
		if s.Name != name || s.Increase == nil {
			continue
		}
		p, err := strconv.Atoi(s.Labels["position"])
		if err != nil || p < 0 || p > 1024 {
			continue
		}
		byPos[p] += *s.Increase
	}
	if len(byPos) == 0 {
		return nil
	}
	out := make([]float64, slices.Max(slices.Collect(maps.Keys(byPos)))+1)
	for p, v := range byPos {
		out[p] = v / drafts
	}
	return out
}

// gaugeMean is the mean over the phase's points of the gauge series
// named name, averaged over its label sets: the points after the first
// sample (offset 0, taken before the phase, when the gauge still averages
// the warm-up's batches), or that one alone; ok is false without a point.
func gaugeMean(m *artifact.ServerMetrics, name string) (float64, bool) {
	sum, n := 0.0, 0
	for pass := range 2 {
		for i := range m.Series {
			s := &m.Series[i]
			if s.Name != name {
				continue
			}
			for j, v := range s.Values {
				if pass == 0 && s.OffsetsMS[j] <= 0 {
					continue
				}
				sum += v
				n++
			}
		}
		if n > 0 {
			break
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// clientTokensPerChunk is the tokens per output chunk the run's streams
// carried after their first chunk (the prefill's token, never
// speculated): the sum of completion tokens less one over the sum of
// output chunks less one, over the successful rows with usage and two
// chunks or more; nil when none.
func clientTokensPerChunk(r *artifact.Report) *float64 {
	tokens, chunks := 0, 0
	for i := range r.RequestTimings {
		row := &r.RequestTimings[i]
		c := row.ContentChunks + row.ReasoningChunks
		if row.OutputTokenSource != artifact.SourceUsage || row.OutputTokens == nil || c < 2 {
			continue
		}
		tokens += *row.OutputTokens - 1
		chunks += c - 1
	}
	if chunks == 0 {
		return nil
	}
	return new(float64(tokens) / float64(chunks))
}

// judgeSpec compares the client's tokens per chunk with the server's
// tokens per step (1 without speculation), naming a disagreement.
func judgeSpec(sd *artifact.SpecDecode) {
	c := sd.ClientTokensPerChunk
	server := 1.0
	switch {
	case c == nil:
		return
	case sd.MeanAcceptedLength != nil && *sd.MeanAcceptedLength > 0:
		server = *sd.MeanAcceptedLength
	case sd.Method != specNone:
		return
	}
	if math.Abs(*c-server) <= specTolerance*server {
		sd.Agreement = specAgree
		return
	}
	sd.Agreement = specDisagree
	what := fmt.Sprintf("the streams carried %.2f tokens per chunk after their first, the server %.2f per step", *c, server)
	if sd.Method == specNone {
		what = fmt.Sprintf("the streams carried %.2f tokens per chunk after their first, the server speculated none (1 per step)", *c)
	}
	var why string
	switch {
	case *c < server:
		why = "the stream is re-chunked on its way (the server's own streaming, a proxy), or the speculation the counters show was not the run's (another client)"
	default:
		why = "each chunk holds several steps (a stream interval above one step), or the server speculates without exporting it"
	}
	note := what + ": " + why
	if sd.Note != nil {
		note = *sd.Note + "; " + note
	}
	sd.Note = &note
}
