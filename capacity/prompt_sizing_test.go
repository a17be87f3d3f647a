package capacity

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/budget"
	"github.com/anvilbench/anvil/capacity/internal/prompt"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// wordsDigitsTokens is the independent server's tokenizer: a maximal run
// of letters is one token, every digit is one token, every other
// character that is not white space is one token, and white space is
// free. The code-like filler is about 3.7 characters per token by this
// rule, and the ratio changes with the number of digits of the line
// numbers, so no fixed ratio predicts it. One more character never adds
// more than one token, so some filler length always counts the plan.
func wordsDigitsTokens(s string) int {
	n, inWord := 0, false
	for _, r := range s {
		letter := unicode.IsLetter(r)
		switch {
		case letter && inWord:
		case letter, unicode.IsDigit(r):
			n++
		case !unicode.IsSpace(r):
			n++
		}
		inWord = letter
	}
	return n
}

// templateTokens are what the independent server's chat template adds to
// every chat request's count.
const templateTokens = 7

// tokenizingServer is an OpenAI-compatible server, independent of the
// fake, that counts prompts with wordsDigitsTokens. tokenize selects its
// tokenizer endpoint: "" none, "llama.cpp" POST /tokenize {"content"}
// answering {"tokens"} (bare text, no template), "vllm" POST /v1/tokenize
// {"messages"} answering {"count"} (the template included).
type tokenizingServer struct {
	tokenize string
	// overcount makes chat requests count that share more than the
	// tokenizer endpoint does (a template or a tokenizer it does not
	// apply): 0.2 counts 1.2 times.
	overcount    float64
	chats        atomic.Int32
	oneTokenChat atomic.Int32 // chat requests with max_tokens 1
	tokenizes    atomic.Int32
}

func (s *tokenizingServer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	switch s.tokenize {
	case "llama.cpp":
		mux.HandleFunc("POST /tokenize", s.serveTokenize)
	case "vllm":
		mux.HandleFunc("POST /v1/tokenize", s.serveTokenize)
	}
	return mux
}

type chatBody struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	Messages  []struct {
		Content string `json:"content"`
	} `json:"messages"`
	Prompt  *string `json:"prompt"`
	Content *string `json:"content"`
}

func (b chatBody) chatTokens() int {
	n := templateTokens
	for _, m := range b.Messages {
		n += wordsDigitsTokens(m.Content)
	}
	return n
}

func (s *tokenizingServer) chat(w http.ResponseWriter, r *http.Request) {
	var b chatBody
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.chats.Add(1)
	if b.MaxTokens == 1 {
		s.oneTokenChat.Add(1)
	}
	n := int(math.Round(float64(b.chatTokens()) * (1 + s.overcount)))
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\n"+
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":1,\"total_tokens\":%d}}\n\ndata: [DONE]\n\n", n, n+1)
}

func (s *tokenizingServer) serveTokenize(w http.ResponseWriter, r *http.Request) {
	var b chatBody
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.tokenizes.Add(1)
	w.Header().Set("Content-Type", "application/json")
	switch {
	case s.tokenize == "llama.cpp" && b.Content != nil:
		ids := make([]int, wordsDigitsTokens(*b.Content))
		_ = json.NewEncoder(w).Encode(map[string]any{"tokens": ids})
	case s.tokenize == "vllm" && len(b.Messages) > 0:
		_ = json.NewEncoder(w).Encode(map[string]any{"count": b.chatTokens(), "max_model_len": 32768, "tokens": []int{}})
	default:
		http.Error(w, `{"error":"unsupported request shape"}`, http.StatusBadRequest)
	}
}

// countedErrors returns every measured request's relative prompt error.
func countedErrors(t *testing.T, rep *artifact.Report) []float64 {
	t.Helper()
	var errs []float64
	for _, row := range rep.RequestTimings {
		require.NotNil(t, row.PromptTokens)
		errs = append(errs, math.Abs(float64(*row.PromptTokens-row.PlannedContextTokens))/float64(row.PlannedContextTokens))
		d := rep.AnvilGo.Request(row.RequestIndex)
		require.Equal(t, *row.PromptTokens, *d.CountedPromptTokens)
		require.Equal(t, row.PlannedContextTokens, d.PlannedPromptTokens)
	}
	return errs
}

