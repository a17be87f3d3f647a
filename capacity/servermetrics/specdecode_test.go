package servermetrics

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// vllmSpecServer is a plain handler of vLLM V1's speculative-decoding
// counters (the names and the position label as vLLM serves them, each
// family labelled engine and model_name): every call adds steps drafts of
// draft tokens each, accepted[j] of which accepted their token at
// position j.
type vllmSpecServer struct {
	mu       sync.Mutex
	steps    int
	draft    int
	accepted []int
	n        int
}

func (v *vllmSpecServer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	v.mu.Lock()
	n := v.n
	v.n++
	v.mu.Unlock()
	acc := 0 // accepted tokens a call
	for _, a := range v.accepted {
		acc += a
	}
	const l = `{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"}`
	var b strings.Builder
	fmt.Fprintf(&b, "# HELP vllm:generation_tokens_total Number of generation tokens processed.\n# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total%s %d.0\n", l, n*(v.steps+acc))
	fmt.Fprintf(&b, "# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.\n# TYPE vllm:spec_decode_num_drafts_total counter\nvllm:spec_decode_num_drafts_total%s %d.0\n", l, 7+n*v.steps)
	fmt.Fprintf(&b, "# HELP vllm:spec_decode_num_draft_tokens_total Number of draft tokens.\n# TYPE vllm:spec_decode_num_draft_tokens_total counter\nvllm:spec_decode_num_draft_tokens_total%s %d.0\n", l, 21+n*v.steps*v.draft)
	fmt.Fprintf(&b, "# HELP vllm:spec_decode_num_accepted_tokens_total Number of accepted tokens.\n# TYPE vllm:spec_decode_num_accepted_tokens_total counter\nvllm:spec_decode_num_accepted_tokens_total%s %d.0\n", l, 5+n*acc)
	b.WriteString("# HELP vllm:spec_decode_num_accepted_tokens_per_pos_total Accepted tokens per draft position.\n# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter\n")
	for j, a := range v.accepted {
		fmt.Fprintf(&b, "vllm:spec_decode_num_accepted_tokens_per_pos_total{engine=\"0\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\",position=\"%d\"} %d.0\n", j, n*a)
	}
	_, _ = w.Write([]byte(b.String()))
}

// specRun samples h for 5.5 s of the bubble's clock and computes
// spec_decode against rows.
func specRun(t *testing.T, h http.Handler, rows ...artifact.TimingRow) *artifact.SpecDecode {
	t.Helper()
	s, err := Discover(t.Context(), Config{URL: "http://gpu-box:8000/metrics", Client: handlerClient(h)})
	require.NoError(t, err)
	time.Sleep(3 * time.Second) // the warm-up's drafts are not the phase's
	s.Prime(t.Context())
	end := s.Start(t.Context(), time.Now())
	time.Sleep(5500 * time.Millisecond) // 6 samples after Prime's
	s.Finish()
	rep := &artifact.Report{RequestTimings: rows}
	end(rep)
	return rep.AnvilGo.ServerMetrics.SpecDecode
}

func row(tokens, chunks int) artifact.TimingRow {
	return artifact.TimingRow{OutputTokenSource: artifact.SourceUsage, OutputTokens: new(tokens), ContentChunks: chunks}
}

// TestSpecDecodeVLLM: vLLM's counters differenced over exactly the phase
// (neither the warm-up's drafts nor the counters' values at its start):
// 60 drafts of 4 tokens, 20 of every 40 accepted (0.5), 90%, 60%, 30% and
// 20% at positions 0 to 3, 3 tokens per step; the client's 3 tokens a
// chunk agree, 1 a chunk (a proxy re-chunking the stream) disagree, named.
func TestSpecDecodeVLLM(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &vllmSpecServer{steps: 10, draft: 4, accepted: []int{9, 6, 3, 2}}
		sd := specRun(t, srv, row(61, 21), row(31, 11))
		require.Equal(t, specCounters, sd.Method)
		require.Equal(t, 60.0, *sd.Drafts)
		require.Equal(t, 240.0, *sd.DraftTokens)
		require.Equal(t, 120.0, *sd.AcceptedTokens)
		require.Equal(t, 0.5, *sd.AcceptanceRate)
		require.Equal(t, 3.0, *sd.MeanAcceptedLength)
		require.Empty(t, cmp.Diff([]float64{0.9, 0.6, 0.3, 0.2}, sd.PerPosition, cmpopts.EquateApprox(0, 1e-12)))
		require.InDelta(t, 3.0, *sd.ClientTokensPerChunk, 1e-12, "90 tokens after the first in 30 chunks")
		require.Equal(t, specAgree, sd.Agreement)
		require.Nil(t, sd.Note)

		sd = specRun(t, &vllmSpecServer{steps: 10, draft: 4, accepted: []int{9, 6, 3, 2}}, row(61, 61))
		require.Equal(t, specDisagree, sd.Agreement)
		require.Contains(t, *sd.Note, "the streams carried 1.00 tokens per chunk after their first, the server 3.00 per step")
		require.Contains(t, *sd.Note, "re-chunked")
	})
}

// TestSpecDecodeAbsent: an engine with speculation off says so: vLLM
// without the counters, llama.cpp's real body whose counters are zero;
// streams of 4 tokens a chunk beside no speculation are named.
func TestSpecDecodeAbsent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sd := specRun(t, &counterServer{}, row(41, 41))
		require.Equal(t, specNone, sd.Method)
		require.Contains(t, *sd.Note, "serves no vllm:spec_decode_num_drafts_total")
		require.Equal(t, specAgree, sd.Agreement)

		llama := readCapture(t, "llamacpp-b10573-metrics.txt")
		sd = specRun(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(llama) }), row(41, 11))
		require.Equal(t, specNone, sd.Method)
		require.Contains(t, *sd.Note, "llamacpp:spec_decode_num_drafts_total did not rise over the phase")
		require.Equal(t, specDisagree, sd.Agreement)
		require.Contains(t, *sd.Note, "the server speculated none")
	})
}

// TestSpecDecodeSGLang: SGLang's acceptance gauges (its recent batches'
// running averages) averaged over the phase's samples, Prime's excluded,
// and its verify calls against its generation tokens over exactly the
// phase.
func TestSpecDecodeSGLang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		n := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			mu.Lock()
			i := n
			n++
			mu.Unlock()
			rate := 0.9 // the warm-up's
			if i > 1 {
				rate = 0.6
			}
			const l = `{model_name="meta-llama/Llama-3.1-8B-Instruct"}`
			fmt.Fprintf(w, "# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs%s 4\n"+
				"# TYPE sglang:generation_tokens_total counter\nsglang:generation_tokens_total%s %d\n"+
				"# TYPE sglang:spec_accept_rate gauge\nsglang:spec_accept_rate%s %g\n"+
				"# TYPE sglang:spec_accept_length gauge\nsglang:spec_accept_length%s %g\n"+
				"# TYPE sglang:spec_verify_calls_total counter\nsglang:spec_verify_calls_total%s %d\n",
				l, l, 1000+i*300, l, rate, l, 1+rate*4, l, 100+i*100)
		})
		sd := specRun(t, h, row(31, 11))
		require.Equal(t, specCounters, sd.Method)
		require.Equal(t, 0.6, *sd.AcceptanceRate, "the phase's samples, not Prime's")
		require.Equal(t, 600.0, *sd.Drafts)
		require.Equal(t, 3.0, *sd.MeanAcceptedLength, "1800 tokens over 600 verify calls")
		require.Nil(t, sd.DraftTokens)
		require.Equal(t, specAgree, sd.Agreement)
	})
}
