package fakeserver

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOmitFinishReason: no chunk (nor a non-streamed choice) names a
// finish_reason; the stream still ends with usage and [DONE].
func TestOmitFinishReason(t *testing.T) {
	for _, finishChunk := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			cfg := small()
			cfg.Dialect.OmitFinishReason, cfg.Dialect.FinishChunk = true, finishChunk
			srv := NewInMemory(cfg)
			defer srv.Close()
			_, body, err := post(t, srv, streamBody(goldenPrompt, 64), nil)
			require.NoError(t, err)
			assert.NotContains(t, string(body), "finish_reason")
			d := decode(body)
			assert.True(t, d.done)
			assert.NotNil(t, d.usage)
			b := streamBody(goldenPrompt, 64)
			b.Stream, b.StreamOptions = false, nil
			_, body, err = post(t, srv, b, nil)
			require.NoError(t, err)
			assert.NotContains(t, string(body), "finish_reason")
		})
	}
}

// TestThinkTags: reasoning travels inside the content between <think>
// tags, in the stream and in a non-streamed message; the trace still
// counts it as reasoning.
func TestThinkTags(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := small()
		cfg.Dialect.ThinkTags = true
		srv := NewInMemory(cfg)
		defer srv.Close()
		_, body, err := post(t, srv, streamBody(goldenPrompt, 64), nil)
		require.NoError(t, err)
		d := decode(body)
		assert.Empty(t, d.reasoning)
		require.True(t, strings.HasPrefix(d.content, thinkOpen), d.content)
		thought, answer, ok := strings.Cut(strings.TrimPrefix(d.content, thinkOpen), thinkClose)
		require.True(t, ok, d.content)
		assert.Equal(t, "ANVIL_REQ_1717_00004 code code code", answer)
		assert.NotEmpty(t, thought)
		b := streamBody(goldenPrompt, 64)
		b.Stream, b.StreamOptions = false, nil
		_, body, err = post(t, srv, b, nil)
		require.NoError(t, err)
		var c struct {
			Choices []struct {
				Message map[string]any `json:"message"`
			} `json:"choices"`
		}
		require.NoError(t, json.Unmarshal(body, &c))
		content, _ := c.Choices[0].Message["content"].(string)
		assert.True(t, strings.HasPrefix(content, thinkOpen), content)
		assert.True(t, strings.HasSuffix(content, thinkClose+answer), content)
		assert.NotContains(t, c.Choices[0].Message, "reasoning_content")
		synctest.Wait()
		tr, _ := srv.Trace(0)
		assert.Equal(t, 3, tr.ReasoningTokens)
		assert.Equal(t, chunkReasoning, outputChunks(tr)[0].Kind)
	})
}

// TestTruncatePrompt: a prompt longer than the window is cut to its last
// MaxModelLen tokens silently (usage says MaxModelLen), where the default
// answers 400 context_length_exceeded.
func TestTruncatePrompt(t *testing.T) {
	for _, truncate := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			cfg := exact() // one character per token
			cfg.MaxModelLen = 500
			cfg.Dialect.TruncatePrompt = truncate
			srv := NewInMemory(cfg)
			defer srv.Close()
			resp, body, err := post(t, srv, streamBody(strings.Repeat("y", 800), 16), nil)
			require.NoError(t, err)
			synctest.Wait()
			tr, _ := srv.Trace(0)
			if !truncate {
				assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
				assert.Contains(t, string(body), "context_length_exceeded")
				return
			}
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
			d := decode(body)
			assert.Equal(t, 500, d.usage.Usage.PromptTokens)
			assert.Equal(t, 5, d.usage.Usage.CompletionTokens)
			assert.Equal(t, "stop", d.finish)
			assert.Equal(t, 300, tr.TruncatedTokens)
			assert.Equal(t, 500, tr.PromptTokens)
		})
	}
}

