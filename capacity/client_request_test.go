package capacity

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// recorder answers writeOKStream and keeps the first chat request it saw.
type recorder struct {
	mu     sync.Mutex
	header http.Header
	body   map[string]any
	status int
	answer string
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	if rc.body == nil {
		rc.header = r.Header.Clone()
		_ = json.Unmarshal(raw, &rc.body)
	}
	rc.mu.Unlock()
	if rc.status != 0 {
		w.WriteHeader(rc.status)
		_, _ = io.WriteString(w, rc.answer+" "+r.Header.Get("Authorization"))
		return
	}
	writeOKStream(w, raw)
}

// TestRequestBody checks the body of DESIGN.md section 4 for each sampling
// and thinking control, with ExtraBody merged and the headers sent.
func TestRequestBody(t *testing.T) {
	base := map[string]any{
		"model":          "m",
		"max_tokens":     float64(64),
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"ignore_eos":     true,
	}
	with := func(kv ...any) map[string]any {
		m := make(map[string]any, len(base)+len(kv)/2)
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name  string
		w     Workload
		want  map[string]any
		flags ServeFlags
	}{
		{"defaults", Workload{}, with(), ServeFlags{ThinkingMode: "default"}},
		{"sampling", Workload{Temperature: Float64(0.9), TopP: Float64(0.95)}, with("temperature", 0.9, "top_p", 0.95), ServeFlags{ThinkingMode: "default"}},
		{"thinking enabled", Workload{ThinkingMode: ThinkingEnabled}, with("chat_template_kwargs", map[string]any{"enable_thinking": true}), ServeFlags{ThinkingMode: "enabled"}},
		{"thinking disabled", Workload{ThinkingMode: ThinkingDisabled}, with("chat_template_kwargs", map[string]any{"enable_thinking": false}), ServeFlags{ThinkingMode: "disabled", NoThinking: true}},
		{"thinking unsupported", Workload{ThinkingMode: ThinkingUnsupported}, with(), ServeFlags{ThinkingMode: "unsupported"}},
		{"reasoning effort", Workload{ReasoningEffort: ReasoningHigh}, with("reasoning_effort", "high"), ServeFlags{ThinkingMode: "default", ReasoningEffort: new("high")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("ANVIL_TEST_KEY", "sk-test-secret")
			synctest.Test(t, func(t *testing.T) {
				rc := &recorder{}
				tg := pipeTarget(t, rc)
				tg.APIKeyEnv = "ANVIL_TEST_KEY"
				tg.Headers = http.Header{"X-Team": {"bench"}}
				tg.ExtraBody = map[string]any{"ignore_eos": true}
				w := tt.w
				w.Requests, w.Concurrency, w.ContextTokens = 1, 1, 512
				rep, err := Run(t.Context(), tg, w)
				require.NoError(t, err)
				require.Equal(t, 1, rep.Completed)

				msgs := rc.body["messages"].([]any)
				delete(rc.body, "messages")
				require.Empty(t, cmp.Diff(tt.want, rc.body))
				plan, err := NewPlan(w, 8192, DefaultMargin, "")
				require.NoError(t, err)
				prompt, err := plan.AppendPrompt(nil, 0)
				require.NoError(t, err)
				require.Equal(t, []any{map[string]any{"role": "user", "content": string(prompt)}}, msgs)

				require.Equal(t, "Bearer sk-test-secret", rc.header.Get("Authorization"))
				require.Equal(t, "bench", rc.header.Get("X-Team"))
				require.Equal(t, "application/json", rc.header.Get("Content-Type"))
				require.Equal(t, "text/event-stream", rc.header.Get("Accept"))
				require.Equal(t, "identity", rc.header.Get("Accept-Encoding"), "no compressor may buffer the stream")

				sf := rep.ServeFlags
				require.Equal(t, tt.flags.ThinkingMode, sf.ThinkingMode)
				require.Equal(t, tt.flags.NoThinking, sf.NoThinking)
				require.Equal(t, tt.flags.ReasoningEffort, sf.ReasoningEffort)
				require.Equal(t, w.Temperature != nil, rep.Sampling.Temperature.Sent)
				require.Equal(t, w.Temperature, rep.Sampling.Temperature.Requested)
				require.Equal(t, w.Temperature, rep.Sampling.Temperature.EffectiveRequest)
				require.Equal(t, w.TopP, rep.Sampling.TopP.EffectiveRequest)
			})
		})
	}
}

// TestSecretNeverRecorded: a server echoing the bearer token in its error
// body gets it redacted from the failure and the error.
func TestSecretNeverRecorded(t *testing.T) {
	t.Setenv("ANVIL_TEST_KEY", "sk-test-secret")
	for _, status := range []int{http.StatusInternalServerError, http.StatusUnauthorized} {
		synctest.Test(t, func(t *testing.T) {
			tg := pipeTarget(t, &recorder{status: status, answer: "invalid key:"})
			tg.APIKeyEnv = "ANVIL_TEST_KEY"
			rep, err := Run(t.Context(), tg, Workload{Requests: 2, Concurrency: 1, ContextTokens: 512})
			b, jerr := json.Marshal(rep)
			require.NoError(t, jerr)
			require.NotContains(t, string(b), "sk-test-secret")
			require.Contains(t, string(b), "invalid key: Bearer [redacted]")
			if err != nil {
				require.ErrorIs(t, err, ErrEndpointRefused)
				require.NotContains(t, err.Error(), "sk-test-secret")
			}
		})
	}
}

