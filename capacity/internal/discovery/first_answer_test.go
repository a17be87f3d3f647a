package discovery

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// TestModelsTimeoutNamesTheWait: a server that takes GET /models and
// never answers is named after ModelsTimeout, not after the 15-minute
// request timeout, with the URL and what bounds the wait; a request
// timeout below ModelsTimeout is the bound, named as such.
func TestModelsTimeoutNamesTheWait(t *testing.T) {
	for _, tc := range []struct {
		timeout, want time.Duration
		says          string
	}{
		{15 * time.Minute, ModelsTimeout, "no answer within 30s, the bound of GET /models (Workload.Timeout lowers it)"},
		{5 * time.Second, 5 * time.Second, "no answer within Workload.Timeout = 5s"},
	} {
		synctest.Test(t, func(t *testing.T) {
			hang := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
			cfg := testConfig(t, "http://hang.invalid/v1", wiretest.Serve(t, hang))
			cfg.Timeout = tc.timeout
			start := time.Now()
			_, err := Discover(t.Context(), cfg)
			require.Equal(t, tc.want, time.Since(start))
			require.EqualError(t, err, "capacity: model probe GET http://hang.invalid/v1/models: timed out ("+tc.says+
				": the server took the request and sent nothing; is it serving, and is Target.BaseURL its API root?)"+
				" (declare the model and its context window, Target.Model and Target.MaxModelLen, and the run goes on without this answer)")
		})
	}
}

// TestAPIRootHint: a base URL without its /v1, whose /models is 404 while
// the same server lists its models at /v1/models, is asked "did you mean
// .../v1"; a 404 with no model list at /v1/models either, and a base URL
// that already ends in /v1, get the hint to declare the model and window
// instead, never a guess. Result.SuggestedBaseURL holds the suggestion,
// with the model and window declared too (then in ModelsError, no error).
func TestAPIRootHint(t *testing.T) {
	models := func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"qwen3-32b"},{"id":"a"},{"id":"b"},{"id":"c"}]}`)
	}
	withV1 := http.NewServeMux()
	withV1.HandleFunc("GET /v1/models", models)
	srv := httptest.NewServer(withV1)
	defer srv.Close()
	bare := httptest.NewServer(http.NotFoundHandler())
	defer bare.Close()

	declare := " (declare the model and its context window, Target.Model and Target.MaxModelLen, and the run goes on without this answer)"
	for _, tc := range []struct{ base, want string }{
		{srv.URL, "capacity: the endpoint refused the requests: model probe GET " + srv.URL + "/models: HTTP 404 Not Found: 404 page not found" +
			"; did you mean " + srv.URL + "/v1? Its /models lists \"qwen3-32b\", \"a\", \"b\" and 1 more: Target.BaseURL is the API root, the path /chat/completions and /models hang from, /v1 included"},
		{srv.URL + "/", "capacity: the endpoint refused the requests: model probe GET " + srv.URL + "//models: HTTP 404 Not Found: 404 page not found" +
			"; did you mean " + srv.URL + "/v1? Its /models lists \"qwen3-32b\", \"a\", \"b\" and 1 more: Target.BaseURL is the API root, the path /chat/completions and /models hang from, /v1 included"},
		{bare.URL, "capacity: the endpoint refused the requests: model probe GET " + bare.URL + "/models: HTTP 404 Not Found: 404 page not found" + declare},
		{srv.URL + "/v1/v1", "capacity: the endpoint refused the requests: model probe GET " + srv.URL + "/v1/v1/models: HTTP 404 Not Found: 404 page not found" + declare},
	} {
		t.Run(tc.base, func(t *testing.T) {
			d, err := Discover(t.Context(), testConfig(t, tc.base, srv.Client()))
			require.ErrorIs(t, err, ErrRefused)
			require.EqualError(t, err, tc.want)
			root := ""
			if strings.Contains(tc.want, "did you mean") {
				root = srv.URL + "/v1"
			}
			require.Equal(t, root, d.SuggestedBaseURL, "the API root the error suggests")
		})
	}
	t.Run("declared", func(t *testing.T) {
		cfg := testConfig(t, srv.URL, srv.Client())
		cfg.Model, cfg.MaxModelLen = "qwen3-32b", 4096
		d, err := Discover(t.Context(), cfg)
		require.NoError(t, err, "a declared model and window stand")
		require.Equal(t, srv.URL+"/v1", d.SuggestedBaseURL)
		require.Contains(t, d.ModelsError, "HTTP 404 Not Found: 404 page not found; did you mean "+srv.URL+"/v1?")
	})
}