// TestExactSizingIndependentServer is the acceptance test of exact
// sizing: against a server whose tokenizer counts words and digits, every
// prompt of a 16-request, 16,000-token plan is counted within 1 % of the
// plan; exactly when the server has a tokenizer endpoint (llama.cpp's at
// the root, or vLLM's chat form under /v1), from calibration requests
// without one. Reference sizing misses by far more.
func TestExactSizingIndependentServer(t *testing.T) {
	skipUnderRace(t, "three 16-request plans of 16,000-token prompts")
	tests := []struct {
		tokenize    string
		source      string
		path        *string
		exact       bool
		calibration int
	}{
		{"", sizingSourceCalibration, nil, false, 4}, // grown from a small prompt
		{"llama.cpp", sizingSourceTokenize, new("/tokenize"), true, 1},
		{"vllm", sizingSourceTokenize, new("/v1/tokenize"), true, 1},
	}
	for _, tt := range tests {
		t.Run("tokenize="+tt.tokenize, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := &tokenizingServer{tokenize: tt.tokenize}
				target := pipeTarget(t, srv.handler())
				target.MaxModelLen = 32768
				w := Workload{Requests: 16, Concurrency: 4, ContextTokens: 16000, PromptSizing: promptSizingExact}
				rep, err := Run(t.Context(), target, w)
				require.NoError(t, err)
				require.Equal(t, 16, rep.Completed, "failures: %+v", rep.Failures)
				errs := countedErrors(t, rep)
				for i, e := range errs {
					if tt.exact {
						require.Zero(t, e, "request %d: /tokenize lets the sizing hit the plan exactly", i)
					} else {
						require.LessOrEqual(t, e, 0.01, "request %d within 1%%", i)
					}
				}
				ps := rep.AnvilGo.PromptSizing
				t.Logf("max relative error %.6f, %d calibration requests, %d /tokenize counts", *ps.MaxRelativeError, ps.CalibrationRequests, srv.tokenizes.Load())
				require.Equal(t, string(promptSizingExact), ps.Method)
				require.Equal(t, tt.source, *ps.Source)
				require.Equal(t, tt.path, ps.TokenizePath)
				require.Equal(t, tt.calibration, ps.CalibrationRequests)
				require.EqualValues(t, tt.calibration, srv.oneTokenChat.Load(), "calibration requests send max_tokens 1")
				require.EqualValues(t, 16+tt.calibration, srv.chats.Load())
				require.InDelta(t, 3.67, ps.CharsPerToken, 0.05, "the learned ratio")
				require.InDelta(t, slicesMax(errs), *ps.MaxRelativeError, 1e-12)
				if tt.exact {
					require.Zero(t, *ps.MaxRelativeError)
				}

				ref := w
				ref.PromptSizing = promptSizingReference
				rep, err = Run(t.Context(), target, ref)
				require.NoError(t, err)
				require.Greater(t, slicesMax(countedErrors(t, rep)), 0.15, "3.0 characters per token falls short of this tokenizer")
				require.Equal(t, string(promptSizingReference), rep.AnvilGo.PromptSizing.Method)
				require.Nil(t, rep.AnvilGo.PromptSizing.Source)
			})
		})
	}
}

func slicesMax(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}

// TestExactSizingFakeWords: against the fake's words tokenizer, with its
// /tokenize (exact) and without it (calibration, within 1 %), on sampled
// contexts and in both cache modes, and the fake's prefix cache never
// serves a measured prompt from a calibration request.
func TestExactSizingFakeWords(t *testing.T) {
	skipUnderRace(t, "four 24-request runs of prompts up to 65,536 words")
	for _, omit := range []bool{false, true} {
		for _, mode := range []PromptCacheMode{promptCacheShared, promptCacheUnique} {
			t.Run(fmt.Sprintf("omit-tokenize=%t/%s", omit, mode), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					cfg := fakeserver.Fast()
					cfg.Tokenizer = "words"
					cfg.Dialect.OmitTokenize = omit
					cfg.MaxModelLen = 65536
					srv := fakeserver.NewInMemory(cfg)
					defer srv.Close()
					rep, err := Run(t.Context(), Target{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()},
						Workload{Requests: 24, Concurrency: 4, Seed: 3, PromptCacheMode: mode, SharedPrefixTokens: 2000,
							PromptSizing: promptSizingExact})
					require.NoError(t, err)
					synctest.Wait()
					require.Equal(t, 24, rep.Completed, "failures: %+v", rep.Failures)
					errs := countedErrors(t, rep)
					ps := rep.AnvilGo.PromptSizing
					t.Logf("max relative error %.6f, %d calibration requests", *ps.MaxRelativeError, ps.CalibrationRequests)
					if omit {
						require.Equal(t, sizingSourceCalibration, *ps.Source)
						require.LessOrEqual(t, slicesMax(errs), 0.01)
						require.LessOrEqual(t, ps.CalibrationRequests, maxCalibrationRequests)
					} else {
						require.Equal(t, sizingSourceTokenize, *ps.Source)
						require.Equal(t, "/tokenize", *ps.TokenizePath)
						// The words tokenizer may count one more character as
						// two more tokens (a letter after the whitespace run
						// that the closing instruction continues): then no
						// filler length counts the plan, and the closest is
						// one token off.
						for _, row := range rep.RequestTimings {
							require.InDelta(t, row.PlannedContextTokens, *row.PromptTokens, 1, "request %d: exact with /tokenize", row.RequestIndex)
						}
					}
					prefixTokens := cfg.CountTokens(string(prompt.AppendLines(nil, 0, prompt.Chars(2000)))) + cfg.TemplateTokens
					for _, tr := range srv.Traces() {
						if tr.MaxTokens == 1 {
							continue // a calibration request
						}
						if mode == promptCacheUnique {
							// The first words of the unique header are common to every request.
							require.LessOrEqual(t, tr.CachedTokens, cfg.BlockTokens, "trace %d: nothing but the header's first block shared in unique mode", tr.Index)
						} else {
							require.LessOrEqual(t, tr.CachedTokens, prefixTokens, "trace %d: at most the shared prefix is cached", tr.Index)
						}
					}
				})
			})
		}
	}
}

