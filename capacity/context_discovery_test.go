package capacity

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// nativeServer answers /v1/models with models (no context length, as
// llama.cpp and ollama do), the chat endpoint with a short stream, and the
// native endpoints in native (path pattern -> JSON answer).
func nativeServer(t *testing.T, models string, native map[string]string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, models)
	})
	mux.Handle("POST /v1/chat/completions", usageServer(`"prompt_tokens":400,"completion_tokens":2`))
	for pattern, answer := range native {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				var req struct {
					Model string `json:"model"`
				}
				if json.NewDecoder(r.Body).Decode(&req) != nil || req.Model == "" {
					http.Error(w, `{"error":"model is required"}`, http.StatusBadRequest)
					return
				}
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, answer)
		})
	}
	return mux
}

// TestDiscoverContextWindow: without a context length in /v1/models, the
// run asks what llama.cpp and ollama do say, at the server root.
func TestDiscoverContextWindow(t *testing.T) {
	ollamaModels, err := os.ReadFile(filepath.Join(transcripts, "ollama-0.17.4-models.json"))
	require.NoError(t, err)
	llamaModels := `{"object":"list","data":[{"id":"tiny.gguf","object":"model","created":1,"owned_by":"llamacpp","meta":{"vocab_type":2,"n_vocab":32000,"n_ctx_train":131072,"n_embd":64,"n_params":1000000,"size":2000000}}]}`
	props := `{"default_generation_settings":{"id":0,"id_task":-1,"n_ctx":8192,"speculative":false,"is_processing":false,"params":{"n_predict":-1,"temperature":0.8}},"total_slots":1,"model_path":"tiny.gguf","chat_template":"","build_info":"b1-x"}`
	ps := `{"models":[{"name":"other:latest","model":"other:latest","size":1,"digest":"d1","details":{"format":"gguf","family":"llama"},"expires_at":"2026-12-01T08:00:00Z","size_vram":0,"context_length":2048},{"name":"tiny:latest","model":"tiny:latest","size":1,"digest":"d2","details":{"format":"gguf","family":"llama","parameter_size":"1M","quantization_level":"F16"},"expires_at":"2026-12-01T08:00:00Z","size_vram":0,"context_length":4096}]}`
	show := `{"license":"","modelfile":"FROM tiny","parameters":"","template":"{{ .Prompt }}","details":{"format":"gguf","family":"llama"},"model_info":{"general.architecture":"llama","general.parameter_count":1000000,"llama.block_count":2,"llama.context_length":131072,"llama.embedding_length":64},"capabilities":["completion"]}`
	tests := []struct {
		name, models string
		native       map[string]string
		want         int
	}{
		{"llama.cpp props", llamaModels, map[string]string{"GET /props": props}, 8192},
		{"ollama ps, the loaded model's window", string(ollamaModels), map[string]string{"GET /api/ps": ps, "POST /api/show": show}, 4096},
		{"ollama show when the model is not loaded", string(ollamaModels), map[string]string{"GET /api/ps": `{"models":[]}`, "POST /api/show": show}, 131072},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tg := Target{BaseURL: "http://pipe.invalid/v1", HTTPClient: wiretest.Serve(t, nativeServer(t, tt.models, tt.native)), MetricsURL: "off"}
				rep, err := Run(t.Context(), tg, Workload{Requests: 1, Concurrency: 1, ContextTokens: 512})
				require.NoError(t, err)
				require.Equal(t, tt.want, *rep.MaxContextTokens)
				require.Empty(t, rep.Failures)
			})
		})
	}
	t.Run("none answers", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			tg := Target{BaseURL: "http://pipe.invalid/v1", HTTPClient: wiretest.Serve(t, nativeServer(t, string(ollamaModels), map[string]string{"GET /props": `{"default_generation_settings":{}}`, "GET /api/ps": `not json`})), MetricsURL: "off"}
			_, err := Run(t.Context(), tg, Workload{Requests: 1, Concurrency: 1, ContextTokens: 512})
			require.ErrorIs(t, err, ErrInvalidConfig)
			require.ErrorContains(t, err, "neither http://pipe.invalid/props (llama.cpp) nor http://pipe.invalid/api/ps or http://pipe.invalid/api/show (ollama) gave a context length: set Target.MaxModelLen")
		})
	})
}

// TestDiscoverTwoAdvertisedWindows: a /models entry and llama.cpp's /props
// that advertise different windows are named, and the smaller is the one
// planned for and checked.
func TestDiscoverTwoAdvertisedWindows(t *testing.T) {
	props := `{"default_generation_settings":{"n_ctx":4096},"total_slots":4}`
	for _, tc := range []struct {
		name, models       string
		modelsWindow, want int
		wantSource         string
	}{
		{"/props smaller", `{"object":"list","data":[{"id":"m","object":"model","max_model_len":131072}]}`, 131072, 4096, "/props"},
		{"/models smaller", `{"object":"list","data":[{"id":"m","object":"model","max_model_len":2048}]}`, 2048, 2048, "/models"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := nativeServer(t, tc.models, map[string]string{"GET /props": props})
				d, err := Discover(t.Context(), Target{BaseURL: "http://m.invalid/v1", HTTPClient: wiretest.Serve(t, h)})
				require.NoError(t, err)
				require.Equal(t, tc.want, d.Window)
				require.Equal(t, tc.want, d.TruncationWindow)
				require.Equal(t, tc.wantSource, d.AdvertisedSource)
				require.Contains(t, d.Note, fmt.Sprintf("the server advertises two windows, %d tokens (/models) and 4096 tokens (/props): the smaller is used", tc.modelsWindow))
			})
		})
	}
}
