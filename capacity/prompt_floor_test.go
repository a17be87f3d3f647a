package capacity

import (
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/prompt"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// truncatedTranscript is ollama's answer to a 57,380-character prompt that it
// silently cut to its 4,096-token window (usage.prompt_tokens 4096).
const truncatedTranscript = "ollama-0.17.4-stream-long-prompt-truncated.sse"

// truncatedPlan is the capture's prompt as a plan: the context whose prompt
// is the capture's 57,380 characters at prompt.CharsPerToken.
const truncatedPlan = 19126

// replayTruncated serves the truncated-prompt capture to every request.
func replayTruncated(t *testing.T) Target {
	c := loadCapture(t, "ollama-0.17.4-stream-usage.headers", truncatedTranscript)
	return Target{BaseURL: "http://replay.invalid/v1", Model: "tiny", HTTPClient: wiretest.Serve(t, replay(c, nil, nil))}
}

// TestRunTruncatedPromptFails: a response whose usage.prompt_tokens fell far
// below the plan is a stream_validation_failed failure naming both numbers
// and the floor; it keeps its timing row and metadata and is no latency
// sample.
func TestRunTruncatedPromptFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tg := replayTruncated(t)
		tg.MaxModelLen = 32768
		rep, err := Run(t.Context(), tg, Workload{Requests: 2, Concurrency: 1, ContextTokens: truncatedPlan, Warmup: 1})
		require.NoError(t, err)
		require.Equal(t, 57378, prompt.Chars(truncatedPlan), "the capture's prompt, to a token")
		require.Empty(t, rep.RequestTimings)
		require.Len(t, rep.Failures, 2)
		require.False(t, rep.PerformanceEligible)
		require.Zero(t, rep.Metrics.TTFT.Samples, "never a latency sample")
		require.Equal(t, 2, rep.ResponsesReceived)
		for i, f := range rep.Failures {
			require.Equal(t, i, f.RequestIndex)
			require.Equal(t, artifact.FailureStreamValidation, f.FailureClass)
			require.Equal(t, client.ErrorTypePromptTruncated, f.ErrorType)
			require.Equal(t, fmt.Sprintf("prompt truncated: usage.prompt_tokens 4096 is at or below the floor of 9563 tokens (0.5 of the planned context of %d tokens): the server dropped part of the prompt", truncatedPlan), f.ErrorMessage)
			require.Equal(t, truncatedPlan, f.PlannedContextTokens)
			require.True(t, f.ResponseReceived)
			require.Equal(t, 200, *f.HTTPStatus)
			require.NotNil(t, f.ResponseTiming, "the timing row is kept")
			require.Equal(t, 4096, *f.ResponseTiming.PromptTokens)
			require.Equal(t, truncatedPlan, f.ResponseTiming.PlannedContextTokens)
			require.Equal(t, 8, *f.ResponseTiming.OutputTokens)
			md := f.ResponseMetadata
			require.NotNil(t, md)
			require.Equal(t, 4096, *md.Usage.PromptTokens)
			require.Equal(t, artifact.SourceUsage, md.OutputTokenSource)
			require.True(t, md.StreamTerminalObserved)
			require.Equal(t, []string{"length"}, md.FinishReasons)
		}
	})
}

// TestTruncatedPromptFloorUsesClampedPlan: the floor applies to the context
// the prompt was built for. Against an 8,192-token model the same plan is
// clamped to the prompt budget, and 4,096 prompt tokens are then within the
// floor of what was sent.
func TestTruncatedPromptFloorUsesClampedPlan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tg := replayTruncated(t)
		tg.MaxModelLen = 8192
		rep, err := Run(t.Context(), tg, Workload{Requests: 2, Concurrency: 1, ContextTokens: truncatedPlan})
		require.NoError(t, err)
		budget := 8192 - defaultMaxTokens - defaultMargin
		require.Empty(t, rep.Failures)
		require.Len(t, rep.RequestTimings, 2)
		for _, row := range rep.RequestTimings {
			require.Equal(t, budget, row.PlannedContextTokens)
			require.Equal(t, 4096, *row.PromptTokens)
		}
		require.Equal(t, map[int]int{budget: 2}, rep.ContextDistribution)
	})
}

