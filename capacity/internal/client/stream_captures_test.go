package client

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

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
	endEvent := func(b []byte) []byte { return append(b, '\n') } // an excerpt's last event gets its blank line
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
			invalidType: ErrorTypeServerError, invalid: "does not match the expected peg-native format"}},
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
				prompt: wireIntPtr(res.usage.Prompt), completion: wireIntPtr(res.usage.Completion), cached: wireIntPtr(res.usage.Cached),
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
