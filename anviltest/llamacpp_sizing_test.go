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

	"github.com/anvilbench/anvil/capacity"
)

// llamaCppStandIn serves what the captured llama-server b10573 answers
// (testdata/transcripts/llamacpp-b10573-*): its /v1/models and /props,
// and chat completions counted by its tiny model's tokenizer (10 tokens
// every 11 characters, ChatML around the message, BOS): a prompt at or
// above the 8192-token window is refused with the captured
// exceed_context_size_error body, others stream the captured usage
// stream with their count. It has no /tokenize, so exact sizing
// calibrates.
func llamaCppStandIn(t *testing.T) *httptest.Server {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "transcripts", name))
		require.NoError(t, err)
		return b
	}
	models, props := read("llamacpp-b10573-models.json"), read("llamacpp-b10573-props.json")
	over, stream := string(read("llamacpp-b10573-stream-over-window.json")), read("llamacpp-b10573-stream-usage.sse")
	promptTokens := regexp.MustCompile(`"prompt_tokens":\d+`)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(models) })
	mux.HandleFunc("GET /props", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(props) })
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) != 1 {
			http.Error(w, "bad body", http.StatusInternalServerError)
			return
		}
		text := len(body.Messages[0].Content) + len("user\n\nassistant\n")
		n := 1 + 3 + text - text/11 // BOS, three ChatML markers, the text
		if n >= 8192 {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = fmt.Fprint(w, strings.Replace(over, "44722", fmt.Sprint(n), 2))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(promptTokens.ReplaceAll(stream, fmt.Appendf(nil, `"prompt_tokens":%d`, n)))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

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
	srv := llamaCppStandIn(t)
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
