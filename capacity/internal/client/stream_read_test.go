package client

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/anvilbench/anvil/capacity/sse"
	"github.com/stretchr/testify/require"
)

// chunkJSON renders a chat.completion.chunk with one choice.
func chunkJSON(content, reasoning string) string {
	d := fmt.Sprintf(`{"content":%q`, content)
	if reasoning != "" {
		d += fmt.Sprintf(`,"reasoning_content":%q`, reasoning)
	}
	return fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":%s,"finish_reason":null}]}`, d+"}")
}

const usageJSON = `{"id":"c","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":24,"total_tokens":124,"prompt_tokens_details":{"cached_tokens":64}}}`

// readAll runs readStream over body, drains it after [DONE] as the client
// does, and returns the result and the tracker.
func readAll(t *testing.T, body io.Reader) (*streamResult, *trackedBody) {
	t.Helper()
	res := &streamResult{}
	tb := newTrackedBody(body, nil)
	readStream(tb, res, ChatCompletions.NewDecoder())
	if res.terminal {
		drainAfterTerminal(tb, func(error) {})
	}
	return res, tb
}

func TestReadStreamFraming(t *testing.T) {
	ok := "data: " + chunkJSON("", "think") + "\n\n" +
		"data: " + chunkJSON("Hello", "") + "\n\n" +
		"data: " + chunkJSON(" world", "") + "\n\n" +
		"data: " + usageJSON + "\n\n" +
		"data: [DONE]\n\n"
	tests := []struct {
		name string
		body string
	}{
		{"lf", ok},
		{"crlf", strings.ReplaceAll(ok, "\n", "\r\n")},
		{"cr", strings.ReplaceAll(ok, "\n", "\r")},
		{"comments and fields", ": keep-alive\n\n" + strings.ReplaceAll(ok, "data: {", "event: message\nid: 7\n: note\ndata: {")},
		{"multi-line data", strings.ReplaceAll(ok, `"choices":`, "\ndata: \"choices\":")},
		{"bom", "\xEF\xBB\xBF" + ok},
		{"trailing blank lines", ok + "\n\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tt.body), iotest.OneByteReader(strings.NewReader(tt.body))} {
				res, tb := readAll(t, r)
				require.Empty(t, res.invalid)
				require.NoError(t, res.readErr)
				require.True(t, res.terminal, "[DONE] observed")
				require.Equal(t, 2, res.contentChunks)
				require.Equal(t, 1, res.reasoningChunks)
				require.Equal(t, "Hello world", res.capture.String())
				require.True(t, res.usage.Present)
				require.Equal(t, Count{v: 100, ok: true}, res.usage.Prompt)
				require.Equal(t, Count{v: 24, ok: true}, res.usage.Completion)
				require.Equal(t, Count{v: 64, ok: true}, res.usage.Cached)
				require.Equal(t, bodyEOF, tb.end, "drained to the end after [DONE]")
			}
		})
	}
}

func TestReadStreamEnds(t *testing.T) {
	content := "data: " + chunkJSON("Hi", "") + "\n\n"
	tests := []struct {
		name     string
		body     io.Reader
		terminal bool
		trailing int64
		done     bool // the trailing bytes are a lone data: [DONE]
		end      bodyEnd
		readErr  error
	}{
		{name: "done", body: strings.NewReader(content + "data: [DONE]\n\n"), terminal: true, end: bodyEOF},
		{name: "no done, clean eof", body: strings.NewReader(content), end: bodyEOF},
		{name: "done without blank line", body: strings.NewReader(content + "data: [DONE]\n"), trailing: int64(len("data: [DONE]\n")), done: true, end: bodyEOF},
		{name: "done without line end", body: strings.NewReader(content + "data:[DONE]"), trailing: int64(len("data:[DONE]")), done: true, end: bodyEOF},
		{name: "done then more", body: strings.NewReader(content + "data: [DONE]\ndata: x"), trailing: int64(len("data: [DONE]\ndata: x")), end: bodyEOF},
		{name: "cut json chunk", body: strings.NewReader(content + `data: {"choices":[{"delta":{"content":"x`), trailing: int64(len(`data: {"choices":[{"delta":{"content":"x`)), end: bodyEOF},
		{name: "trailing comment is not an event", body: strings.NewReader(content + ": bye"), end: bodyEOF},
		{name: "unexpected eof", body: io.MultiReader(strings.NewReader(content), iotest.ErrReader(io.ErrUnexpectedEOF)), end: bodyError, readErr: io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, tb := readAll(t, tt.body)
			require.Empty(t, res.invalid)
			require.Equal(t, tt.terminal, res.terminal)
			require.Equal(t, tt.trailing, res.trailing)
			require.Equal(t, tt.done, res.trailingDone)
			require.Equal(t, tt.end, tb.end)
			if tt.readErr != nil {
				require.ErrorIs(t, res.readErr, tt.readErr)
				require.ErrorIs(t, tb.err, tt.readErr)
			} else {
				require.NoError(t, res.readErr)
			}
			require.Equal(t, 1, res.contentChunks)
		})
	}
}

