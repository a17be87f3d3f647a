package capacity

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// runAPI runs w over api against a fake of cfg in the current bubble.
func runAPI(t *testing.T, cfg fakeserver.Config, api string, w Workload) *artifact.Report {
	t.Helper()
	srv := fakeserver.NewInMemory(cfg)
	t.Cleanup(srv.Close)
	rep, err := Run(t.Context(), Target{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client(), API: api}, w)
	require.NoError(t, err, api)
	synctest.Wait()
	return rep
}

// TestAPIsOneWorkload runs one planned workload over chat, Responses and
// Messages against one fake config (each its own server, so that every
// run starts cold): the same prompt text, so the same prompt tokens in
// every row, the same output tokens, and on the fake's clock the same
// TTFT, TTFO and E2E (the framing costs no fake time); over completions
// the prompt without the chat template and no reasoning.
func TestAPIsOneWorkload(t *testing.T) {
	w := Workload{Requests: 6, Concurrency: 1, ContextTokens: 1024, MaxTokens: 256, Seed: 3}
	reps := map[string]*artifact.Report{}
	for _, api := range []string{"chat", "responses", "messages", "completions"} {
		synctest.Test(t, func(t *testing.T) {
			cfg := fakeserver.Fast()
			cfg.ReasoningTokens = fakeserver.Range{Min: 8, Max: 16}
			reps[api] = runAPI(t, cfg, api, w)
		})
		rep := reps[api]
		require.Empty(t, rep.Failures, api)
		require.Len(t, rep.RequestTimings, w.Requests, api)
		assert.Equal(t, api, artifact.APIOf(rep))
	}
	chat := reps["chat"]
	for _, api := range []string{"responses", "messages"} {
		for i, row := range reps[api].RequestTimings {
			want := chat.RequestTimings[i]
			assert.Equal(t, *want.PromptTokens, *row.PromptTokens, "%s row %d", api, i)
			assert.Equal(t, *want.OutputTokens, *row.OutputTokens, "%s row %d", api, i)
			assert.Equal(t, want.ReasoningChunks, row.ReasoningChunks, "%s row %d", api, i)
			assert.Equal(t, want.ContentChunks, row.ContentChunks, "%s row %d", api, i)
			assert.Equal(t, want.TTFTMS, row.TTFTMS, "%s row %d", api, i)
			assert.Equal(t, want.TimeToFirstOutputMS, row.TimeToFirstOutputMS, "%s row %d", api, i)
			assert.Equal(t, want.E2EMS, row.E2EMS, "%s row %d", api, i)
		}
	}
	for i, row := range reps["completions"].RequestTimings {
		assert.Less(t, *row.PromptTokens, *chat.RequestTimings[i].PromptTokens, "no chat template")
		assert.Zero(t, row.ReasoningChunks)
	}
}

