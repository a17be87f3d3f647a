package capacity

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// ollamaServer answers as the captured Ollama 0.17.4 does: its /v1/models
// (no context length), /api/ps (the loaded model's 4096-token window),
// /api/show, no /props and no /tokenize, and chat completions streaming
// the captured usage stream with the prompt counted by tinyTokens (the
// template is {{ .Prompt }}), silently cut to the window: a longer prompt
// reports usage.prompt_tokens 4096, as the captured truncated stream does.
type ollamaServer struct {
	models, ps, show, stream []byte
	window                   int
	tokens                   func(string) int // the tokenizer; tinyTokens when nil
	chats, cut               atomic.Int32
}

func newOllamaServer(t testing.TB) *ollamaServer {
	return &ollamaServer{
		models: wiretest.ReadTranscript(t, "ollama-0.17.4-models.json"),
		ps:     wiretest.ReadTranscript(t, "ollama-0.17.4-api-ps.json"),
		show:   wiretest.ReadTranscript(t, "ollama-0.17.4-api-show.json"),
		stream: wiretest.ReadTranscript(t, "ollama-0.17.4-stream-usage.sse"),
		window: 4096,
	}
}

func (s *ollamaServer) handler() http.Handler {
	mux := http.NewServeMux()
	answer := func(body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_, _ = w.Write(body)
		}
	}
	mux.HandleFunc("GET /v1/models", answer(s.models))
	mux.HandleFunc("GET /api/ps", answer(s.ps))
	mux.HandleFunc("POST /api/show", answer(s.show))
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var b llamaCppBody
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil || len(b.Messages) != 1 {
			http.Error(w, `{"error":{"message":"bad body"}}`, http.StatusBadRequest)
			return
		}
		s.chats.Add(1)
		count := s.tokens
		if count == nil {
			count = tinyTokens
		}
		n := count(b.Messages[0].Content)
		if n > s.window {
			s.cut.Add(1)
			n = s.window
		}
		body := capturedPromptTokens.ReplaceAll(s.stream, fmt.Appendf(nil, `"prompt_tokens":%d`, n))
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	})
	return mux
}

// TestExactSizingOllamaTruncation: against Ollama's silent truncation at
// its 4096-token window (from /api/ps), calibration starts small and
// never believes a count at the window, so exact prompts planned at 2000
// and 3000 tokens count within 1 % and none is cut; the run is on plan.
func TestExactSizingOllamaTruncation(t *testing.T) {
	for _, ctx := range []int{2000, 3000} {
		t.Run(fmt.Sprint(ctx), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newOllamaServer(t)
				target := Target{BaseURL: "http://ollama.invalid/v1", HTTPClient: wiretest.Serve(t, srv.handler())}
				rep, err := Run(t.Context(), target, Workload{MaxTokens: 64, Requests: 4, Concurrency: 1, ContextTokens: ctx, PromptSizing: promptSizingExact})
				require.NoError(t, err)
				require.Equal(t, 4, rep.Completed, "failures: %+v", rep.Failures)
				require.Zero(t, srv.cut.Load(), "no prompt was cut")
				require.LessOrEqual(t, slicesMax(countedErrors(t, rep)), 0.01)
				require.Nil(t, rep.AnvilGo.PromptSizing.Warning)
				require.Equal(t, "tiny:latest", rep.Model)
				require.Equal(t, "/api/ps", rep.AnvilGo.ContextWindow.Source)
			})
		})
	}
}

// TestExactSizingStepsBelowACut: a tokenizer denser beyond its first 1000
// characters (0.55 characters per token there) makes the fourfold step
// from the small first prompt overshoot Ollama's window: the cut count is
// not believed, calibration steps back between the believed prompt and
// the cut one, and still ends within its tolerance, so every measured
// prompt is within 1 % and none is cut.
func TestExactSizingStepsBelowACut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newOllamaServer(t)
		srv.tokens = func(s string) int {
			head := min(len(s), 1000)
			return tinyTokens(s[:head]) + (len(s)-head)*20/11
		}
		target := Target{BaseURL: "http://ollama.invalid/v1", HTTPClient: wiretest.Serve(t, srv.handler())}
		rep, err := Run(t.Context(), target, Workload{MaxTokens: 64, Requests: 3, Concurrency: 1, ContextTokens: 3400, PromptSizing: promptSizingExact})
		require.NoError(t, err)
		require.Equal(t, 3, rep.Completed, "failures: %+v", rep.Failures)
		require.EqualValues(t, 1, srv.cut.Load(), "one calibration prompt was cut, no measured one")
		require.LessOrEqual(t, slicesMax(countedErrors(t, rep)), 0.01)
		require.LessOrEqual(t, rep.AnvilGo.PromptSizing.CalibrationRequests, calibrationSteps)
	})
}