func TestReadStreamViolations(t *testing.T) {
	content := "data: " + chunkJSON("Hi", "") + "\n\n"
	tests := []struct {
		name, body, want string
	}{
		{"event too large", content + "data: " + strings.Repeat("x", MaxEventSize) + "\n\n", "event larger than MaxEventSize"},
		{"malformed json", content + "data: {\"choices\":[}\n\n", "malformed JSON chunk (event 2)"},
		{"not an object", content + "data: hello\n\n", "malformed JSON chunk"},
		{"two objects", content + "data: {\"choices\":[]} {\"choices\":[]}\n\n", "data after the JSON object"},
		{"cut object", content + "data: {\"choices\":[\n\n", "malformed JSON chunk (event 2): unexpected EOF"},
		{"in-stream error", content + `data: {"error":{"message":"out of memory","code":500}}` + "\n\n", "in-stream error object: {\"message\":\"out of memory\""},
		{"error event", content + "event: error\ndata: overloaded\n\n", "in-stream error event: overloaded"},
		{"too many events", strings.Repeat("data: {}\n\n", maxStreamEvents+1), "more than maxStreamEvents"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _ := readAll(t, strings.NewReader(tt.body))
			require.Contains(t, res.invalid, tt.want)
			require.False(t, res.terminal)
		})
	}
}

func TestReadStreamDeltas(t *testing.T) {
	body := strings.Join([]string{
		`{"choices":[{"delta":{"role":"assistant","content":""}}]}`,         // role only: not output
		`{"choices":[{"delta":{"reasoning":"r1"}}]}`,                        // reasoning (ollama's field)
		`{"choices":[{"delta":{"reasoning":{"text":"x"},"content":null}}]}`, // non-string reasoning: not output
		`{"choices":[{"delta":{"content":"a"}}],"usage":null}`,
		`{"choices":[{"delta":{"content":"b"},"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":9}}`,
		`{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":11,"total_tokens":18}}`, // last usage wins
		`{"choices":[{"delta":{}}],"error":null}`,
	}, "\n\ndata: ")
	res, _ := readAll(t, strings.NewReader("data: "+body+"\n\ndata: [DONE]\n\n"))
	require.Empty(t, res.invalid)
	require.Equal(t, 2, res.contentChunks)
	require.Equal(t, 1, res.reasoningChunks)
	require.Equal(t, "ab", res.capture.String())
	require.Equal(t, []string{"length"}, res.finishReasons)
	require.Equal(t, Usage{Present: true, Prompt: Count{v: 7, ok: true}, Completion: Count{v: 11, ok: true}, Total: Count{v: 18, ok: true}}, res.usage)
	require.Equal(t, 8, res.events, "seven chunks and [DONE]")
}

func TestReadStreamCaptureBounded(t *testing.T) {
	var b strings.Builder
	for range 300 {
		b.WriteString("data: " + chunkJSON(strings.Repeat("é", 40), "") + "\n\n")
	}
	res, _ := readAll(t, strings.NewReader(b.String()+"data: [DONE]\n\n"))
	require.Equal(t, 300, res.contentChunks)
	require.Equal(t, VisibleCaptureLimit, res.capture.Len())
	require.True(t, res.capture.Truncated())
}

