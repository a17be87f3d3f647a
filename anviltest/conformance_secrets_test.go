package anviltest

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

// echoServer answers every chat request with a 500 whose Content-Type and
// JSON body echo the request's credentials raw and JSON-escaped, the body's
// copy placed so that a 200-byte excerpt would cut it in two; /models lists
// model "m".
func echoServer() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"m","max_model_len":100000}]}`)
			return
		}
		creds := r.Header.Get("Authorization") + "_" + r.Header.Get("X-Jwt")
		escaped := strings.ReplaceAll(creds, "-", `\u002d`)
		w.Header().Set("Content-Type", "application/json; echo="+strings.ReplaceAll(creds, " ", "_"))
		w.WriteHeader(http.StatusInternalServerError)
		pad := strings.Repeat("x", 200-len(`{"error":{"message":"`)-len(escaped)-len(" Bearer PLANT"))
		fmt.Fprintf(w, `{"error":{"message":"%s%s %s\u001b[2J"}}`, escaped, pad, creds)
	}))
}

// TestConformanceNeverPrintsCredentials: whatever the server echoes, raw,
// JSON-escaped or across the cut of an excerpt, no part of the API key, of
// a Target.Headers value or of the base URL's password reaches a verdict
// (and so the log, the JSON and the Markdown file).
func TestConformanceNeverPrintsCredentials(t *testing.T) {
	ts := echoServer()
	defer ts.Close()
	for name, tc := range map[string]struct {
		target capacity.Target
		env    env
	}{
		"api key and header": {
			capacity.Target{BaseURL: ts.URL + "/v1", Model: "m", APIKeyEnv: "K",
				Headers: http.Header{"X-Jwt": {"PLANTEDJWT-1b2c"}}},
			env{"K": "PLANTEDKEY-7f3a"},
		},
		"base URL password": {
			capacity.Target{BaseURL: strings.Replace(ts.URL, "http://", "http://u:PLANTEDPASS-9e@", 1) + "/v1", Model: "m"},
			env{},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := suiteAt(t, tc.target, WithEnvironment(tc.env.get))
			require.Len(t, got, len(ConformanceChecks()))
			basic := base64.StdEncoding.EncodeToString([]byte("u:PLANTEDPASS-9e"))
			redacted := 0
			for check, v := range got {
				text := v.Reason + "\n" + strings.Join(v.Notes, "\n")
				if strings.Contains(text, "PLANTED") || strings.Contains(text, basic[:8]) || strings.Contains(text, "\x1b") {
					t.Errorf("%s leaks a credential or a control character: %s", check, text)
				}
				redacted += strings.Count(text, "[redacted]")
			}
			require.Positive(t, redacted, "the echoes reached no verdict: the test tests nothing")
		})
	}
}