// TestEmbeddingsRun runs embeddings against the fake: one row per request
// with its latency and input tokens and no token times, the reason in the
// artifact; the fake's broken answers are failures of their own class.
func TestEmbeddingsRun(t *testing.T) {
	w := Workload{Requests: 4, Concurrency: 2, ContextTokens: 1024}
	synctest.Test(t, func(t *testing.T) {
		rep := runAPI(t, fakeserver.Fast(), "embeddings", w)
		require.Empty(t, rep.Failures)
		require.Len(t, rep.RequestTimings, 4)
		for _, row := range rep.RequestTimings {
			assert.False(t, row.TokenTimed())
			assert.Positive(t, row.E2EMS)
			assert.Greater(t, *row.PromptTokens, 500)
		}
		assert.Zero(t, rep.Metrics.TTFT.Samples)
		assert.Equal(t, 4, rep.Metrics.E2E.Samples)
		require.NotNil(t, rep.AnvilGo.Run.AbsentTimings)
		assert.Contains(t, *rep.AnvilGo.Run.AbsentTimings, "embeddings generate no token")
		for _, d := range rep.AnvilGo.Requests {
			assert.Nil(t, d.FirstOutputMS)
			assert.Nil(t, d.ScheduledTTFTMS)
			assert.NotNil(t, d.ScheduledE2EMS)
		}
		_, err := SLO{TTFT: 100 * time.Millisecond}.Evaluate(rep)
		assert.ErrorContains(t, err, "generated no token")
		res, err := SLO{E2E: time.Hour}.Evaluate(rep)
		require.NoError(t, err)
		assert.Equal(t, 4, res.MetRequests)
	})
	// A steady window of an embeddings run: its trend on completions
	// alone, its metrics without TTFT or TTFO.
	synctest.Test(t, func(t *testing.T) {
		cfg := fakeserver.Fast()
		rep := runAPI(t, cfg, "embeddings", Workload{Requests: 600, Concurrency: 4, ContextTokens: 1024})
		require.Empty(t, rep.Failures)
		st := rep.AnvilGo.Steady
		require.NotNil(t, st)
		require.True(t, st.Found, "%v", st.Reason)
		assert.Nil(t, st.TTFTZ)
		assert.NotNil(t, st.CompletionsZ)
		assert.Nil(t, st.TTFTP50MS)
		assert.Nil(t, st.TTFOP50MS)
		assert.NotNil(t, st.E2EP50MS)
	})
	for _, tc := range []struct {
		fault   fakeserver.Fault
		errType string
	}{
		{"vector_count", "vector_count"},
		{"vector_nan", "vector_value"},
		{"vector_dimension", "vector_dimension"},
	} {
		synctest.Test(t, func(t *testing.T) {
			cfg := fakeserver.Fast()
			cfg.Faults.ByIndex = map[int]fakeserver.Fault{1: tc.fault}
			rep := runAPI(t, cfg, "embeddings", Workload{Requests: 3, Concurrency: 1, ContextTokens: 1024})
			require.Len(t, rep.Failures, 1, tc.fault)
			f := rep.Failures[0]
			assert.Equal(t, artifact.FailureEmbeddingsInvalid, f.FailureClass)
			assert.Equal(t, tc.errType, f.ErrorType)
			assert.Equal(t, 1, f.RequestIndex)
		})
	}
}

// TestAPISourceRequests: a Source's conversation is an embeddings batch
// (one vector per message) and is refused over completions, whose prompt
// is bare text; its body fields are refused by the API's own reserved set.
func TestAPISourceRequests(t *testing.T) {
	conversation := SourceFunc(func(_ context.Context, i int) (Request, error) {
		return Request{Messages: []Message{{Role: "user", Content: "one"}, {Role: "assistant", Content: "two"}, {Role: "user", Content: "three"}}}, nil
	})
	synctest.Test(t, func(t *testing.T) {
		rep := runAPI(t, fakeserver.Fast(), "embeddings", Workload{Requests: 2, Concurrency: 1, ContextTokens: 1024, Source: conversation})
		require.Empty(t, rep.Failures)
		require.Len(t, rep.RequestTimings, 2)
	})
	synctest.Test(t, func(t *testing.T) {
		cfg := fakeserver.Fast()
		cfg.Faults.ByIndex = map[int]fakeserver.Fault{0: "vector_count"}
		rep := runAPI(t, cfg, "embeddings", Workload{Requests: 1, Concurrency: 1, ContextTokens: 1024, Source: conversation})
		require.Len(t, rep.Failures, 1)
		assert.Equal(t, "vector_count", rep.Failures[0].ErrorType)
		assert.Contains(t, rep.Failures[0].ErrorMessage, "for 3 inputs")
	})
	synctest.Test(t, func(t *testing.T) {
		rep := runAPI(t, fakeserver.Fast(), "completions", Workload{Requests: 1, Concurrency: 1, ContextTokens: 1024, Source: conversation})
		require.Len(t, rep.Failures, 1)
		assert.Contains(t, rep.Failures[0].ErrorMessage, "not a conversation")
	})
	synctest.Test(t, func(t *testing.T) {
		src := SourceFunc(func(_ context.Context, i int) (Request, error) {
			return Request{PromptTokens: 200, Body: map[string]json.RawMessage{"max_output_tokens": json.RawMessage("9")}}, nil
		})
		rep := runAPI(t, fakeserver.Fast(), "responses", Workload{Requests: 1, Concurrency: 1, ContextTokens: 1024, Source: src})
		require.Len(t, rep.Failures, 1)
		assert.Contains(t, rep.Failures[0].ErrorMessage, `"max_output_tokens" is set by Workload.MaxTokens`)
	})
}

