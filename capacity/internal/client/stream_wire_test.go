package client

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// wireEvents are the data payloads of a good stream: two content chunks,
// the usage chunk and [DONE]. Its prompt count passes the floor of a
// 512-token context.
var wireEvents = []string{
	`{"choices":[{"delta":{"role":"assistant","content":"hel"}}]}`,
	`{"choices":[{"delta":{"content":"lo"},"finish_reason":"stop"}]}`,
	`{"choices":[],"usage":{"prompt_tokens":400,"completion_tokens":2,"total_tokens":402}}`,
	terminalData,
}

// wireStream frames events with the line end eol, each event's data after
// "data" + sep.
func wireStream(events []string, sep, eol string) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString("data" + sep + e + eol + eol)
	}
	return b.String()
}

// contentEvent is a content chunk whose wire form "data: ...\n\n" is
// exactly size bytes.
func contentEvent(size int) string {
	const head, tail = `{"choices":[{"delta":{"content":"`, `"}}]}`
	return head + strings.Repeat("x", size-len("data: \n\n")-len(head)-len(tail)) + tail
}

// TestSendWireForms: every wire form the protocol accepts is a success with
// the same timings, and every one it refuses has its failure class, over a
// plain handler that writes the stream 10 ms after the headers.
func TestSendWireForms(t *testing.T) {
	good := wireStream(wireEvents, ": ", "\n")
	atLimit := wireStream(append([]string{contentEvent(MaxEventSize)}, wireEvents...), ": ", "\n")
	overLimit := wireStream(append([]string{contentEvent(MaxEventSize + 1)}, wireEvents...), ": ", "\n")
	require.Len(t, atLimit, len(good)+MaxEventSize)
	for _, tt := range []struct {
		name    string
		body    string
		gzip    bool
		class   artifact.FailureClass // "" for a success
		errType string
	}{
		{name: "lf", body: good},
		{name: "crlf", body: wireStream(wireEvents, ": ", "\r\n")},
		{name: "cr", body: wireStream(wireEvents, ": ", "\r")},
		{name: "bom", body: sseBOM + good},
		{name: "no space after colon", body: wireStream(wireEvents, ":", "\n")},
		{name: "comments and ignored fields", body: ": keep-alive\n\nid: 1\nretry: 5\n" + strings.ReplaceAll(good, "\n\n", "\n: ping\n\n")},
		{name: "no [DONE]", body: wireStream(wireEvents[:3], ": ", "\n")},
		{name: "[DONE] without its blank line", body: strings.TrimSuffix(good, "\n")},
		{name: "event of exactly MaxEventSize", body: atLimit},
		{name: "gzip flushed a byte at a time", body: good, gzip: true},
		{name: "event one byte over MaxEventSize", body: overLimit, class: artifact.FailureStreamValidation, errType: ErrorTypeEventTooLarge},
		{name: "trailing bytes", body: wireStream(wireEvents[:3], ": ", "\n") + `data: {"choices"`, class: artifact.FailureStreamValidation, errType: ErrorTypeTruncatedEvent},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.Copy(io.Discard, r.Body)
					w.Header().Set("Content-Type", eventStreamType)
					var out io.Writer = w
					flush := w.(http.Flusher).Flush
					if tt.gzip {
						w.Header().Set("Content-Encoding", "gzip")
						gz := gzip.NewWriter(w)
						defer gz.Close()
						out, flush = gz, func() { _ = gz.Flush(); w.(http.Flusher).Flush() }
					}
					w.WriteHeader(http.StatusOK)
					flush()
					time.Sleep(10 * time.Millisecond)
					if !tt.gzip {
						_, _ = io.WriteString(out, tt.body)
						return
					}
					for i := range len(tt.body) {
						_, _ = io.WriteString(out, tt.body[i:i+1])
						flush()
					}
				})
				_, row, f := sendPrompt(t, Config{HTTPClient: wiretest.Serve(t, h)})
				if tt.class != "" {
					require.NotNil(t, f)
					require.Equal(t, tt.class, f.FailureClass, f.ErrorMessage)
					require.Equal(t, tt.errType, f.ErrorType, f.ErrorMessage)
					return
				}
				require.Nil(t, f)
				require.Equal(t, 10.0, row.TTFTMS, "TTFT at the arrival of the first content")
				require.Equal(t, 10.0, row.E2EMS)
				require.Equal(t, 2, *row.OutputTokens)
			})
		})
	}
}

