package capacity

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
)

// usageServer streams a two-chunk answer and then a usage chunk; the
// request that arrives second reports bad (a JSON object's members), the
// others a plausible usage.
func usageServer(bad string) http.Handler {
	var n atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		usage := `"prompt_tokens":400,"completion_tokens":2,"total_tokens":402`
		if n.Add(1) == 2 {
			usage = bad
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"hello\"}}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\" world\"},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{%s}}\n\n", usage)
		fmt.Fprint(w, "data: [DONE]\n\n")
	})
}

// TestRunRefusesImpossibleUsage: every bad value of every usage field fails
// that request only (stream_validation_failed, invalid_usage, naming the
// field and the value); the run completes, its report recomputes and
// carries no negative count.
func TestRunRefusesImpossibleUsage(t *testing.T) {
	const maxTokens = 64
	ok := `"prompt_tokens":400,"completion_tokens":2,"total_tokens":402`
	badValues := []string{`-5`, `-1`, `3.5`, `"12"`, `true`, `{}`, `[1]`, `9223372036854775808`, `1e400`, `-9223372036854775808`}
	type tc struct {
		name, usage, field, value string
	}
	var tests []tc
	for _, field := range []string{"prompt_tokens", "completion_tokens", "total_tokens"} {
		for _, v := range badValues {
			u := strings.Replace(ok, `"`+field+`":`, `"x_`+field+`":`, 1) + `,"` + field + `":` + v
			tests = append(tests, tc{field + "=" + v, u, "usage." + field, v})
		}
	}
	for _, v := range badValues {
		tests = append(tests, tc{"cached_tokens=" + v, ok + `,"prompt_tokens_details":{"cached_tokens":` + v + `}`, "usage.prompt_tokens_details.cached_tokens", v})
	}
	tests = append(tests,
		tc{"completion beyond max_tokens", `"prompt_tokens":400,"completion_tokens":5000000`, "usage.completion_tokens", "5000000"},
		tc{"completion 2^63-1", `"prompt_tokens":400,"completion_tokens":9223372036854775807`, "usage.completion_tokens", "9223372036854775807"},
		tc{"completion one above the tolerance", fmt.Sprintf(`"prompt_tokens":400,"completion_tokens":%d`, maxTokens+client.CompletionTokensTolerance+1), "usage.completion_tokens", fmt.Sprint(maxTokens + client.CompletionTokensTolerance + 1)},
		tc{"cached above prompt", ok + `,"prompt_tokens_details":{"cached_tokens":401}`, "usage.prompt_tokens_details.cached_tokens", "401"},
		tc{"no completion tokens after content", `"prompt_tokens":400,"completion_tokens":0,"total_tokens":400`, "usage.completion_tokens", "0, but 2 chunks of visible content streamed"},
		tc{"cached -100000", ok + `,"prompt_tokens_details":{"cached_tokens":-100000}`, "usage.prompt_tokens_details.cached_tokens", "-100000"},
	)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tg := pipeTarget(t, usageServer(tt.usage))
				rep, err := Run(t.Context(), tg, Workload{Requests: 3, Concurrency: 1, ContextTokens: 512, MaxTokens: maxTokens})
				require.NoError(t, err, "one response never makes Run fail")
				require.Len(t, rep.RequestTimings, 2)
				require.Len(t, rep.Failures, 1)
				f := rep.Failures[0]
				require.Equal(t, 1, f.RequestIndex)
				require.Equal(t, artifact.FailureStreamValidation, f.FailureClass)
				require.Equal(t, client.ErrorTypeInvalidUsage, f.ErrorType)
				require.Contains(t, f.ErrorMessage, tt.field+" is "+tt.value)
				require.NotEmpty(t, rep.MeasurementProtocol)
				require.Equal(t, 3, rep.MetricPopulation.AttemptedRequests)
				if u := f.ResponseMetadata.Usage; u != nil {
					for _, n := range []*int{u.PromptTokens, u.CompletionTokens, u.TotalTokens} {
						require.True(t, n == nil || *n >= 0, "no negative count in the metadata")
					}
				}
				require.Nil(t, rep.Metrics.PrefixCacheHitAvg, "the refused response adds no cache ratio")
				noNegativeNumbers(t, rep)
			})
		})
	}
}