// TestExactSizingBelievesNoCutCount: a plan beyond the window the server
// serves (16384 declared, 4096 served by Ollama) cannot be calibrated: a
// count at the served window (/api/ps) is no calibration point, and
// calibration fails saying so, nothing sent. With the model declared too
// /api/ps is still asked, and the sizing fails the same way.
func TestExactSizingBelievesNoCutCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newOllamaServer(t)
		target := Target{BaseURL: "http://ollama.invalid/v1", MaxModelLen: 16384, HTTPClient: wiretest.Serve(t, srv.handler())}
		w := Workload{MaxTokens: 64, Requests: 2, ContextTokens: 8000, PromptSizing: promptSizingExact}
		for _, model := range []string{"", "tiny"} {
			target.Model = model
			_, err := Run(t.Context(), target, w)
			require.ErrorIs(t, err, errPromptSizing)
			t.Log(err)
			require.ErrorContains(t, err, "request 0 is planned at 8000 tokens, at or above 3552, the window of 4096 tokens the server serves")
			require.Zero(t, srv.chats.Load(), "nothing sent")
		}
	})
}

// TestExactSizingBelievesNoCutCountUndeclared: with both the model and the
// window declared and no endpoint advertising one (Ollama without its
// native API), the cut counts are believed as points and fail the ratio
// bound, naming the cut.
func TestExactSizingBelievesNoCutCountUndeclared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newOllamaServer(t)
		target := Target{BaseURL: "http://ollama.invalid/v1", Model: "tiny", MaxModelLen: 16384, HTTPClient: wiretest.Serve(t, withoutNativeAPI(srv.handler()))}
		_, err := Run(t.Context(), target, Workload{MaxTokens: 64, Requests: 2, ContextTokens: 8000, PromptSizing: promptSizingExact})
		require.ErrorIs(t, err, errPromptSizing)
		t.Log(err)
		require.ErrorContains(t, err, "= 4096 tokens imply")
		require.ErrorContains(t, err, "cut to the server's window")
	})
}

// withoutNativeAPI answers 404 to Ollama's /api/ paths and serves the
// rest with h: an Ollama behind a proxy that passes only /v1.
func withoutNativeAPI(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// TestDeclaredWindowAboveAdvertised: ANVIL_MAX_MODEL_LEN 16384 against
// Ollama serving 4096 (/api/ps): the disagreement is named in the
// artifact, and the truncation checks use 4096, so every reference
// prompt planned at 8000 tokens fails as cut to the window instead of
// passing as eligible.
func TestDeclaredWindowAboveAdvertised(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newOllamaServer(t)
		target := Target{BaseURL: "http://ollama.invalid/v1", MaxModelLen: 16384, HTTPClient: wiretest.Serve(t, srv.handler())}
		rep, err := Run(t.Context(), target, Workload{MaxTokens: 64, Requests: 3, Concurrency: 1, ContextTokens: 8000})
		require.NoError(t, err)
		cw := rep.AnvilGo.ContextWindow
		require.Equal(t, 16384, cw.Tokens)
		require.Equal(t, "Target.MaxModelLen", cw.Source)
		require.Equal(t, 4096, *cw.Advertised)
		require.Equal(t, "/api/ps", *cw.AdvertisedSource)
		require.Equal(t, 4096, cw.TruncationWindow)
		require.NotNil(t, cw.Note)
		require.Contains(t, *cw.Note, "Target.MaxModelLen 16384 is above the window of 4096 tokens the server advertises (/api/ps)")
		require.Zero(t, rep.Completed)
		for _, f := range rep.Failures {
			require.Equal(t, artifact.FailureStreamValidation, f.FailureClass)
			require.Equal(t, client.ErrorTypePromptTruncated, f.ErrorType)
			require.Contains(t, f.ErrorMessage, "context window of 4096 tokens")
		}
	})
}

