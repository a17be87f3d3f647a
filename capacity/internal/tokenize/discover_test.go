package tokenize

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// TestDiscover: the first URL and form that counts the probe is the
// tokenizer (a 404 at the API root skips that URL's other forms); its
// chat form sends the model and the thinking control, and the probe's
// count gives the first guess of characters per token. A server without
// any is no tokenizer and no error.
func TestDiscover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var paths []string
		hc := wiretest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			paths = append(paths, r.URL.Path)
			if r.URL.Path != "/v1/tokenize" {
				http.NotFound(w, r)
				return
			}
			raw, _ := io.ReadAll(r.Body)
			var b struct {
				Model    string `json:"model"`
				Messages []struct {
					Content string `json:"content"`
				} `json:"messages"`
				Kwargs map[string]bool `json:"chat_template_kwargs"`
			}
			require.NoError(t, json.Unmarshal(raw, &b))
			require.Equal(t, "m", b.Model)
			require.Len(t, b.Messages, 1)
			require.Equal(t, map[string]bool{"enable_thinking": false}, b.Kwargs)
			_, _ = io.WriteString(w, `{"count":16}`)
		}))
		cl, err := client.New(client.Config{BaseURL: "http://pipe.invalid/v1", HTTPClient: hc})
		require.NoError(t, err)
		cfg := testConfig
		cfg.BaseURL, cfg.Thinking = "http://pipe.invalid/v1", new(false)
		tk, err := Discover(t.Context(), cl, cfg)
		require.NoError(t, err)
		require.NotNil(t, tk)
		require.Equal(t, []string{"/tokenize", "/v1/tokenize"}, paths)
		require.Equal(t, "/v1/tokenize", tk.Path())
		require.True(t, tk.Chat())
		require.Equal(t, float64(len(tokenizeProbe))/16, tk.ProbeRatio())
		n, err := tk.CountMessages(t.Context(), []client.Message{{Role: "user", Content: "hi"}})
		require.NoError(t, err)
		require.Equal(t, 16, n)

		cfg.BaseURL = "http://pipe.invalid/none/v1"
		paths = nil
		tk, err = Discover(t.Context(), cl, cfg)
		require.NoError(t, err)
		require.Nil(t, tk)
		require.Equal(t, []string{"/none/tokenize", "/none/v1/tokenize"}, paths)
	})
}
