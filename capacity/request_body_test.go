package capacity

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// recorder answers writeOKStream and keeps the first chat request it saw.
type recorder struct {
	mu     sync.Mutex
	header http.Header
	body   map[string]any
	status int
	answer string
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	if rc.body == nil {
		rc.header = r.Header.Clone()
		_ = json.Unmarshal(raw, &rc.body)
	}
	rc.mu.Unlock()
	if rc.status != 0 {
		w.WriteHeader(rc.status)
		_, _ = io.WriteString(w, rc.answer+" "+r.Header.Get("Authorization"))
		return
	}
	wiretest.WriteOKStream(w, raw)
}

// TestRequestBody checks the body of capacity/PROTOCOL.md#wire-protocol for each sampling
// and thinking control, with ExtraBody merged and the headers sent.
func TestRequestBody(t *testing.T) {
	base := map[string]any{
		"model":          "m",
		"max_tokens":     float64(defaultMaxTokens),
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"ignore_eos":     true,
	}
	with := func(kv ...any) map[string]any {
		m := make(map[string]any, len(base)+len(kv)/2)
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name  string
		w     Workload
		want  map[string]any
		flags artifact.ServeFlags
	}{
		{"defaults", Workload{}, with("temperature", 0.0), artifact.ServeFlags{ThinkingMode: "default"}},
		{"the reference's max_tokens", Workload{MaxTokens: referenceMaxTokens}, with("temperature", 0.0, "max_tokens", 64.0), artifact.ServeFlags{ThinkingMode: "default"}},
		{"explicit temperature 0", Workload{Temperature: new(0.0)}, with("temperature", 0.0), artifact.ServeFlags{ThinkingMode: "default"}},
		{"sampling", Workload{Temperature: new(0.9), TopP: new(0.95)}, with("temperature", 0.9, "top_p", 0.95), artifact.ServeFlags{ThinkingMode: "default"}},
		{"thinking enabled", Workload{ThinkingMode: thinkingEnabled}, with("temperature", 0.0, "chat_template_kwargs", map[string]any{"enable_thinking": true}), artifact.ServeFlags{ThinkingMode: "enabled"}},
		{"thinking disabled", Workload{ThinkingMode: thinkingDisabled}, with("temperature", 0.0, "chat_template_kwargs", map[string]any{"enable_thinking": false}), artifact.ServeFlags{ThinkingMode: "disabled", NoThinking: true}},
		{"thinking unsupported", Workload{ThinkingMode: thinkingUnsupported}, with("temperature", 0.0), artifact.ServeFlags{ThinkingMode: "unsupported"}},
		{"reasoning effort", Workload{ReasoningEffort: reasoningHigh}, with("temperature", 0.0, "reasoning_effort", "high"), artifact.ServeFlags{ThinkingMode: "default", ReasoningEffort: new("high")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("ANVIL_TEST_KEY", "sk-test-secret")
			synctest.Test(t, func(t *testing.T) {
				rc := &recorder{}
				tg := pipeTarget(t, rc)
				tg.APIKeyEnv = "ANVIL_TEST_KEY"
				tg.Headers = http.Header{"X-Team": {"bench"}}
				tg.ExtraBody = map[string]any{"ignore_eos": true}
				w := tt.w
				w.Requests, w.Concurrency, w.ContextTokens = 1, 1, 512
				rep, err := Run(t.Context(), tg, w)
				require.NoError(t, err)
				require.Equal(t, 1, rep.Completed)

				msgs := rc.body["messages"].([]any)
				delete(rc.body, "messages")
				require.Empty(t, cmp.Diff(tt.want, rc.body))
				plan, err := newPlan(w, 8192, defaultMargin, "")
				require.NoError(t, err)
				prompt, err := plan.AppendPrompt(nil, 0)
				require.NoError(t, err)
				require.Equal(t, []any{map[string]any{"role": "user", "content": string(prompt)}}, msgs)

				require.Equal(t, "Bearer sk-test-secret", rc.header.Get("Authorization"))
				require.Equal(t, "bench", rc.header.Get("X-Team"))
				require.Equal(t, "application/json", rc.header.Get("Content-Type"))
				require.Equal(t, "text/event-stream", rc.header.Get("Accept"))
				require.Equal(t, "identity", rc.header.Get("Accept-Encoding"), "no compressor may buffer the stream")

				sf := rep.ServeFlags
				require.Equal(t, tt.flags.ThinkingMode, sf.ThinkingMode)
				require.Equal(t, tt.flags.NoThinking, sf.NoThinking)
				require.Equal(t, tt.flags.ReasoningEffort, sf.ReasoningEffort)
				require.True(t, rep.Sampling.Temperature.Sent, "temperature is always sent, as the reference does")
				require.Equal(t, w.Temperature, rep.Sampling.Temperature.Requested)
				wantTemp := new(defaultTemperature)
				if w.Temperature != nil {
					wantTemp = w.Temperature
				}
				require.Equal(t, wantTemp, rep.Sampling.Temperature.EffectiveRequest)
				require.Equal(t, w.TopP, rep.Sampling.TopP.EffectiveRequest)
			})
		})
	}
}