// TestUsageWithinTolerance: completion tokens up to max_tokens +
// client.CompletionTokensTolerance, an integer written as 24.0 and a total that is
// not prompt + completion are accepted.
func TestUsageWithinTolerance(t *testing.T) {
	for _, usage := range []string{
		fmt.Sprintf(`"prompt_tokens":400,"completion_tokens":%d`, 64+client.CompletionTokensTolerance),
		`"prompt_tokens":400.0,"completion_tokens":2.0,"total_tokens":402`,
		`"prompt_tokens":400,"completion_tokens":2,"total_tokens":400`,
		`"prompt_tokens":400,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":400}`,
	} {
		t.Run(usage, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rep, err := Run(t.Context(), pipeTarget(t, usageServer(usage)), Workload{Requests: 3, Concurrency: 1, ContextTokens: 512, MaxTokens: 64})
				require.NoError(t, err)
				require.Empty(t, rep.Failures)
			})
		})
	}
}

// noNegativeNumbers serializes rep and fails on any negative number in it.
func noNegativeNumbers(t *testing.T, rep *artifact.Report) {
	t.Helper()
	var b bytes.Buffer
	_, err := rep.WriteTo(&b)
	require.NoError(t, err)
	back, err := artifact.Read(&b)
	require.NoError(t, err, "the report reads back")
	require.NoError(t, back.Recompute())
	require.NotRegexp(t, `: -[0-9]`, b.String(), "no negative count or rate")
}

// TestReasoningUsedTheBudget: a stream that ends by length with reasoning
// only says that reasoning used the whole max_tokens budget and names
// Workload.MaxTokens; reasoning only without length keeps the plain message.
func TestReasoningUsedTheBudget(t *testing.T) {
	for _, finish := range []string{"length", "stop"} {
		t.Run(finish, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"let me think\"}}]}\n\n")
					fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\" more\"},\"finish_reason\":%q}]}\n\n", finish)
					fmt.Fprint(w, "data: [DONE]\n\n")
				})
				rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 1, Concurrency: 1, ContextTokens: 512, MaxTokens: 48})
				require.NoError(t, err)
				require.Len(t, rep.Failures, 1)
				f := rep.Failures[0]
				require.Equal(t, client.ErrorTypeNoVisibleContent, f.ErrorType)
				if finish == "length" {
					require.Contains(t, f.ErrorMessage, "reasoning used the whole max_tokens budget (48 tokens")
					require.Contains(t, f.ErrorMessage, "Workload.MaxTokens")
				} else {
					require.Contains(t, f.ErrorMessage, "stream completed without visible content (2 reasoning chunks")
				}
			})
		})
	}
}

// TestImpossibleUsageJudgesNoPlan: a server whose every usage object is
// impossible (prompt_tokens 999999999 with completion_tokens -7) fails
// every request as invalid_usage, and its prompt counts feed no plan
// check: the run does not advise exact sizing for a tokenizer that
// "counted the prompts at 244140 x their plan".
func TestImpossibleUsageJudgesNoPlan(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"hello\"},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":999999999,\"completion_tokens\":-7}}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	})
	synctest.Test(t, func(t *testing.T) {
		rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 4, Concurrency: 1, ContextTokens: 512, MaxTokens: 64, KeepGoing: true})
		require.NoError(t, err)
		require.Len(t, rep.Failures, 4)
		for _, f := range rep.Failures {
			require.Equal(t, client.ErrorTypeInvalidUsage, f.ErrorType)
		}
		ps := rep.AnvilGo.PromptSizing
		require.Nil(t, ps.Warning)
		require.Equal(t, 0, ps.CountedRequests)
		require.Equal(t, 0, ps.OffPlanRequests)
	})
}