// TestDeclaredWindowsCompared: with both Target.Model and
// Target.MaxModelLen declared the server is still asked, so Ollama's
// 4096-token window (/api/ps) is named against the declared 16384 and
// every prompt it cut fails as truncated, naming where the window came
// from.
func TestDeclaredWindowsCompared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newOllamaServer(t)
		target := Target{BaseURL: "http://ollama.invalid/v1", Model: "tiny", MaxModelLen: 16384, HTTPClient: wiretest.Serve(t, srv.handler())}
		rep, err := Run(t.Context(), target, Workload{MaxTokens: 64, Requests: 3, Concurrency: 1, ContextTokens: 8000})
		require.NoError(t, err)
		require.Zero(t, rep.Completed)
		require.Equal(t, "tiny", rep.Model, "the declared model is sent")
		cw := rep.AnvilGo.ContextWindow
		require.Equal(t, 4096, cw.TruncationWindow)
		require.Equal(t, "/api/ps", *cw.AdvertisedSource)
		require.Contains(t, *cw.Note, "Target.MaxModelLen 16384 is above the window of 4096 tokens the server advertises (/api/ps)")
		require.Len(t, rep.Failures, 3)
		for _, f := range rep.Failures {
			require.Equal(t, client.ErrorTypePromptTruncated, f.ErrorType)
			require.Contains(t, f.ErrorMessage, "the context window of 4096 tokens the server advertises (/api/ps)")
		}
	})
}

// TestDeclaredWindowsHideTruncation: with both Target.Model and
// Target.MaxModelLen declared and no endpoint advertising a window,
// Ollama's cut to 4096 passes the truncation checks of a 16384 window;
// the plan check still says the prompts counted short, all at exactly
// 4096, and what that means.
func TestDeclaredWindowsHideTruncation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newOllamaServer(t)
		target := Target{BaseURL: "http://ollama.invalid/v1", Model: "tiny", MaxModelLen: 16384, HTTPClient: wiretest.Serve(t, withoutNativeAPI(srv.handler()))}
		rep, err := Run(t.Context(), target, Workload{MaxTokens: 64, Requests: 3, Concurrency: 1, ContextTokens: 8000})
		require.NoError(t, err)
		require.Equal(t, 3, rep.Completed, "the cut prompts pass the truncation checks of the declared window")
		require.Equal(t, artifact.ContextWindow{Tokens: 16384, Source: "Target.MaxModelLen", TruncationWindow: 16384}, *rep.AnvilGo.ContextWindow)
		w := rep.AnvilGo.PromptSizing.Warning
		require.NotNil(t, w)
		require.Contains(t, *w, "at 0.51 x their plan")
		require.Contains(t, *w, "the 3 counted short of their plan all counted exactly 4096 tokens: a server that cuts prompts to a window of 4096")
	})
}

// TestDeclaredWindowBelowAdvertised: a declared window smaller than the
// one llama.cpp serves (/v1/models meta.n_ctx 8192) is named, and a
// prompt counted above the declared window but within the served one is
// not reported as cut to the window: nothing was cut.
func TestDeclaredWindowBelowAdvertised(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newLlamaCppServer(t)
		target := Target{BaseURL: "http://llama.invalid/v1", MaxModelLen: 4096, HTTPClient: wiretest.Serve(t, srv.handler())}
		rep, err := Run(t.Context(), target, Workload{MaxTokens: 64, Requests: 2, Concurrency: 1, ContextTokens: 2000})
		require.NoError(t, err)
		require.Equal(t, 2, rep.Completed, "failures: %+v", rep.Failures)
		for _, row := range rep.RequestTimings {
			require.Greater(t, *row.PromptTokens, 4096, "counted above the declared window")
		}
		cw := rep.AnvilGo.ContextWindow
		require.Equal(t, 8192, cw.TruncationWindow)
		require.Contains(t, *cw.Note, "below the window of 8192 tokens the server advertises (/models)")
		require.True(t, strings.Contains(*rep.AnvilGo.PromptSizing.Warning, "x their plan"))
	})
}