// TestExtraBodyPassThrough: llama.cpp's per-request options reach the
// server as given, beside the protocol's fields; a field the protocol sets
// is refused before any request, naming it.
func TestExtraBodyPassThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := &recorder{}
		tg := pipeTarget(t, rc)
		tg.ExtraBody = map[string]any{"cache_prompt": false, "n_probs": 0, "id_slot": -1}
		rep, err := Run(t.Context(), tg, Workload{Requests: 1, Concurrency: 1, ContextTokens: 512})
		require.NoError(t, err)
		require.Equal(t, 1, rep.Completed)
		require.Equal(t, false, rc.body["cache_prompt"])
		require.Equal(t, 0.0, rc.body["n_probs"])
		require.Equal(t, -1.0, rc.body["id_slot"])
		require.Equal(t, true, rc.body["stream"])

		tg.ExtraBody = map[string]any{"cache_prompt": false, "stream": false}
		_, err = Run(t.Context(), tg, Workload{Requests: 1})
		require.ErrorIs(t, err, ErrInvalidConfig)
		require.Contains(t, err.Error(), `Target.ExtraBody = "stream": is set by the streaming client and may not be overridden`)
	})
}

// TestSecretNeverRecorded: a server echoing the bearer token in its error
// body gets it redacted from the failure and the error.
func TestSecretNeverRecorded(t *testing.T) {
	t.Setenv("ANVIL_TEST_KEY", "sk-test-secret")
	for _, status := range []int{http.StatusInternalServerError, http.StatusUnauthorized} {
		synctest.Test(t, func(t *testing.T) {
			tg := pipeTarget(t, &recorder{status: status, answer: "invalid key:"})
			tg.APIKeyEnv = "ANVIL_TEST_KEY"
			rep, err := Run(t.Context(), tg, Workload{Requests: 2, Concurrency: 1, ContextTokens: 512})
			b, jerr := json.Marshal(rep)
			require.NoError(t, jerr)
			require.NotContains(t, string(b), "sk-test-secret")
			require.Contains(t, string(b), "invalid key: Bearer [redacted]")
			if err != nil {
				require.ErrorIs(t, err, ErrEndpointRefused)
				require.NotContains(t, err.Error(), "sk-test-secret")
			}
		})
	}
}

// TestDefaultTemperatureBytes: the zero Workload sends "temperature": 0.0
// written as the reference writes it, and the artifact records it as sent
// without a request.
func TestDefaultTemperatureBytes(t *testing.T) {
	enc, err := newRequestEncoder(client.ChatCompletions, Target{Model: "m"}, Workload{MaxTokens: 64})
	require.NoError(t, err)
	require.Contains(t, string(enc.AppendBody(nil, []byte("p"))), `"temperature":0.0`)
	enc, err = newRequestEncoder(client.ChatCompletions, Target{Model: "m"}, Workload{MaxTokens: 64, Temperature: new(0.7)})
	require.NoError(t, err)
	require.Contains(t, string(enc.AppendBody(nil, []byte("p"))), `"temperature":0.7`, "an explicit temperature wins")
	require.Equal(t, artifact.SamplingField{Sent: true, EffectiveRequest: new(0.0)}, temperatureField(nil))
}

func BenchmarkAppendBody(b *testing.B) {
	enc, err := newRequestEncoder(client.ChatCompletions, Target{Model: "m", ExtraBody: map[string]any{"ignore_eos": true}}, Workload{MaxTokens: 64, Temperature: new(0.9)})
	require.NoError(b, err)
	plan, err := newPlan(Workload{Requests: 1, ContextTokens: 65536}, 131072, defaultMargin, "")
	require.NoError(b, err)
	prompt, err := plan.AppendPrompt(nil, 0)
	require.NoError(b, err)
	var buf []byte
	b.ReportAllocs()
	b.SetBytes(int64(len(prompt)))
	for b.Loop() {
		buf = enc.AppendBody(buf[:0], prompt)
	}
}
