package capacity

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
)

// The planted credentials: each holds characters a JSON encoder may escape.
const (
	plantedKey    = "sk-PLANTEDKEY-7f3a9c/0b1d"
	plantedJWT    = "eyJPLANTEDJWT.x-y/z"
	plantedPass   = "PLANTEDPASS-9e8d"
	plantedMarker = "PLANTED" // no part of any credential may survive
)

// rawReply hijacks the connection and writes a raw HTTP answer, so that a
// test can send a reason phrase or a status line net/http would not.
func rawReply(w http.ResponseWriter, r *http.Request, raw string) {
	_, _ = bufio.NewReader(r.Body).WriteTo(new(bytes.Buffer))
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	_, _ = buf.WriteString(raw)
	_ = buf.Flush()
}

// jsonEscapeAll writes every character of s as a \u escape, as a server
// that escapes aggressively would.
func jsonEscapeAll(s string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}

// echoedCredentials are the credentials of a request as the server saw them.
func echoedCredentials(r *http.Request) string {
	return r.Header.Get("Authorization") + " " + r.Header.Get("X-Jwt")
}

// sseAfterContent writes a content chunk stream ending with extra.
func sseAfterContent(w http.ResponseWriter, extra string) {
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n")
	fmt.Fprint(w, extra)
}