// TestBadRequests: by default invalid JSON, an unknown model and malformed
// messages get a prompt 4xx with an OpenAI JSON error; with
// Dialect.HTMLErrors they get a 500 HTML page.
func TestBadRequests(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"invalid JSON", `{"messages":[`, 400},
		{"unknown model", `{"model":"nope","messages":[{"role":"user","content":"hi"}]}`, 404},
		{"messages not an array", `{"messages":"hi"}`, 400},
		{"content not text", `{"messages":[{"role":"user","content":42}]}`, 400},
		{"no messages", `{"messages":[]}`, 400},
		{"context too long", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1000000}`, 400},
	} {
		for _, html := range []bool{false, true} {
			synctest.Test(t, func(t *testing.T) {
				cfg := small()
				cfg.Dialect.HTMLErrors = html
				srv := NewInMemory(cfg)
				defer srv.Close()
				start := time.Now()
				resp, err := srv.Client().Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(tc.body))
				require.NoError(t, err)
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.NoError(t, err)
				assert.Zero(t, time.Since(start), "%s: answered at once", tc.name)
				if html {
					assert.Equal(t, http.StatusInternalServerError, resp.StatusCode, tc.name)
					assert.Equal(t, "text/html", resp.Header.Get("Content-Type"))
					assert.Equal(t, htmlErrorBody, string(body))
					return
				}
				assert.Equal(t, tc.status, resp.StatusCode, tc.name)
				assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
				assertErrorBody(t, body, "invalid_request_error")
			})
		}
	}
}

// TestTokenizeSkew: /tokenize disagrees with usage by exactly the skew.
func TestTokenizeSkew(t *testing.T) {
	for _, skew := range []int{-3, 0, 4} {
		synctest.Test(t, func(t *testing.T) {
			cfg := small()
			cfg.Dialect.TokenizeSkew = skew
			srv := NewInMemory(cfg)
			defer srv.Close()
			m := `[{"role":"user","content":"` + strings.Repeat("word ", 30) + `"}]`
			_, body, err := post(t, srv, streamBody(strings.Repeat("word ", 30), 8), nil)
			require.NoError(t, err)
			usage := decode(body).usage.Usage.PromptTokens
			_, got := tokenizeCount(t, srv, "/tokenize", `{"messages":`+m+`}`)
			var count int
			var ids []int
			require.NoError(t, json.Unmarshal(got["count"], &count))
			require.NoError(t, json.Unmarshal(got["tokens"], &ids))
			assert.Equal(t, usage+skew, count)
			assert.Len(t, ids, count)
		})
	}
}

// TestTemperatureZeroIsDeterministic: identical requests at temperature 0
// get identical text; with Config.Nondeterministic, or without
// temperature 0, they do not.
func TestTemperatureZeroIsDeterministic(t *testing.T) {
	for _, tc := range []struct {
		name   string
		temp   string
		nondet bool
		same   bool
	}{
		{"temperature 0", `,"temperature":0`, false, true},
		{"temperature 0, nondeterministic", `,"temperature":0`, true, false},
		{"temperature 0.7", `,"temperature":0.7`, false, false},
		{"no temperature", ``, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := Fast() // 8 to 16 reasoning and answer tokens drawn per request
				cfg.Nondeterministic = tc.nondet
				srv := NewInMemory(cfg)
				defer srv.Close()
				var texts []string
				for range 2 {
					resp, err := srv.Client().Post(srv.URL+"/v1/chat/completions", "application/json",
						strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"summarize the code"}]`+tc.temp+`}`))
					require.NoError(t, err)
					body, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					require.NoError(t, err)
					d := decode(body)
					texts = append(texts, d.reasoning+"|"+d.content)
				}
				assert.Equal(t, tc.same, texts[0] == texts[1], "%q vs %q", texts[0], texts[1])
			})
		})
	}
}

// get fetches path and returns the status and body.
func get(t *testing.T, srv *Server, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b
}

// TestContextLengthEndpoints: the context length is exposed the ways real
// servers do, each endpoint only when switched on.
func TestContextLengthEndpoints(t *testing.T) {
	type route struct{ method, path, body string }
	props := route{"GET", "/props", ""}
	ps := route{"GET", "/api/ps", ""}
	show := route{"POST", "/api/show", `{"model":"fake-fast"}`}
	for _, tc := range []struct {
		name string
		edit func(*Dialect)
		r    route
		want any
	}{
		{"props", func(d *Dialect) { d.ServeProps = true }, props,
			map[string]any{"default_generation_settings": map[string]any{"n_ctx": 32768.0, "model": "fake-fast"},
				"total_slots": 16.0, "model_path": "fake-fast.gguf", "build_info": "fakeserver"}},
		{"api/ps", func(d *Dialect) { d.ServeOllamaPS = true }, ps,
			map[string]any{"models": []any{map[string]any{"name": "fake-fast", "model": "fake-fast", "size": 0.0, "digest": "", "size_vram": 0.0,
				"details": map[string]any{"format": "gguf", "family": "fake"}, "context_length": 32768.0}}}},
		{"api/show", func(d *Dialect) { d.ServeOllamaShow = true }, show,
			map[string]any{"modelfile": "", "parameters": "", "template": "", "capabilities": []any{"completion"},
				"details":    map[string]any{"format": "gguf", "family": "fake"},
				"model_info": map[string]any{"general.architecture": "fake", "fake.context_length": 32768.0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := NewInMemory(Fast())
				status, _ := get(t, srv, tc.r.method, tc.r.path, tc.r.body)
				assert.Equal(t, http.StatusNotFound, status, "off by default")
				srv.Close()
				cfg := Fast()
				tc.edit(&cfg.Dialect)
				srv = NewInMemory(cfg)
				defer srv.Close()
				status, body := get(t, srv, tc.r.method, tc.r.path, tc.r.body)
				require.Equal(t, http.StatusOK, status, "%s", body)
				var got any
				require.NoError(t, json.Unmarshal(body, &got))
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", tc.r.path, diff)
				}
			})
		})
	}
	synctest.Test(t, func(t *testing.T) {
		cfg := Fast()
		cfg.Dialect.ServeOllamaShow = true
		srv := NewInMemory(cfg)
		defer srv.Close()
		status, body := get(t, srv, "POST", "/api/show", `{"name":"llama3"}`)
		assert.Equal(t, http.StatusNotFound, status)
		assert.JSONEq(t, `{"error":"model 'llama3' not found"}`, string(body))
	})
}

