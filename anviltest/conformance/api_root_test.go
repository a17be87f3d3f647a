package conformance

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

// TestBaseURLWithoutV1: against a plain server that serves its API only
// under /v1, a base URL without the /v1 is found out by the discovery
// (capacity's "did you mean .../v1"): the models check fails once, naming
// the URL given and the one meant, and every other check is skipped
// saying why, without a request of its own, instead of a dozen FAILs of
// the same 404. Declaring the model and window changes nothing; the
// right base URL runs the checks.
func TestBaseURLWithoutV1(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.Path)
		mu.Unlock()
		if r.URL.Path == "/v1/models" {
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m","max_model_len":4096}]}`))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name   string
		target capacity.Target
	}{
		{"discovered", capacity.Target{BaseURL: srv.URL}},
		{"declared", capacity.Target{BaseURL: srv.URL + "/", Model: "m", MaxModelLen: 4096}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			asked = nil
			mu.Unlock()
			s, err := New(t.Context(), Config{Target: tc.target})
			require.NoError(t, err, "a failed discovery is the models check's to judge")
			mu.Lock()
			discovery := len(asked)
			mu.Unlock()
			why := "Target.BaseURL " + strings.TrimSuffix(tc.target.BaseURL, "/") + " is not the API root, GET /models there is 404; did you mean " + srv.URL + "/v1?"
			for _, name := range Checks() {
				v := s.Check(t.Context(), name)
				if name == nameModels {
					require.Equal(t, Verdict{Check: name, Outcome: Fail, Reason: why, Notes: v.Notes}, v)
					require.Contains(t, v.Notes, "GET /models: HTTP 404 Not Found: 404 page not found")
					continue
				}
				require.Equal(t, Verdict{Check: name, Outcome: Skip, Reason: "not run: " + why + " (see the models check)"}, v)
			}
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, asked, discovery, "no check sends a request after the discovery: %q", asked)
		})
	}

	s, err := New(t.Context(), Config{Target: capacity.Target{BaseURL: srv.URL + "/v1"}})
	require.NoError(t, err)
	v := s.Check(t.Context(), nameModels)
	require.Equal(t, Pass, v.Outcome, "%s", v.Reason)
	v = s.Check(t.Context(), nameStreamFraming)
	require.Equal(t, Fail, v.Outcome, "the right root is asked, and this server streams nothing: %s", v.Reason)
}
