package anviltest

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/reporters"
)

// echoedForms are the forms of secret that a server trivially produces,
// one of each row of PROTOCOL.md's table of credential forms: raw,
// upper-cased, JSON-escaped once and twice, percent-encoded, base64 (of
// the header that carried it), hex in lower and in upper case, and HTML
// character references (the split over data lines is the server's
// stream of its own).
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
	return []string{secret, strings.ToUpper(secret), esc.String(), strings.ReplaceAll(esc.String(), `\`, `\\`), url.QueryEscape(secret),
		base64.StdEncoding.EncodeToString([]byte("Bearer " + secret)), hex.EncodeToString([]byte(secret)),
		strings.ToUpper(hex.EncodeToString([]byte("Bearer " + secret))), html.String()}
}

// echoedKeyForms are echoedForms of the bearer token r carries.
func echoedKeyForms(r *http.Request) []string {
	return echoedForms(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
}

// echoedPasswordForms are echoedForms of the password of the Basic
// credentials r carries (a URL's userinfo, which the transport sends).
func echoedPasswordForms(r *http.Request) []string {
	_, pass, _ := r.BasicAuth()
	return echoedForms(pass)
}

// TestCredentialFormsInNoOutput: a server echoes the API key in every
// trivial form through the model id /models lists, error bodies, a
// redirect's Location, a malformed event whose data lines split the key,
// and the labels of its /metrics, which also echo the metrics URL's
// password in every form; none of the forms reaches any output of
// a benchmark: the log and the benchmark line, the artifact (its
// server_metrics.series[].labels included), the .bench file, the HTML
// report beside them, and the console summary of the artifact.
func TestCredentialFormsInNoOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child benchmark")
	}
	const key, pass = "sk-OUTPUTKEY-51c0de/9a", "pw-METRICSPW-4e11"
	var n atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		id := "m-" + strings.Join(echoedKeyForms(r)[1:], "_") // raw in the id would be a JSON escape away
		fmt.Fprintf(w, `{"data":[{"id":%q,"max_model_len":8192}]}`, id)
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "# TYPE vllm:num_requests_running gauge\n")
		for i, form := range append(echoedKeyForms(r), echoedPasswordForms(r)...) {
			fmt.Fprintf(w, "vllm:num_requests_running{engine=\"0\",model_name=%q} %d\n", "m "+form, i)
		}
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) % 4 {
		case 3: // the key split over the data lines of one event, which the stream joins with a newline
			key := echoedKeyForms(r)[0]
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"%s\ndata: %s\"}}]}\n\n", key[:9], key[9:])
		case 0:
			w.Header().Set("Location", "http://elsewhere.invalid/k/"+url.PathEscape(echoedKeyForms(r)[0]))
			w.WriteHeader(http.StatusFound)
		case 1:
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"bad key %s"}}`, strings.Join(echoedKeyForms(r), " "))
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n")
			fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
			fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":4000,\"completion_tokens\":2,\"total_tokens\":4002}}\n\ndata: [DONE]\n\n")
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	out := t.TempDir()
	stdout, _ := childEnv(t, "engine", t.TempDir(), out, []string{
		envBaseURL + "=" + srv.URL + "/v1", envMetricsURL + "=" + strings.Replace(srv.URL, "://", "://ops:"+pass+"@", 1) + "/metrics", envAPIKeyEnv + "=ANVIL_TEST_OUTPUT_KEY", "ANVIL_TEST_OUTPUT_KEY=" + key,
		envHTML + "=1", envEngine + "=e", envGPU + "=g",
	}, "-test.benchtime=8x")
	require.Contains(t, stdout, "[redacted]", "the failures and the model id quote the echo:\n%s", stdout)

	outputs := map[string]string{"log and benchmark line": stdout}
	files, err := filepath.Glob(filepath.Join(out, "*"))
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		outputs[filepath.Ext(f)] = string(b)
		if filepath.Ext(f) == ".json" {
			var sum bytes.Buffer
			require.NoError(t, reporters.WriteSummary(&sum, readArtifact(t, f)))
			outputs["summary"] = sum.String()
		}
	}
	for _, want := range []string{".json", ".bench", ".html", "summary"} {
		require.Contains(t, outputs, want, "files %v\n%s", files, stdout)
	}
	require.Contains(t, outputs[".json"], `"model_name": "m [redacted]"`, "the labels are the sampler's, scrubbed")
	leaks := []string{"OUTPUTKEY", "51c0de", "METRICSPW", hex.EncodeToString([]byte("OUTPUTKEY")), hex.EncodeToString([]byte("METRICSPW")),
		"&#x4F;", "&#x50;", `\\u0075`}
	for _, secret := range []string{key, pass} {
		for _, lead := range []string{"", "x", "xy"} { // base64 at every alignment
			enc := base64.StdEncoding.EncodeToString([]byte(lead + secret))
			leaks = append(leaks, enc[len(lead)+2:len(lead)+14])
		}
	}
	for name, text := range outputs {
		for _, leak := range leaks {
			require.NotContains(t, strings.ToLower(text), strings.ToLower(leak), "%s", name)
		}
	}
}
