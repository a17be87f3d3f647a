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
	"github.com/anvilbench/anvil/capacity/internal/client"
)

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
		{"vllm abort", vllm + ".sse", finish("stop", "abort"), client.ErrorTypeAborted, `finish_reason "abort"`},
		{"sglang error", sglang + ".sse", func(b []byte) []byte { return endEvent(finish("length", "error")(b)) }, client.ErrorTypeAborted, `finish_reason "error"`},
		{"vllm error object", vllm + ".sse", func([]byte) []byte {
			return []byte(`data: {"object":"error","message":"The model does not support this request.","type":"BadRequestError","param":null,"code":400}` + "\n\n")
		}, client.ErrorTypeServerError, "in-stream error object: The model does not support this request."},
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
		require.Equal(t, client.ErrorTypeContextWindow, f.ErrorType)
		require.Equal(t, 400, *f.HTTPStatus)
		require.Contains(t, f.ErrorMessage, "HTTP 400 Bad Request: the server refused the prompt as longer than its context window: 44722 prompt tokens for a window of 8192 tokens")
	})
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