// TestAppendJSONStringMatchesEncodingJSON compares the body's string
// encoder with encoding/json (HTML escaping off) on awkward inputs.
func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\" back\\slash", "\x00\x01\b\f\n\r\t\x1f\x7f", "<&>", "é€😀", "\u2028\u2029", "bad\xffutf8\xc3", strings.Repeat("def helper_1():\n", 3)} {
		require.Equal(t, encodingJSON(t, s), string(appendJSONString(nil, []byte(s), escapeGo)), "%q", s)
	}
}

func encodingJSON(t testing.TB, s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(s))
	return strings.TrimSuffix(b.String(), "\n")
}

// FuzzAppendJSONString: the request body's escaping is encoding/json's to
// the byte; the artifact's (Python's) escaping decodes to the same string;
// strings and byte slices encode alike.
func FuzzAppendJSONString(f *testing.F) {
	f.Add("def helper_0():\n    return compute(0)  # routine specialist context\n")
	f.Add("\u2028\xff\"\\")
	f.Add("\x00\x1f\x7f\t<&>é😀\xc3")
	f.Fuzz(func(t *testing.T, s string) {
		got := appendJSONString(nil, []byte(s), escapeGo)
		require.Equal(t, encodingJSON(t, s), string(got))
		require.Equal(t, string(got), string(appendJSONString(nil, s, escapeGo)), "string and []byte")
		var back string
		require.NoError(t, json.Unmarshal(got, &back))
		if utf8.ValidString(s) {
			require.Equal(t, s, back)
		}

		py := appendJSONString(nil, s, escapePython)
		require.Equal(t, string(py), string(appendJSONString(nil, []byte(s), escapePython)), "string and []byte")
		var pyBack string
		require.NoError(t, json.Unmarshal(py, &pyBack))
		require.Equal(t, back, pyBack, "both escapings decode to the same string")
		require.True(t, utf8.Valid(py))
	})
}

// TestAppendJSONStringEscapings pins where the two escapings differ.
func TestAppendJSONStringEscapings(t *testing.T) {
	for _, tc := range []struct{ in, goWant, pyWant string }{
		{"a\u2028b\u2029", `"a\u2028b\u2029"`, "\"a\u2028b\u2029\""},
		{"bad\xff", `"bad\ufffd"`, "\"bad\ufffd\""},
		{"\x01\"\\\n<>&\x7f", `"\u0001\"\\\n<>&` + "\x7f\"", `"\u0001\"\\\n<>&` + "\x7f\""},
	} {
		require.Equal(t, tc.goWant, string(appendJSONString(nil, tc.in, escapeGo)), "%q", tc.in)
		require.Equal(t, tc.pyWant, string(appendJSONString(nil, tc.in, escapePython)), "%q", tc.in)
	}
}

// TestAppendJSONStringAllocs: encoding into a buffer with room allocates
// nothing, from a string or from bytes.
func TestAppendJSONStringAllocs(t *testing.T) {
	s := "é \"quoted\"\n\xff\u2028 " + strings.Repeat("def helper_1():\n", 64)
	b := []byte(s)
	buf := make([]byte, 0, 8*len(s))
	for _, esc := range []jsonEscaping{escapeGo, escapePython} {
		require.Zero(t, testing.AllocsPerRun(100, func() { buf = appendJSONString(buf[:0], s, esc) }))
		require.Zero(t, testing.AllocsPerRun(100, func() { buf = appendJSONString(buf[:0], b, esc) }))
	}
}

// TestBodyBufferReuse: the body storage is reused only once the transport
// closed every reader it was handed.
func TestBodyBufferReuse(t *testing.T) {
	var b bodyBuffer
	b.buf = append(b.reset(), "first"...)
	r := b.reader()
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, "first", string(got))
	held := b.buf
	b.buf = append(b.reset(), "second"...)
	require.Equal(t, "first", string(held), "an open reader keeps its bytes")
	require.NoError(t, r.Close())
	require.NoError(t, r.Close(), "Close is idempotent")

	r2 := b.reader()
	require.NoError(t, r2.Close())
	prev := &b.buf[0]
	b.buf = append(b.reset(), "third"...)
	require.Same(t, prev, &b.buf[0], "closed readers free the storage for reuse")
}

func BenchmarkAppendBody(b *testing.B) {
	enc, err := newRequestEncoder(Target{Model: "m", ExtraBody: map[string]any{"ignore_eos": true}}, Workload{MaxTokens: 64, Temperature: Float64(0.9)})
	require.NoError(b, err)
	plan, err := NewPlan(Workload{Requests: 1, ContextTokens: 65536}, 131072, DefaultMargin, "")
	require.NoError(b, err)
	prompt, err := plan.AppendPrompt(nil, 0)
	require.NoError(b, err)
	var buf []byte
	b.ReportAllocs()
	b.SetBytes(int64(len(prompt)))
	for b.Loop() {
		buf = enc.appendBody(buf[:0], prompt)
	}
}
