package tokenize

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// TestTemplateTokenizerBodies: llama.cpp's templated count posts the chat
// form to /apply-template, then its prompt as content with add_special to
// /tokenize, and counts the answer's tokens.
func TestTemplateTokenizerBodies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen []map[string]any
		hc := wiretest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var b map[string]any
			require.NoError(t, json.NewDecoder(r.Body).Decode(&b))
			b["path"] = r.URL.Path
			seen = append(seen, b)
			switch r.URL.Path {
			case "/apply-template":
				_, _ = io.WriteString(w, `{"prompt":"<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n"}`)
			case "/tokenize":
				_, _ = io.WriteString(w, `{"tokens":[1,2,3,4,5,6,7]}`)
			}
		}))
		cl, err := client.New(client.Config{BaseURL: "http://pipe.invalid/v1", HTTPClient: hc})
		require.NoError(t, err)
		tk, err := newTokenizer(cl, "http://pipe.invalid/tokenize", shapeTemplate, testConfig)
		require.NoError(t, err)
		n, err := tk.Count(t.Context(), []byte("hello"))
		require.NoError(t, err)
		require.Equal(t, 7, n)
		require.Equal(t, "/tokenize (after /apply-template)", tk.Path())
		require.Len(t, seen, 2)
		require.Equal(t, "/apply-template", seen[0]["path"])
		require.Equal(t, []any{map[string]any{"role": "user", "content": "hello"}}, seen[0]["messages"])
		require.Equal(t, map[string]any{"path": "/tokenize", "content": "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n", "add_special": true}, seen[1])
	})
}

// FuzzApplyTemplateAnswer: whatever /apply-template answers, the templated
// count is a count or an ErrSizing error, never a panic.
func FuzzApplyTemplateAnswer(f *testing.F) {
	for _, s := range []string{`{"prompt":"x"}`, `{"prompt":null}`, `{"prompt":7}`, `[]`, `not json`, ``, `{"prompt":"\u0000\ud800"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		synctest.Test(t, func(t *testing.T) {
			hc := wiretest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/apply-template" {
					_, _ = io.WriteString(w, answer)
					return
				}
				_, _ = io.WriteString(w, `{"tokens":[1]}`)
			}))
			cl, err := client.New(client.Config{BaseURL: "http://pipe.invalid/v1", HTTPClient: hc})
			require.NoError(t, err)
			tk, err := newTokenizer(cl, "http://pipe.invalid/tokenize", shapeTemplate, testConfig)
			require.NoError(t, err)
			n, err := tk.Count(t.Context(), []byte("def helper_0():"))
			if err != nil {
				require.ErrorIs(t, err, ErrSizing)
				return
			}
			require.Equal(t, 1, n)
		})
	})
}

// closingAfterAnswer answers every request with body and a Keep-Alive
// header, then closes the connection, as llama.cpp does after a streamed
// answer: a client reusing the connection at once gets EOF.
func closingAfterAnswer(t *testing.T, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		conn, buf, err := http.NewResponseController(w).Hijack()
		require.NoError(t, err)
		_, _ = fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nKeep-Alive: timeout=5, max=100\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		_ = buf.Flush()
		_ = conn.Close()
	})
}

// TestTokenizerSurvivesClosedKeepAlive: counts against a server that
// closes every connection it advertised as kept alive all succeed: the
// tokenizer's requests are marked idempotent, so the transport sends one
// again on a fresh connection when the reused one is gone.
func TestTokenizerSurvivesClosedKeepAlive(t *testing.T) {
	srv := httptest.NewServer(closingAfterAnswer(t, `{"tokens":[1,2,3]}`))
	defer srv.Close()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	cl, err := client.New(client.Config{BaseURL: srv.URL + "/v1", HTTPClient: hc})
	require.NoError(t, err)
	tk, err := newTokenizer(cl, srv.URL+"/tokenize", shapeContent, testConfig)
	require.NoError(t, err)
	for i := range 200 {
		n, err := tk.Count(t.Context(), []byte("def helper_0():"))
		require.NoError(t, err, "count %d", i)
		require.Equal(t, 3, n)
	}
}