// TestWarmupSkipsPromptFloor: warm-up responses are not held to the floor
// (their results are discarded); measured ones are.
func TestWarmupSkipsPromptFloor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tg := replayTruncated(t)
		tg.MaxModelLen = 32768
		w, err := Workload{Requests: 1, Concurrency: 1, ContextTokens: truncatedPlan, Warmup: 1}.Resolved()
		require.NoError(t, err)
		plan, err := newPlan(w, tg.MaxModelLen, defaultMargin, "")
		require.NoError(t, err)
		cfg := clientConfig(tg, w, tg.HTTPClient, "")
		cfg.Checks.Window = plan.MaxModelLen
		cl, err := client.New(cfg)
		require.NoError(t, err)
		enc, err := newRequestEncoder(client.ChatCompletions, tg, w)
		require.NoError(t, err)
		r := &runner{plan: plan, cl: cl, enc: enc, concurrency: 1}
		warm := r.one(t.Context(), 0, true, nil, nil, false)
		require.Nil(t, warm.Fail)
		require.NotNil(t, warm.Row)
		measured := r.one(t.Context(), 0, false, client.NewChunkTimer(client.NewChunkRun(stallRule(w), 0)), nil, false)
		require.NotNil(t, measured.Fail)
		require.Contains(t, measured.Fail.ErrorMessage, "usage.prompt_tokens 4096 is at or below the floor")
	})
}

// TestFakeTokenizerWithinPromptFloor: the fake server's default tokenizer
// (the seed model's characters per token) never trips the floor, at the
// smallest context, a small and a large one, a clamped one, with and
// without the shared prefix and in unique mode.
func TestFakeTokenizerWithinPromptFloor(t *testing.T) {
	skipUnderRace(t, "twelve runs up to 131,072-token prompts")
	cfg := fakeserver.Fast()
	cfg.MaxModelLen = 131072
	for _, context := range []int{minContextTokens, 4096, 65536, 131072} {
		for _, prefix := range []struct {
			name   string
			tokens int
			mode   PromptCacheMode
		}{
			{"shared prefix", 0, promptCacheShared},
			{"no prefix", None, promptCacheShared},
			{"unique", 0, promptCacheUnique},
		} {
			t.Run(fmt.Sprintf("%d %s", context, prefix.name), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					rep, err := runFake(t, cfg, Workload{Requests: 3, Concurrency: 2, ContextTokens: context,
						SharedPrefixTokens: prefix.tokens, PromptCacheMode: prefix.mode, Warmup: 1})
					require.NoError(t, err)
					require.Empty(t, rep.Failures)
					require.Len(t, rep.RequestTimings, 3)
					for _, row := range rep.RequestTimings {
						planned := min(context, cfg.MaxModelLen-defaultMaxTokens-defaultMargin)
						require.Equal(t, planned, row.PlannedContextTokens)
						require.GreaterOrEqual(t, float64(*row.PromptTokens), client.MinPromptTokenFraction*float64(planned))
					}
				})
			})
		}
	}
}

// TestRunTruncatedPromptOllamaNumbers: ollama 0.17.4 keeps exactly its
// 4,096-token window of a longer prompt and reports prompt_tokens 4096 with
// 8 completion tokens. Every way this shows in usage fails as a truncated
// prompt: exactly half of a planned 8,192; at the window the run planned
// for (the plan clamped to ollama's window); prompt plus completion beyond
// the window. A window that holds the answer keeps it a sample.
func TestRunTruncatedPromptOllamaNumbers(t *testing.T) {
	tests := []struct {
		name        string
		maxModelLen int
		margin      int
		maxTokens   int
		context     int
		message     string // "" for a success
	}{
		{"half of a planned 8192", 32768, 0, referenceMaxTokens, 8192, "usage.prompt_tokens 4096 is at or below the floor of 4096 tokens (0.5 of the planned context of 8192 tokens)"},
		{"clamped to the 4096 window", 4096, 0, referenceMaxTokens, 8192, "usage.prompt_tokens 4096 is at or above the context window of 4096 tokens declared (Target.MaxModelLen) for a planned context of 3008 tokens: the server cut the prompt to a window of that size, or it serves a larger window than declared"},
		{"prompt and completion beyond the window", 4100, None, 8, 8192, "usage.prompt_tokens 4096 + completion_tokens 8 exceed the context window of 4100 tokens"},
		{"a window that holds it", 4104, None, 8, 8192, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tg := replayTruncated(t)
				tg.MaxModelLen, tg.Margin = tt.maxModelLen, tt.margin
				rep, err := Run(t.Context(), tg, Workload{Requests: 2, Concurrency: 1, ContextTokens: tt.context, MaxTokens: tt.maxTokens})
				require.NoError(t, err)
				if tt.message == "" {
					require.Empty(t, rep.Failures)
					require.True(t, rep.PerformanceEligible)
					return
				}
				require.Len(t, rep.Failures, 2)
				require.False(t, rep.PerformanceEligible)
				for _, f := range rep.Failures {
					require.Equal(t, client.ErrorTypePromptTruncated, f.ErrorType)
					require.Contains(t, f.ErrorMessage, tt.message)
				}
				for _, row := range rep.RequestTimings {
					require.LessOrEqual(t, *row.PromptTokens+*row.OutputTokens, *rep.MaxContextTokens, "never eligible beyond the window")
				}
			})
		})
	}
}