// TestPlantedCredentialsNeverLeak: a server echoes the run's credentials
// through every path a server string takes; none of them, raw, escaped or
// Basic-encoded, appears in the serialized report or in Run's error.
func TestPlantedCredentialsNeverLeak(t *testing.T) {
	chat := map[string]func(w http.ResponseWriter, r *http.Request){
		"content type": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; echo="+strings.ReplaceAll(echoedCredentials(r), " ", "_"))
			fmt.Fprint(w, "not a stream")
		},
		"reason phrase": func(w http.ResponseWriter, r *http.Request) {
			rawReply(w, r, "HTTP/1.1 500 "+echoedCredentials(r)+"\r\nContent-Length: 0\r\n\r\n")
		},
		"malformed status line": func(w http.ResponseWriter, r *http.Request) {
			rawReply(w, r, "HTTP/1.1 5x0 "+echoedCredentials(r)+"\r\n\r\n")
		},
		"finish reason": func(w http.ResponseWriter, r *http.Request) {
			sseAfterContent(w, fmt.Sprintf("data: {\"choices\":[{\"delta\":{},\"finish_reason\":%q}]}\n\ndata: {\"cut", echoedCredentials(r)))
		},
		"json escaped body": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			esc := strings.ReplaceAll(strings.ReplaceAll(echoedCredentials(r), "-", `\u002d`), "/", `\/`)
			fmt.Fprintf(w, `{"error":{"message":"bad credentials %s and %s"}}`, esc, jsonEscapeAll(echoedCredentials(r)))
		},
		"error event": func(w http.ResponseWriter, r *http.Request) {
			sseAfterContent(w, "event: error\ndata: "+echoedCredentials(r)+"\n\n")
		},
		"error object": func(w http.ResponseWriter, r *http.Request) {
			sseAfterContent(w, fmt.Sprintf("data: {\"error\":{\"message\":%q}}\n\n", echoedCredentials(r)))
		},
		"malformed chunk": func(w http.ResponseWriter, r *http.Request) {
			sseAfterContent(w, "data: {"+echoedCredentials(r)+"\n\n")
		},
		"usage value": func(w http.ResponseWriter, r *http.Request) {
			sseAfterContent(w, fmt.Sprintf("data: {\"choices\":[],\"usage\":{\"completion_tokens\":%q}}\n\ndata: [DONE]\n\n", echoedCredentials(r)))
		},
		"redirect": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "http://elsewhere.invalid/"+strings.ReplaceAll(echoedCredentials(r), " ", "/"))
			w.WriteHeader(http.StatusFound)
		},
		"usage value cut inside the echo": func(w http.ResponseWriter, r *http.Request) {
			pad := strings.Repeat("x", client.MaxBadUsageText-len(`"Bearer sk-PLANTEDK`))
			sseAfterContent(w, fmt.Sprintf("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%q}}\n\ndata: [DONE]\n\n", pad+echoedCredentials(r)))
		},
		"upper-cased echo": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, strings.ToUpper(echoedCredentials(r)))
		},
		"percent-encoded location": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "http://elsewhere.invalid/login/"+url.PathEscape(echoedCredentials(r))+"?k="+url.QueryEscape(echoedCredentials(r)))
			w.WriteHeader(http.StatusFound)
		},
		"base64 echo": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, base64.StdEncoding.EncodeToString([]byte(echoedCredentials(r))), " ", base64.RawURLEncoding.EncodeToString([]byte(r.Header.Get("X-Jwt"))))
		},
		"decoded basic echo": func(w http.ResponseWriter, r *http.Request) {
			user, pass, _ := r.BasicAuth()
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, "user %s:%s (password %s) token %s", user, pass, strings.ToLower(pass), echoedCredentials(r))
		},
		"long body cut inside the echo": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			pad := strings.Repeat("x", client.MaxErrorExcerpt-len("Bearer sk-PLANT"))
			fmt.Fprint(w, pad+echoedCredentials(r))
		},
	}
	models := map[string]func(w http.ResponseWriter, r *http.Request){
		"models reason phrase": func(w http.ResponseWriter, r *http.Request) {
			rawReply(w, r, "HTTP/1.1 500 "+echoedCredentials(r)+"\r\nContent-Length: 0\r\n\r\n")
		},
		"models refused with an echo": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, echoedCredentials(r))
		},
		"models id": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"data":[{"id":"m-%s","max_model_len":8192}]}`, strings.ReplaceAll(echoedCredentials(r), " ", "_"))
		},
	}
	basic := base64.StdEncoding.EncodeToString([]byte("bench:" + plantedPass))
	check := func(t *testing.T, rep *artifact.Report, err error) {
		t.Helper()
		var out strings.Builder
		if rep != nil {
			_, err := rep.WriteTo(&out)
			require.NoError(t, err)
		}
		if err != nil {
			out.WriteString(err.Error())
		}
		got := out.String()
		var msgs []string
		if rep != nil {
			for _, f := range rep.Failures {
				msgs = append(msgs, f.ErrorMessage)
			}
		}
		leaks := []string{plantedMarker, "7f3a9c", "LANTED", "9e8d", basic, "YmVuY2g6"}
		for _, c := range []string{plantedKey, plantedJWT, plantedPass} {
			leaks = append(leaks, client.Base64Cores(c)...)
		}
		for _, leak := range leaks {
			require.False(t, strings.Contains(strings.ToLower(got), strings.ToLower(leak)), "%q leaked; error %v; failure messages %q", leak, err, msgs)
		}
	}
	t.Setenv("ANVIL_TEST_PLANTED_KEY", plantedKey)
	for name, h := range chat {
		for _, auth := range []string{"bearer", "basic"} {
			t.Run(name+"/"+auth, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					tg := pipeTarget(t, http.HandlerFunc(h))
					tg.HTTPClient.CheckRedirect = noRedirects
					tg.Headers = http.Header{"X-Jwt": {plantedJWT}}
					if auth == "bearer" {
						tg.APIKeyEnv = "ANVIL_TEST_PLANTED_KEY"
					} else {
						tg.BaseURL = "http://bench:" + plantedPass + "@pipe.invalid/v1"
					}
					rep, err := Run(t.Context(), tg, Workload{Requests: 2, Concurrency: 1, ContextTokens: 512})
					require.NotNil(t, rep)
					require.NotEmpty(t, rep.Failures)
					check(t, rep, err)
				})
			})
		}
	}
	for name, h := range models {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mux := http.NewServeMux()
				mux.HandleFunc("GET /v1/models", h)
				mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
					w.WriteHeader(http.StatusInternalServerError)
					fmt.Fprint(w, echoedCredentials(r))
				})
				tg := pipeTarget(t, mux)
				tg.Model, tg.MaxModelLen = "", 0
				tg.APIKeyEnv = "ANVIL_TEST_PLANTED_KEY"
				tg.Headers = http.Header{"X-Jwt": {plantedJWT}}
				rep, err := Run(t.Context(), tg, Workload{Requests: 1, Concurrency: 1, ContextTokens: 512})
				check(t, rep, err)
			})
		})
	}
}
