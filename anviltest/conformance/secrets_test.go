package conformance

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

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
		apiKey string
	}{
		"api key and header": {
			capacity.Target{BaseURL: ts.URL + "/v1", Model: "m", APIKeyEnv: "K",
				Headers: http.Header{"X-Jwt": {"PLANTEDJWT-1b2c"}}},
			"PLANTEDKEY-7f3a",
		},
		"base URL password": {
			capacity.Target{BaseURL: strings.Replace(ts.URL, "http://", "http://u:PLANTEDPASS-9e@", 1) + "/v1", Model: "m"},
			"",
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := suiteAt(t, Config{Target: tc.target, APIKey: tc.apiKey})
			require.Len(t, got, len(Checks()))
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

// The credentials of TestEveryOutputScrubbed: long enough that any cut
// shorter than them leaves a recognisable part.
const (
	plantedKey    = "PLANTEDKEY-0123456789abcdef0123456789"
	plantedHeader = "PLANTEDJWT-fedcba9876543210fedcba9876"
)

// credentialModelServer lists one model whose id carries the credentials
// the request sent (a gateway that names models after the caller's key),
// and answers every chat request with a stream whose content echoes them:
// the determinism prompt alternately with "A" and "B" first, so the first
// difference is at the start and the window the verdict quotes, were it cut
// before the scrub, would end inside the key.
func credentialModelServer() *httptest.Server {
	var n int
	var mu sync.Mutex
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		creds := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + " " + r.Header.Get("X-Jwt")
		if r.URL.Path == "/v1/models" {
			fmt.Fprintf(w, `{"object":"list","data":[{"id":"model %s","max_model_len":100000}]}`, creds)
			return
		}
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		text := "echo " + strings.Join(echoedForms(creds), " ")
		if strings.Contains(string(body), "Name three colours") {
			mu.Lock()
			n++
			text = fmt.Sprintf("%c%s %s", 'A'+rune(n%2), strings.Repeat("x", 30), creds)
			mu.Unlock()
		}
		content, _ := json.Marshal(text)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%s},\"finish_reason\":\"stop\"}]}\n\n", content)
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":3,\"total_tokens\":8}}\n\ndata: [DONE]\n\n")
	}))
}

// echoedForms are the forms of secret a server trivially produces, one
// of each row of PROTOCOL.md's table of credential forms: raw,
// upper-cased, JSON-escaped (twice on the wire: the answer's JSON escapes
// it again), percent-encoded, base64, hex in both cases, HTML character
// references, and split over two lines.
func echoedForms(secret string) []string {
	var esc, html strings.Builder
	for i, c := range secret {
		fmt.Fprintf(&esc, `\u%04x`, c)
		if i%2 == 0 {
			fmt.Fprintf(&html, "&#%d;", c)
		} else {
			fmt.Fprintf(&html, "&#x%X;", c)
		}
	}
	return []string{secret, strings.ToUpper(secret), esc.String(), url.QueryEscape(secret),
		base64.StdEncoding.EncodeToString([]byte(secret)), hex.EncodeToString([]byte(secret)), strings.ToUpper(hex.EncodeToString([]byte(secret))),
		html.String(), secret[:len(secret)/2] + "\n" + secret[len(secret)/2:]}
}

// leaks says which part (of at least 8 bytes) of a planted credential text
// carries, raw or hex-encoded in either case, "" when none.
func leaks(text string) string {
	low := strings.ToLower(text)
	for _, c := range []string{plantedKey, plantedHeader} {
		for i := 0; i+8 <= len(c); i++ {
			part := strings.ToLower(c[i : i+8])
			if strings.Contains(low, part) || strings.Contains(low, hex.EncodeToString([]byte(part))) {
				return c[i : i+8]
			}
		}
		for _, lead := range []string{"", "x", "xy"} { // base64 at every alignment
			enc := base64.StdEncoding.EncodeToString([]byte(lead + c))
			if strings.Contains(text, enc[len(lead)+2:len(lead)+14]) {
				return "base64 of " + c
			}
		}
	}
	for _, ref := range []string{"&#80;", "&#x4C;", `\u0050`} { // "P", "L": an HTML reference, a JSON escape
		if strings.Contains(strings.ToUpper(text), strings.ToUpper(ref)) {
			return ref
		}
	}
	return ""
}

// TestEveryOutputScrubbed: a server that echoes the API key and a header
// value in the model id it lists and in the content of its answers leaks no
// part of them into any output of the suite: the verdicts (what the test
// log prints), the report's model, the JSON and the Markdown verdict files.
// The determinism check quotes a window of its outputs that would end
// inside the key were it cut before the scrub.
func TestEveryOutputScrubbed(t *testing.T) {
	ts := credentialModelServer()
	defer ts.Close()
	s, err := New(t.Context(), Config{
		Target: capacity.Target{BaseURL: ts.URL + "/v1", Headers: http.Header{"X-Jwt": {plantedHeader}}},
		APIKey: plantedKey, Timeout: 30 * time.Second, Required: []string{nameDeterminism},
	})
	require.NoError(t, err)
	require.Contains(t, s.p.model, plantedKey, "the suite sends the model id as listed")
	rep := s.NewReport(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	for _, n := range Checks() {
		rep.Verdicts = append(rep.Verdicts, s.Check(t.Context(), n))
	}
	det, _ := rep.Verdict(nameDeterminism)
	require.Equal(t, Fail, det.Outcome, "required and different outputs: %s", det.Reason)
	require.Contains(t, det.Reason, "[redacted]", "the window quoted reaches the key: the test tests the cut")

	t.Run("verdicts", func(t *testing.T) {
		for _, v := range rep.Verdicts {
			text := v.Reason + "\n" + strings.Join(v.Notes, "\n")
			require.Empty(t, leaks(text), "%s: %s", v.Check, text)
		}
	})
	t.Run("report model", func(t *testing.T) {
		require.Equal(t, "model [redacted] [redacted]", rep.Model)
	})
	pj, pm, err := rep.WriteFiles(t.TempDir())
	require.NoError(t, err)
	for _, f := range []struct{ name, path, model string }{
		{"json", pj, `"model": "model [redacted] [redacted]"`},
		{"markdown", pm, `# Conformance of model \[redacted\] \[redacted\] at`},
	} {
		t.Run(f.name, func(t *testing.T) {
			b, err := os.ReadFile(f.path)
			require.NoError(t, err)
			require.Empty(t, leaks(string(b)), "%s", b)
			require.Contains(t, string(b), f.model)
		})
	}
}

// TestCapturedTextScrubbedBeforeCut: a credential the capture's bound cut
// in two leaves no part in the scrubbed text, and one before the cut is
// replaced.
func TestCapturedTextScrubbedBeforeCut(t *testing.T) {
	scrub := capacity.Target{}.Redactor(plantedKey)
	for _, at := range []int{maxCapture - 10, maxCapture - len(plantedKey) + 1, maxCapture - 1, maxCapture - 20 - len(plantedKey)} {
		var c capturedText
		c.add(plantedKey + " " + strings.Repeat("x", at-len(plantedKey)-1))
		c.add(plantedKey)
		c.add(strings.Repeat("y", 100))
		require.True(t, c.cut)
		got := c.scrubbed(scrub)
		require.Empty(t, leaks(got), "credential at byte %d", at)
		require.True(t, strings.HasPrefix(got, "[redacted] xxx"), "%.20q", got)
	}
	var whole capturedText
	whole.add("a " + plantedKey + " b")
	require.False(t, whole.cut)
	require.Equal(t, "a [redacted] b", whole.scrubbed(scrub))
}