// TestExactSizingTokenizeSkew: a /tokenize that counts 40 tokens more than
// usage.prompt_tokens does (Dialect.TokenizeSkew) is corrected by the
// calibration request, so usage still counts the plan exactly.
func TestExactSizingTokenizeSkew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fakeserver.Fast()
		cfg.Tokenizer = "words"
		cfg.Dialect.TokenizeSkew = 40
		srv := fakeserver.NewInMemory(cfg)
		defer srv.Close()
		rep, err := Run(t.Context(), Target{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()},
			Workload{Requests: 4, Concurrency: 2, ContextTokens: 3000, PromptSizing: promptSizingExact})
		require.NoError(t, err)
		require.Equal(t, 4, rep.Completed, "failures: %+v", rep.Failures)
		require.Zero(t, slicesMax(countedErrors(t, rep)))
	})
}

// TestExactSizingFailure: a server without /tokenize whose answers carry
// no usage cannot be sized; Run fails with errPromptSizing before any
// measured request.
func TestExactSizingFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var chats atomic.Int32
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
				http.NotFound(w, r)
				return
			}
			chats.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\ndata: [DONE]\n\n")
		})
		_, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 3, ContextTokens: 512, PromptSizing: promptSizingExact})
		require.ErrorIs(t, err, errPromptSizing)
		require.ErrorContains(t, err, "no usage.prompt_tokens")
		require.EqualValues(t, 1, chats.Load(), "one calibration request, no measured one")
	})
}

// BenchmarkAppendPromptExact builds exact-sized 262,144-token prompts (at
// the fake words tokenizer's 2.1 characters per token, and at 3.7): the
// same builder as reference sizing, reading the request's character
// budget from the plan.
func BenchmarkAppendPromptExact(b *testing.B) {
	for _, ratio := range []float64{2.1, 3.7} {
		b.Run(fmt.Sprintf("ctx=262144/chars-per-token=%g", ratio), func(b *testing.B) {
			p, err := newPlan(Workload{Requests: 64, ContextTokens: 262144, RequestCanaries: true}, 1048576, defaultMargin, "")
			require.NoError(b, err)
			p.chars = make([]int, p.Len())
			for i := range p.chars {
				p.chars[i] = budget.CharsFor([]budget.Point{{Chars: int(ratio * 1000), Tokens: 1000}}, p.Contexts[i])
			}
			benchAppendPrompt(b, p)
		})
	}
}

// TestExactSizingOffPlanIsNotEligible: exact sizing against a server whose
// chat requests count 20 % more than its /tokenize says lands every
// prompt of a source about 20 % over its plan: the run says so (off_plan_requests, the
// warning, max_relative_error agreeing) and is not performance eligible,
// where it was once eligible with a null warning.
func TestExactSizingOffPlanIsNotEligible(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &tokenizingServer{tokenize: "vllm", overcount: 0.2}
		target := Target{BaseURL: "http://independent.invalid/v1", Model: "m", MaxModelLen: 32768, HTTPClient: wiretest.Serve(t, srv.handler())}
		src := sizedSource{planned: []int{1000, 2000, 4000, 3000, 1500, 2500}, sized: new(int)}
		rep, err := Run(t.Context(), target, Workload{Requests: 6, Concurrency: 2, MaxTokens: 8, PromptSizing: promptSizingExact, Source: src})
		require.NoError(t, err)
		require.Equal(t, 6, rep.Completed)
		ps := rep.AnvilGo.PromptSizing
		require.Equal(t, 6, ps.CountedRequests)
		require.Equal(t, 6, ps.OffPlanRequests)
		require.Greater(t, *ps.MaxRelativeError, 0.1)
		require.NotNil(t, ps.Warning)
		t.Log(*ps.Warning)
		require.Contains(t, *ps.Warning, "exact sizing missed the plan: the server counted 6 of 6 prompts more than 2% off their plan")
		require.Contains(t, *ps.Warning, "differently from its tokenizer endpoint")
		require.False(t, rep.PerformanceEligible)
		eligible, recorded := rep.Eligible()
		require.False(t, eligible)
		require.True(t, recorded)
		require.False(t, rep.Metrics.ThroughputPerformanceEligible)
	})
}
