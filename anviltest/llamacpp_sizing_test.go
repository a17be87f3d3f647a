package anviltest

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

// standInEnv runs BenchmarkLlamaCppStandIn in a child process when set.
const standInEnv = "ANVILTEST_LLAMACPP_STANDIN" // not ANVIL_*: anviltest would refuse it as unknown

// BenchmarkLlamaCppStandIn is the README's benchmark at ctx=4096 with
// default settings (60 requests), run by TestReadmeCommandAgainstLlamaCpp
// in a child process against the stand-in.
func BenchmarkLlamaCppStandIn(b *testing.B) {
	if os.Getenv(standInEnv) == "" {
		b.Skip("run by TestReadmeCommandAgainstLlamaCpp")
	}
	b.Run("ctx=4096/conc=1", func(b *testing.B) {
		Capacity(b, capacity.Workload{ContextTokens: 4096, Concurrency: 1, MaxTokens: 8})
	})
}

// TestReadmeCommandAgainstLlamaCpp: the README's command with default
// settings against llama.cpp whose tokenizer counts 1.1 characters per
// token stops on its first requests with one message saying first that
// the prompts are 2.7 x their plan and naming ANVIL_PROMPT_SIZING=exact;
// with it, the same command succeeds.
func TestReadmeCommandAgainstLlamaCpp(t *testing.T) {
	srv := llamaCppStandIn(t, false, capturedWindow)
	run := func(extra ...string) (string, error) {
		env := []string{standInEnv + "=1", envBaseURL + "=" + srv.URL + "/v1", envProgress + "=0", envOut + "=" + t.TempDir()}
		cmd := childCommand(t, append(env, extra...), "-test.run=^$", "-test.bench=^BenchmarkLlamaCppStandIn$", "-test.benchtime=60x")
		cmd.Dir = t.TempDir()
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	out, err := run()
	require.Error(t, err, "every request is refused over the window")
	require.Regexp(t, `anviltest: capacity run: the server counted the prompts at 2\.7\d x their plan .*ANVIL_PROMPT_SIZING=exact.*; capacity: run stopped early`, out)
	require.Contains(t, out, "4 sent", "the run stops on its first requests")
	require.Contains(t, out, "context window 8192 tokens from /models")

	out, err = run(envPromptSizing + "=exact")
	require.NoError(t, err, "%s", out)
	require.Contains(t, out, "60 succeeded, 0 failed")
	require.NotContains(t, out, "off plan")
}

// TestMooncakeExactSizingAgainstLlamaCpp replays the first 40 rows of the
// Mooncake conversation trace (892 to 87,169 tokens) with
// ANVIL_PROMPT_SIZING=exact against llama.cpp b10573 serving the tiny
// model with a window they fit (its SentencePiece vocabulary, 52 tokens
// of ChatML template), with its /tokenize and /apply-template and behind
// a proxy that passes /v1 alone: every row counts within 1 % of its
// input_length, and the run is on plan. (With the template's tokens left
// in every prompt, 10 of these 40 rows missed 1 %, the worst by 4.8 %.)
func TestMooncakeExactSizingAgainstLlamaCpp(t *testing.T) {
	skipUnderRace(t, "40 trace rows up to 87,169 tokens each, twice")
	for _, tokenize := range []bool{true, false} {
		t.Run(fmt.Sprintf("tokenize=%t", tokenize), func(t *testing.T) {
			srv := llamaCppStandIn(t, tokenize, 1<<17)
			rep := runTraffic(t, capacity.Workload{Concurrency: 8},
				env{envBaseURL: srv.URL + "/v1", envTrace: mooncakeTrace, envTraceFirst: "40", envTraceSpeedUp: "1000", envPromptSizing: "exact"})
			require.Equal(t, 40, rep.Completed, "failures: %+v", rep.Failures)
			ps := rep.AnvilGo.PromptSizing
			require.Equal(t, 52, *ps.TemplateTokens)
			worst := 0.0
			for _, d := range rep.AnvilGo.Requests {
				e := math.Abs(float64(*d.CountedPromptTokens-d.PlannedPromptTokens)) / float64(d.PlannedPromptTokens)
				require.LessOrEqual(t, e, 0.01, "request %d: %d tokens for a plan of %d", d.RequestIndex, *d.CountedPromptTokens, d.PlannedPromptTokens)
				worst = max(worst, e)
			}
			t.Logf("40 rows, %s: largest error %.3f%% (%d calibration requests)", *ps.Source, 100*worst, ps.CalibrationRequests)
			require.Zero(t, ps.OffPlanRequests)
			require.Nil(t, ps.Warning)
			require.True(t, rep.PerformanceEligible)
		})
	}
}
