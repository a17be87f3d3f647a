package anviltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/fake_server/tinyllama"
)

// capturedWindow is the per-slot window of the captured server, n_ctx in
// its /v1/models and /props.
const capturedWindow = 8192

// llamaCppStandIn serves what the captured llama-server b10573 answers
// (testdata/transcripts/llamacpp-b10573-*) for the tiny model of
// make_tiny_gguf.py: its /v1/models and /props, and chat completions
// counted as the real server counts them (package tinyllama, pinned to
// the captures): a prompt at or above its window is refused with the
// captured exceed_context_size_error body, others stream the captured
// usage stream with their count. window is n_ctx: 8192 as captured, or
// another served as llama-server --ctx-size window --parallel 1 would
// (n_ctx in /v1/models and /props replaced). With tokenize it also serves llama.cpp's
// POST /tokenize ({"content", "add_special"}, answered {"tokens"}; any
// other body is answered {"tokens": []} as the real server does) and
// POST /apply-template ({"messages"}, answered {"prompt"}); without, both
// answer 404 (a server behind a proxy that passes /v1 alone), and exact
// sizing calibrates.
func llamaCppStandIn(t *testing.T, tokenize bool, window int) *httptest.Server {
	nctx := strings.NewReplacer(fmt.Sprintf(`"n_ctx":%d`, capturedWindow), fmt.Sprintf(`"n_ctx":%d`, window))
	models := []byte(nctx.Replace(string(readTranscript(t, "llamacpp-b10573-models.json"))))
	props := []byte(nctx.Replace(string(readTranscript(t, "llamacpp-b10573-props.json"))))
	over, stream := string(readTranscript(t, "llamacpp-b10573-stream-over-window.json")), readTranscript(t, "llamacpp-b10573-stream-usage.sse")
	promptTokens := regexp.MustCompile(`"prompt_tokens":\d+`)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(models) })
	mux.HandleFunc("GET /props", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(props) })
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []tinyllama.Message `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) == 0 {
			http.Error(w, "bad body", http.StatusInternalServerError)
			return
		}
		n := tinyllama.ChatTokens(body.Messages)
		if n >= window {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = fmt.Fprint(w, strings.NewReplacer("44722", fmt.Sprint(n), fmt.Sprint(capturedWindow), fmt.Sprint(window)).Replace(over))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(promptTokens.ReplaceAll(stream, fmt.Appendf(nil, `"prompt_tokens":%d`, n)))
	})
	if tokenize {
		mux.HandleFunc("POST /tokenize", func(w http.ResponseWriter, r *http.Request) {
			var body struct {
				Content    *string `json:"content"`
				AddSpecial bool    `json:"add_special"`
			}
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				http.Error(w, "bad body", http.StatusInternalServerError)
				return
			}
			ids := []int{}
			if body.Content != nil {
				if body.AddSpecial {
					ids = append(ids, tinyllama.BOS)
				}
				ids = append(ids, tinyllama.Tokenize(*body.Content)...)
			}
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_ = json.NewEncoder(w).Encode(map[string][]int{"tokens": ids})
		})
		mux.HandleFunc("POST /apply-template", func(w http.ResponseWriter, r *http.Request) {
			var body struct {
				Messages []tinyllama.Message `json:"messages"`
			}
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) == 0 {
				http.Error(w, "bad body", http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_ = json.NewEncoder(w).Encode(map[string]string{"prompt": tinyllama.Template(body.Messages)})
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// readTranscript reads a capture of testdata/transcripts.
func readTranscript(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "transcripts", name))
	require.NoError(t, err)
	return b
}