// TestSendBodyDiesMidEvent: a body that ends inside an event because the
// connection dropped (a sized or a chunked body cut short) is a drop
// mid-stream, eof, whatever the event already held.
func TestSendBodyDiesMidEvent(t *testing.T) {
	first := "data: " + wireEvents[0] + "\n\n"
	for _, framing := range []string{
		"Content-Length: 100000\r\n\r\n" + first + `data: {"choices":[{"del`,
		"Transfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n%s\r\n", len(first)+8, first+"data: {\"") + "40\r\nabc",
	} {
		synctest.Test(t, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				conn, buf, err := http.NewResponseController(w).Hijack()
				if err != nil {
					return
				}
				fmt.Fprint(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"+framing)
				_ = buf.Flush()
				_ = conn.Close()
			})
			_, _, f := sendPrompt(t, Config{HTTPClient: wiretest.Serve(t, h)})
			require.NotNil(t, f)
			require.Equal(t, artifact.FailureStreamValidation, f.FailureClass, f.ErrorMessage)
			require.Equal(t, ErrorTypeEOF, f.ErrorType, f.ErrorMessage)
			require.Contains(t, f.ErrorMessage, "connection dropped mid-stream")
		})
	}
}

// streamSummary is what a test compares of a streamResult.
type streamSummary struct {
	Events, Content, Reasoning int
	Terminal, TrailingDone     bool
	Trailing                   int64
	Usage                      [3]int64
	Finish                     []string
	Invalid                    string
	Capture                    string
}

func summarize(res *streamResult) streamSummary {
	return streamSummary{Events: res.events, Content: res.contentChunks, Reasoning: res.reasoningChunks,
		Terminal: res.terminal, TrailingDone: res.trailingDone, Trailing: res.trailing,
		Usage:  [3]int64{res.usage.Prompt.v, res.usage.Completion.v, res.usage.Total.v},
		Finish: res.finishReasons, Invalid: res.invalidType, Capture: res.capture.String()}
}

// readSummary reads a stream from r and summarizes it.
func readSummary(r io.Reader) streamSummary {
	var res streamResult
	readStream(newTrackedBody(r, nil), &res, ChatCompletions.NewDecoder())
	return summarize(&res)
}

// TestReadStreamAnyReadBoundary: what readStream learns of a stream is the
// same however the transport cuts it into reads: whole, a byte at a time,
// or in two reads split at every byte. The streams mix CRLF and CR line
// ends, a BOM, comments, multi-line data, escapes, a missing [DONE] and
// trailing bytes of a cut event.
func TestReadStreamAnyReadBoundary(t *testing.T) {
	reasoning := `{"choices":[{"delta":{"reasoning_content":"th\u00e9"}}]}`
	streams := []string{
		sseBOM + ": hi\r\n\r\n" + wireStream(append([]string{reasoning}, wireEvents...), ":", "\r\n"),
		wireStream(wireEvents, ": ", "\r") + "data: trailing",
		"event: message\ndata: {\"choices\":\ndata: [{\"delta\":{\"content\":\"a\\nb\"}}]}\n\n" + wireStream(wireEvents[:3], ": ", "\n"),
		wireStream(wireEvents[:3], ": ", "\r\n") + "data: [DONE]",
		"data: " + contentEvent(300)[:100] + "\r\n\r",
	}
	for _, s := range streams {
		want := readSummary(strings.NewReader(s))
		require.NotZero(t, want.Events, "%q", s)
		require.Empty(t, cmp.Diff(want, readSummary(iotest.OneByteReader(strings.NewReader(s)))), "%q one byte a read", s)
		for at := 1; at < len(s); at++ {
			split := io.MultiReader(strings.NewReader(s[:at]), strings.NewReader(s[at:])) // two reads
			require.Empty(t, cmp.Diff(want, readSummary(split)), "%q split at %d", s, at)
		}
	}
}

// TestReadStreamDecodedBytesNotAliased: the content kept of an event (the
// visible capture, finish reasons) is a copy: the reader's buffers, reused
// by the next events, do not change it.
func TestReadStreamDecodedBytesNotAliased(t *testing.T) {
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "data: {\"choices\":[{\"delta\":{\"content\":\"%c\"},\"finish_reason\":\"r%d\"}]}\n\n", 'a'+i%26, i%8)
	}
	b.WriteString("data: " + contentEvent(2*sseStartBuffer) + "\n\n")
	var res streamResult
	readStream(newTrackedBody(bufio.NewReaderSize(strings.NewReader(b.String()), 16), nil), &res, ChatCompletions.NewDecoder())
	want := ""
	for i := range 50 {
		want += string(rune('a' + i%26))
	}
	require.True(t, strings.HasPrefix(res.capture.String(), want+"xxx"), "capture %.80q", res.capture.String())
	require.Equal(t, []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"}, res.finishReasons)
}
