package tokenize

import (
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// testConfig is the counts' configuration of the tests.
var testConfig = Config{Model: "m", Timeout: time.Minute}

// FuzzTokenizeAnswer: whatever a tokenizer endpoint answers, Count returns
// a non-negative count or an error (never a panic), and a count equals the
// answer's "count" or the length of its "tokens".
func FuzzTokenizeAnswer(f *testing.F) {
	for _, s := range []string{`{"count":12,"max_model_len":4096,"tokens":[1,2]}`, `{"tokens":[1,2,3]}`, `{"count":-1}`,
		`{"tokens":null}`, `[]`, `{"count":"7"}`, `not json`, `{"tokens":[{"id":1,"piece":"a"}]}`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		synctest.Test(t, func(t *testing.T) {
			hc := wiretest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(answer))
			}))
			cl, err := client.New(client.Config{BaseURL: "http://pipe.invalid/v1", HTTPClient: hc})
			require.NoError(t, err)
			tk, err := newTokenizer(cl, "http://pipe.invalid/tokenize", shapeContent, testConfig)
			require.NoError(t, err)
			n, err := tk.Count(t.Context(), []byte("def helper_0():"))
			if err != nil {
				require.ErrorIs(t, err, ErrSizing)
				return
			}
			require.GreaterOrEqual(t, n, 0)
			require.True(t, strings.Contains(answer, "count") || strings.Contains(answer, "tokens"))
		})
	})
}

// TestTokenizeURLs: the tokenizer paths tried for a base URL.
func TestTokenizeURLs(t *testing.T) {
	require.Equal(t, []string{"http://h:8000/tokenize", "http://h:8000/v1/tokenize"}, tokenizeURLs("http://h:8000/v1/"))
	require.Equal(t, []string{"http://h/proxy/tokenize", "http://h/proxy/v1/tokenize"}, tokenizeURLs("http://h/proxy/v1"))
	require.Equal(t, []string{"http://h/api/tokenize", "http://h/api/v1/tokenize"}, tokenizeURLs("http://h/api"))
}