// TestDiscover: the exported discovery answers what Run plans with, for
// each captured server and a declared window.
func TestDiscover(t *testing.T) {
	llama, ollama := newLlamaCppServer(t), newOllamaServer(t)
	tests := []struct {
		name string
		t    Target
		want Discovery
	}{
		{"llama.cpp", Target{BaseURL: "http://llama.invalid/v1", HTTPClient: wiretest.Serve(t, llama.handler())},
			Discovery{Model: "tiny.gguf", ModelSource: "/models", Window: 8192, WindowSource: "/models",
				Advertised: 8192, AdvertisedSource: "/models", AdvertisedField: "meta.n_ctx", Listed: []string{"tiny.gguf"},
				TruncationWindow: 8192, Slots: 4, SlotsSource: "/props",
				Asked: []string{"GET /models: 1 model, window 8192 (meta.n_ctx)", "GET /props: answered, window 8192, 4 slots"}}},
		{"ollama", Target{BaseURL: "http://ollama.invalid/v1", HTTPClient: wiretest.Serve(t, ollama.handler())},
			Discovery{Model: "tiny:latest", ModelSource: "/models", Window: 4096, WindowSource: "/api/ps",
				Advertised: 4096, AdvertisedSource: "/api/ps", Listed: []string{"tiny:latest"}, TruncationWindow: 4096,
				Asked: []string{"GET /models: 1 model, no window", "GET /props: HTTP 404 Not Found", "GET /api/ps: answered, window 4096"}}},
		{"declared", Target{BaseURL: "http://ollama.invalid/v1", Model: "tiny", MaxModelLen: 2048, HTTPClient: wiretest.Serve(t, ollama.handler())},
			Discovery{Model: "tiny", ModelSource: "Target.Model", Window: 2048, WindowSource: "Target.MaxModelLen",
				Advertised: 4096, AdvertisedSource: "/api/ps", Listed: []string{"tiny:latest"}, TruncationWindow: 4096,
				Asked: []string{"GET /models: 1 model, no window", "GET /props: HTTP 404 Not Found", "GET /api/ps: answered, window 4096"},
				Note:  "Target.MaxModelLen 2048 is below the window of 4096 tokens the server advertises (/api/ps): prompts are planned for 2048, and only a count at or above 4096 is a prompt cut to the server's window"}},
		{"declared, no native API", Target{BaseURL: "http://ollama.invalid/v1", Model: "tiny", MaxModelLen: 2048, HTTPClient: wiretest.Serve(t, withoutNativeAPI(ollama.handler()))},
			Discovery{Model: "tiny", ModelSource: "Target.Model", Window: 2048, WindowSource: "Target.MaxModelLen", Listed: []string{"tiny:latest"}, TruncationWindow: 2048,
				Asked: []string{"GET /models: 1 model, no window", "GET /props: HTTP 404 Not Found", "GET /api/ps: HTTP 404 Not Found", "POST /api/show: HTTP 404 Not Found"}}},
		{"declared, /models refused", Target{BaseURL: "http://ollama.invalid/v1", Model: "tiny", MaxModelLen: 2048, HTTPClient: wiretest.Serve(t, withoutModels(ollama.handler()))},
			Discovery{Model: "tiny", ModelSource: "Target.Model", Window: 2048, WindowSource: "Target.MaxModelLen",
				ModelsError: "capacity: the endpoint refused the requests: model probe GET http://ollama.invalid/v1/models: HTTP 404 Not Found: no such route",
				Advertised:  4096, AdvertisedSource: "/api/ps", TruncationWindow: 4096,
				Asked: []string{"GET /models: HTTP 404 Not Found: no such route", "GET /props: HTTP 404 Not Found", "GET /api/ps: answered, window 4096"},
				Note:  "Target.MaxModelLen 2048 is below the window of 4096 tokens the server advertises (/api/ps): prompts are planned for 2048, and only a count at or above 4096 is a prompt cut to the server's window"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Discover(t.Context(), tt.t)
			require.NoError(t, err)
			require.Equal(t, tt.want, d)
		})
	}
}

// TestDiscoverError: a discovery that fails still returns what it
// learned: the model list and the slots when no window was found, why
// /models gave no list when it gave none.
func TestDiscoverError(t *testing.T) {
	ollama := newOllamaServer(t)
	d, err := Discover(t.Context(), Target{BaseURL: "http://ollama.invalid/v1", HTTPClient: wiretest.Serve(t, withoutNativeAPI(ollama.handler()))})
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.Equal(t, Discovery{Model: "tiny:latest", ModelSource: "/models", Listed: []string{"tiny:latest"},
		Asked: []string{"GET /models: 1 model, no window", "GET /props: HTTP 404 Not Found", "GET /api/ps: HTTP 404 Not Found", "POST /api/show: HTTP 404 Not Found"}}, d, "no window, so no source")

	d, err = Discover(t.Context(), Target{BaseURL: "http://ollama.invalid/v1", Model: "tiny", HTTPClient: wiretest.Serve(t, withoutModels(ollama.handler()))})
	require.ErrorIs(t, err, ErrEndpointRefused)
	require.Equal(t, Discovery{Model: "tiny", ModelSource: "Target.Model",
		ModelsError: "capacity: the endpoint refused the requests: model probe GET http://ollama.invalid/v1/models: HTTP 404 Not Found: no such route",
		Asked:       []string{"GET /models: HTTP 404 Not Found: no such route"}}, d, "no window, so no source")
}

// withoutModels answers 404 to GET /v1/models and serves the rest with h.
func withoutModels(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			http.Error(w, "no such route", http.StatusNotFound)
			return
		}
		h.ServeHTTP(w, r)
	})
}