// TestModelsWithoutContextLength: Dialect.OmitModelLen leaves
// max_model_len out of /v1/models.
func TestModelsWithoutContextLength(t *testing.T) {
	for _, omit := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			cfg := Fast()
			cfg.Dialect.OmitModelLen = omit
			srv := NewInMemory(cfg)
			defer srv.Close()
			status, body := get(t, srv, "GET", "/v1/models", "")
			require.Equal(t, http.StatusOK, status)
			var m struct{ Data []map[string]any }
			require.NoError(t, json.Unmarshal(body, &m))
			require.Len(t, m.Data, 1)
			_, has := m.Data[0]["max_model_len"]
			assert.Equal(t, !omit, has)
			assert.Equal(t, "fake-fast", m.Data[0]["id"])
		})
	}
}

// TestGzip: a gzip stream is compressed only when the dialect says so and
// (for gzipIfAccepted) the client allows it, and each event can be read
// as soon as it is written.
func TestGzip(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mode   string
		accept string
		gz     bool
	}{
		{"off", gzipOff, "gzip", false},
		{"if accepted, accepted", gzipIfAccepted, "br, gzip;q=0.8", true},
		{"if accepted, any", gzipIfAccepted, "*", true},
		{"if accepted, refused", gzipIfAccepted, "gzip;q=0, identity", false},
		{"if accepted, none", gzipIfAccepted, "", false},
		{"always, identity asked", gzipAlways, "identity", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := exact()
				cfg.DecodeStep = time.Second
				cfg.Dialect.Gzip = tc.mode
				srv := NewInMemory(cfg)
				defer srv.Close()
				b, err := json.Marshal(streamBody("hello", 64))
				require.NoError(t, err)
				req, err := http.NewRequest("POST", srv.URL+"/v1/chat/completions", strings.NewReader(string(b)))
				require.NoError(t, err)
				if tc.accept != "" {
					req.Header.Set("Accept-Encoding", tc.accept)
				}
				start := time.Now()
				resp, err := srv.Client().Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				var r io.Reader = resp.Body
				if tc.gz {
					require.Equal(t, "gzip", resp.Header.Get("Content-Encoding"))
					zr, err := gzip.NewReader(resp.Body)
					require.NoError(t, err)
					r = zr
				} else {
					require.Empty(t, resp.Header.Get("Content-Encoding"))
				}
				br := bufio.NewReader(r)
				line, err := br.ReadString('\n')
				require.NoError(t, err)
				require.True(t, strings.HasPrefix(line, "data: {"), line)
				assert.Equal(t, 5*time.Microsecond, time.Since(start), "the first event arrives after the prefill, not at the end")
				rest, err := io.ReadAll(br)
				require.NoError(t, err)
				d := decode([]byte(line + string(rest)))
				assert.True(t, d.done)
				assert.Equal(t, 5, d.usage.Usage.CompletionTokens)
			})
		})
	}
}

// TestIdleTimeout: the server closes a keep-alive connection idle for
// Config.IdleTimeout, so the next request dials a new one.
func TestIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := Fast()
		cfg.IdleTimeout = 10 * time.Second
		srv := NewInMemory(cfg)
		defer srv.Close()
		reused := func() bool {
			var got bool
			req, err := http.NewRequest("GET", srv.URL+"/v1/models", nil)
			require.NoError(t, err)
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
				GotConn: func(i httptrace.GotConnInfo) { got = i.Reused },
			}))
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			synctest.Wait()
			return got
		}
		assert.False(t, reused(), "first request dials")
		time.Sleep(9 * time.Second) // fake time: within the idle timeout
		assert.True(t, reused(), "idle 9 s < 10 s: the connection is kept")
		time.Sleep(10*time.Second + time.Nanosecond)
		assert.False(t, reused(), "idle past 10 s: the server closed it")
	})
}