func TestTrailingCountsPendingBytes(t *testing.T) {
	tests := []struct {
		in      string
		pending int64
	}{
		{"data: x\n\n", 0},
		{"data: x\r\n\r\n", 0},
		{"data: x\r\r", 0},
		{"data: x\n", 8},
		{"data: x\r\n", 8},
		{": c\n", 0},
		{": c\ndata: y", 7},
		{"data: x\n\n: ka\n\ndata", 4},
	}
	for _, tt := range tests {
		tb := newTrackedBody(strings.NewReader(tt.in), nil)
		events := sse.NewReader(tb, MaxEventSize)
		for events.Scan() {
		}
		require.NoError(t, events.Err())
		n, _ := events.Trailing()
		require.Equal(t, tt.pending, n, "%q", tt.in)
		require.Equal(t, int64(len(tt.in)), tb.bytes)
	}
}

func TestTrackedBodyRecordsError(t *testing.T) {
	boom := errors.New("connection reset by peer")
	tb := newTrackedBody(iotest.ErrReader(boom), nil)
	_, err := tb.Read(make([]byte, 8))
	require.ErrorIs(t, err, boom)
	require.Equal(t, bodyError, tb.end)
	_, err = tb.Read(make([]byte, 8))
	require.ErrorIs(t, err, boom, "the error sticks")
}

// BenchmarkReadStream reads a 1,000-chunk reasoning-then-content stream
// with usage: the per-event cost of stamping, SSE parsing and decoding.
func BenchmarkReadStream(b *testing.B) {
	var sb strings.Builder
	for i := range 1000 {
		if i < 600 {
			sb.WriteString("data: " + chunkJSON("", "thinking step") + "\n\n")
		} else {
			sb.WriteString("data: " + chunkJSON(" code", "") + "\n\n")
		}
	}
	sb.WriteString("data: " + usageJSON + "\n\ndata: [DONE]\n\n")
	body := sb.String()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		res := &streamResult{}
		readStream(newTrackedBody(strings.NewReader(body), nil), res, ChatCompletions.NewDecoder())
		if !res.terminal || res.contentChunks != 400 {
			b.Fatalf("terminal %t, %d content chunks", res.terminal, res.contentChunks)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1002, "ns/event")
}

// TestDiscard checks that discard reads a body to its end, or to its
// limit (leaving the rest unread), or to its first error (no read after
// it), in reads of any size.
func TestDiscard(t *testing.T) {
	long := strings.Repeat("x", 3*discardBuffer+7)
	for _, tc := range []struct {
		name     string
		body     string
		limit    int64
		wantLeft int
		oneByte  bool
		fail     bool // the read after the body's last byte fails, and every one after it
	}{
		{name: "empty", body: "", limit: 64, wantLeft: 0},
		{name: "to its end", body: long, limit: 1 << 20, wantLeft: 0},
		{name: "to its end one byte a read", body: long, limit: 1 << 20, wantLeft: 0, oneByte: true},
		{name: "to the limit", body: long, limit: discardBuffer + 3, wantLeft: len(long) - discardBuffer - 3},
		{name: "exactly the limit", body: long, limit: int64(len(long)), wantLeft: 0},
		{name: "to an error", body: long, limit: 1 << 20, wantLeft: 0, fail: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &failingReader{src: strings.NewReader(tc.body), fail: tc.fail}
			var r io.Reader = src
			if tc.oneByte {
				r = iotest.OneByteReader(r)
			}
			discard(r, tc.limit)
			require.Equal(t, tc.wantLeft, src.src.Len())
			if tc.fail {
				require.Equal(t, 1, src.failed, "discard read on after the error")
			}
		})
	}
}

// failingReader reads src; once it is empty, with fail, every read fails
// (counted in failed) instead of ending at io.EOF.
type failingReader struct {
	src    *strings.Reader
	fail   bool
	failed int
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.fail && f.src.Len() == 0 {
		f.failed++
		return 0, errors.New("connection reset")
	}
	return f.src.Read(p)
}