// TestAPIRefusals: what a workload asks that an API has no field for is
// refused before any request, as is an API of no name and an extra body
// field the API's own body writes.
func TestAPIRefusals(t *testing.T) {
	base := Workload{Requests: 1, Concurrency: 1, ContextTokens: 1024}
	for _, tc := range []struct {
		api   string
		edit  func(*Workload, *Target)
		field string
	}{
		{"grpc", func(*Workload, *Target) {}, "Target.API"},
		{"messages", func(w *Workload, _ *Target) { w.ReasoningEffort = "low" }, "Workload.ReasoningEffort"},
		{"completions", func(w *Workload, _ *Target) { w.ThinkingMode = thinkingEnabled }, "Workload.ThinkingMode"},
		{"embeddings", func(w *Workload, _ *Target) { w.RequestCanaries = true }, "Workload.RequestCanaries"},
		{"embeddings", func(w *Workload, _ *Target) { w.ResponseWords = 4 }, "Workload.ResponseWords"},
		{"chat", func(w *Workload, _ *Target) { w.EncodingFormat = "base64" }, "Workload.EncodingFormat"},
		{"embeddings", func(w *Workload, _ *Target) { w.EncodingFormat = "int8" }, "Workload.EncodingFormat"},
		{"responses", func(_ *Workload, tg *Target) { tg.ExtraBody = map[string]any{"max_output_tokens": 4} }, "Target.ExtraBody"},
		{"messages", func(_ *Workload, tg *Target) { tg.ExtraBody = map[string]any{"system": "x"} }, "Target.ExtraBody"},
		{"embeddings", func(_ *Workload, tg *Target) { tg.ExtraBody = map[string]any{"encoding_format": "float"} }, "Target.ExtraBody"},
	} {
		synctest.Test(t, func(t *testing.T) {
			srv := fakeserver.NewInMemory(fakeserver.Fast())
			defer srv.Close()
			w, tg := base, Target{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client(), API: tc.api}
			tc.edit(&w, &tg)
			_, err := Run(t.Context(), tg, w)
			require.ErrorIs(t, err, ErrInvalidConfig, tc.field)
			assert.ErrorContains(t, err, tc.field)
			assert.Empty(t, srv.Traces(), "refused before any request")
		})
	}
	// A field of another API's body is the extra field it is.
	synctest.Test(t, func(t *testing.T) {
		srv := fakeserver.NewInMemory(fakeserver.Fast())
		defer srv.Close()
		_, err := Run(t.Context(), Target{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client(), API: "responses",
			ExtraBody: map[string]any{"max_tokens": 4}}, base)
		require.NoError(t, err)
	})
}

// TestAPITokenizerConfig: exact sizing counts a bare prompt
// (completions, embeddings) as bare text, the others' with the chat
// template (tokenize.Config.Bare).
func TestAPITokenizerConfig(t *testing.T) {
	for api, bare := range map[string]bool{"": false, "chat": false, "responses": false, "messages": false, "completions": true, "embeddings": true} {
		assert.Equal(t, bare, tokenizeConfig(Target{API: api}, Workload{}).Bare, "API %q", api)
	}
}
