package capacity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// captureStream is what the stream reader must find in a real capture.
type captureStream struct {
	events, content    int
	finish             []string
	prompt, completion *int // usage, nil when the stream has none
	cached             *int
	terminal           bool
	invalidType        string
	invalid            string // a part of the message
	timings            *artifact.ServerTimings
}

// TestReadStreamRealCaptures reads the streams of real engines, byte for
// byte as captured (testdata/transcripts/README.md), and checks what the
// reader finds against the captures' contents.
func TestReadStreamRealCaptures(t *testing.T) {
	llamaTimings := func(cache, prompt int, promptMS float64, predicted int, predictedMS float64) *artifact.ServerTimings {
		return &artifact.ServerTimings{CacheN: new(cache), PromptN: new(prompt), PromptMS: new(promptMS), PredictedN: new(predicted), PredictedMS: new(predictedMS)}
	}
	tests := []struct {
		file string
		edit func([]byte) []byte
		want captureStream
	}{
		{file: "llamacpp-b10573-stream-usage.sse", want: captureStream{events: 12, content: 8, finish: []string{"length"},
			prompt: new(71), completion: new(8), cached: new(0), terminal: true, timings: llamaTimings(0, 71, 104.236, 8, 1.985)}},
		{file: "llamacpp-b10573-stream-nousage.sse", want: captureStream{events: 11, content: 8, finish: []string{"length"},
			terminal: true, timings: llamaTimings(70, 1, 5.436, 8, 1.586)}},
		{file: "llamacpp-b10573-stream-max-tokens.sse", want: captureStream{events: 7, content: 3, finish: []string{"length"},
			prompt: new(71), completion: new(3), cached: new(70), terminal: true, timings: llamaTimings(70, 1, 0.661, 3, 0.418)}},
		{file: "llamacpp-b10573-stream-timings-per-token.sse", want: captureStream{events: 8, content: 4, finish: []string{"length"},
			prompt: new(71), completion: new(4), cached: new(19), terminal: true, timings: llamaTimings(19, 52, 2.813, 4, 1.118)}},
		{file: "llamacpp-b10573-unknown-model.sse", want: captureStream{events: 11, content: 8, finish: []string{"length"},
			terminal: true, timings: llamaTimings(70, 1, 5.529, 8, 1.585)}},
		{file: "llamacpp-b10573-stream-output-parse-error.sse", want: captureStream{events: 3, content: 1,
			invalidType: errorTypeServerError, invalid: "does not match the expected peg-native format"}},
		// Its final "data: [DONE]" has no blank line after it (the spec's
		// heredoc): not an event, and nothing is lost (trailingDone).
		{file: "vllm-unknown-stream-continuous-usage-from-discourse-discourse-ai.sse", want: captureStream{events: 28, content: 25,
			finish: []string{"stop"}, prompt: new(46), completion: new(26)}},
		// The fixture lost its blank separator lines (it was a list of
		// lines); they are put back.
		{file: "vllm-unknown-stream-usage-vision-from-sgl-project-genai-bench.sse",
			edit: func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\n\n")) },
			want: captureStream{events: 8, content: 5, finish: []string{"length"}, prompt: new(6421), completion: new(5), terminal: true}},
		// The excerpts end without the blank line of their last event.
		{file: "vllm-unknown-stream-usage-excerpt-from-sgl-project-genai-bench.sse", edit: endEvent, want: captureStream{events: 3, content: 2,
			finish: []string{"length"}, prompt: new(5), completion: new(2)}},
		{file: "sglang-unknown-stream-usage-excerpt-from-sgl-project-genai-bench.sse", edit: endEvent, want: captureStream{events: 2, content: 1,
			finish: []string{"length"}, prompt: new(5), completion: new(1)}},
		{file: "tgi-3.2.1-stream-from-huggingface-huggingface_hub.sse", want: captureStream{events: 21, content: 20,
			finish: []string{"length"}, terminal: true}},
		{file: "tgi-3.0.1-stream-from-huggingface-huggingface_hub.sse", want: captureStream{events: 31, content: 29,
			finish: []string{"stop"}, terminal: true}},
		{file: "ollama-0.17.4-stream-usage.sse", want: captureStream{events: 15, content: 12, finish: []string{"length"},
			prompt: new(100), completion: new(24), terminal: true}},
		{file: "mock-llm-0.1.29-stream.sse", want: captureStream{events: 7, content: 6, finish: []string{"stop"}, terminal: true}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(transcripts, tt.file))
			require.NoError(t, err)
			if tt.edit != nil {
				b = tt.edit(b)
			}
			res, _ := readAll(t, bytes.NewReader(b))
			got := captureStream{events: res.events, content: res.contentChunks, finish: res.finishReasons,
				prompt: wireIntPtr(res.usage.prompt), completion: wireIntPtr(res.usage.completion), cached: wireIntPtr(res.usage.cachedToks),
				terminal: res.terminal, invalidType: res.invalidType, timings: serverTimingsOf(res.timings)}
			if tt.want.invalid != "" {
				require.Contains(t, res.invalid, tt.want.invalid)
				got.invalid = tt.want.invalid
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(captureStream{}), cmpopts.IgnoreUnexported(artifact.ServerTimings{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// endEvent ends an excerpt's last event with its blank line.
func endEvent(b []byte) []byte { return append(b, '\n') }

// TestRunServerEndsInFailure: a stream the server ends by giving up is a
// failure with its reason, never a success: vLLM's finish_reason "abort"
// and SGLang's "error" (on their real streams, edited at the finish), and
// a stream whose only event is a vLLM error object.
func TestRunServerEndsInFailure(t *testing.T) {
	vllm := "vllm-unknown-stream-continuous-usage-from-discourse-discourse-ai"
	sglang := "sglang-unknown-stream-usage-excerpt-from-sgl-project-genai-bench"
	finish := func(from, to string) func([]byte) []byte {
		return func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"finish_reason":"`+from+`"`), []byte(`"finish_reason":"`+to+`"`), 1)
		}
	}
	tests := []struct {
		name, file string
		edit       func([]byte) []byte
		errType    string
		message    string
	}{
		{"vllm abort", vllm + ".sse", finish("stop", "abort"), errorTypeAborted, `finish_reason "abort"`},
		{"sglang error", sglang + ".sse", func(b []byte) []byte { return endEvent(finish("length", "error")(b)) }, errorTypeAborted, `finish_reason "error"`},
		{"vllm error object", vllm + ".sse", func([]byte) []byte {
			return []byte(`data: {"object":"error","message":"The model does not support this request.","type":"BadRequestError","param":null,"code":400}` + "\n\n")
		}, errorTypeServerError, "in-stream error object: The model does not support this request."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := capture{status: 200, header: map[string][]string{"Content-Type": {"text/event-stream"}}}
				var err error
				c.body, err = os.ReadFile(filepath.Join(transcripts, tt.file))
				require.NoError(t, err)
				rep, err := runReplay(t, replay(c, tt.edit, nil), Workload{Requests: 2, Concurrency: 1, ContextTokens: 64}, false)
				require.NoError(t, err)
				require.Empty(t, rep.RequestTimings)
				require.False(t, rep.PerformanceEligible)
				require.Len(t, rep.Failures, 2)
				for _, f := range rep.Failures {
					require.Equal(t, artifact.FailureStreamValidation, f.FailureClass)
					require.Equal(t, tt.errType, f.ErrorType)
					require.Contains(t, f.ErrorMessage, tt.message)
				}
			})
		})
	}
}

// TestRunOverWindowRefusal: llama.cpp's refusal of a prompt over its
// window (the real 400) is error_type context_window with the server's
// counts in its message.
func TestRunOverWindowRefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := loadCapture(t, "llamacpp-b10573-stream-over-window.headers", "llamacpp-b10573-stream-over-window.json")
		rep, err := runReplay(t, replay(c, nil, nil), Workload{Requests: 2, Concurrency: 1, ContextTokens: 1024}, false)
		require.NoError(t, err)
		require.Len(t, rep.Failures, 2)
		f := rep.Failures[0]
		require.Equal(t, artifact.FailureHTTPError, f.FailureClass)
		require.Equal(t, errorTypeContextWindow, f.ErrorType)
		require.Equal(t, 400, *f.HTTPStatus)
		require.Contains(t, f.ErrorMessage, "HTTP 400 Bad Request: the server refused the prompt as longer than its context window: 44722 prompt tokens for a window of 8192 tokens")
	})
	// Any other 400 stays a plain http_status.
	for _, body := range []string{
		`{"error":{"code":400,"message":"x","type":"invalid_request_error"}}`,
		`{"error":{"type":"exceed_context_size_error","n_prompt_tokens":0,"n_ctx":8192}}`,
		`exceed_context_size_error`,
	} {
		_, ok := parseWindowRefusal(body)
		require.False(t, ok, body)
	}
}

// TestRunRecordsServerTimings: llama.cpp's timings object of the last
// chunk is each request's server_timings, as the server reported it.
func TestRunRecordsServerTimings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := loadCapture(t, "llamacpp-b10573-stream-usage.headers", "llamacpp-b10573-stream-usage.sse")
		rep, err := runReplay(t, replay(c, nil, nil), Workload{Requests: 2, Concurrency: 1, ContextTokens: transcriptContext, MaxTokens: 8}, false)
		require.NoError(t, err)
		require.Empty(t, rep.Failures)
		want := &artifact.ServerTimings{CacheN: new(0), PromptN: new(71), PromptMS: new(104.236), PredictedN: new(8), PredictedMS: new(1.985)}
		for _, d := range rep.AnvilGo.Requests {
			if diff := cmp.Diff(want, d.ServerTimings, cmpopts.IgnoreUnexported(artifact.ServerTimings{})); diff != "" {
				t.Errorf("request %d (-want +got):\n%s", d.RequestIndex, diff)
			}
		}
		var back artifact.Report
		b, err := json.Marshal(rep)
		require.NoError(t, err)
		require.NoError(t, back.UnmarshalJSON(b))
		require.Equal(t, 104.236, *back.AnvilGo.Requests[0].ServerTimings.PromptMS, "it survives the artifact")
	})
	for _, raw := range []string{`[]`, `{"prompt_ms":"1"}`, `{"cache_n":1.5,"prompt_ms":-1}`} {
		st := serverTimingsOf([]byte(raw))
		if raw == `[]` {
			require.Nil(t, st)
			continue
		}
		require.Nil(t, st.PromptMS, raw)
		require.Nil(t, st.CacheN, raw)
	}
}

// TestRunPerTokenITLFromContinuousUsage: vLLM's usage on every chunk gives
// each chunk's tokens, so the inter-token latency is per token. The real
// continuous_usage_stats stream is served one event every 12 ms, with the
// chunks of completion tokens 5, 7, ..., 17 removed: each next chunk then
// carries two tokens, whose 12 ms are two gaps of 6 ms. Per token: 24
// gaps, 14 of 6 ms (the median) and 10 of 12 ms; a gap per chunk would
// report 17 gaps of 12 ms.
func TestRunPerTokenITLFromContinuousUsage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(transcripts, "vllm-unknown-stream-continuous-usage-from-discourse-discourse-ai.sse"))
		require.NoError(t, err)
		var events [][]byte
		for _, ev := range bytes.Split(b, []byte("\n\n")) {
			if len(bytes.TrimSpace(ev)) == 0 {
				continue
			}
			removed := false
			for n := 5; n <= 17; n += 2 {
				removed = removed || bytes.Contains(ev, fmt.Appendf(nil, `"completion_tokens":%d}`, n))
			}
			if !removed {
				events = append(events, append(ev, "\n\n"...))
			}
		}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for i, ev := range events {
				if i > 0 {
					time.Sleep(12 * time.Millisecond)
				}
				_, _ = w.Write(ev)
				http.NewResponseController(w).Flush()
			}
		})
		rep, err := runReplay(t, h, Workload{Requests: 1, Concurrency: 1, ContextTokens: 64, MaxTokens: 32}, false)
		require.NoError(t, err)
		require.Empty(t, rep.Failures)
		ct := rep.AnvilGo.ChunkTiming
		require.NotNil(t, ct)
		require.True(t, ct.PerToken)
		require.Equal(t, 24, ct.Gaps, "the 24 tokens after the first one")
		require.Equal(t, 6.0, ct.ITLMS.P50)
		require.Equal(t, 12.0, ct.ITLMS.Max)
		d := rep.AnvilGo.Requests[0]
		require.Equal(t, 18, d.OutputChunks)
		require.Equal(t, 6.0, d.ITLMS.P50)
		require.Equal(t, 12.0, d.ITLMS.P90)
	})
}
