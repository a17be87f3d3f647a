package client

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/itl"
	"github.com/anvilbench/anvil/capacity/sse"
)

// slowDecoder hides a Decoder's fast path (contentRepeater): readStream
// then decodes every event with Decode.
type slowDecoder struct{ Decoder }

// streamSeen is what a reading of a stream recorded, for comparing two
// readings: the stamps as offsets from the reading's start (synctest's
// clock, which the reads advance), the chunk gaps' summary.
type streamSeen struct {
	FirstEvent, FirstOutput, FirstContent, TerminalAt time.Duration
	Terminal                                          bool
	Events, Content, Reasoning                        int
	Usage                                             string
	Finish                                            []string
	Capture                                           string
	Truncated                                         bool
	Invalid, InvalidType                              string
	ReadErr                                           string
	Trailing                                          int64
	TrailingDone                                      bool
	Gaps                                              itl.Summary
	GapsErr                                           string
	UsageMissed                                       bool
	LastCompletion                                    int64
}

// stepReader returns its bytes in reads of at most step bytes, each a
// millisecond after the last (of synctest's clock), so that every read's
// stamp is its own.
type stepReader struct {
	b    []byte
	step int
}

func (r *stepReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	time.Sleep(time.Millisecond)
	n := copy(p[:min(len(p), r.step)], r.b)
	r.b = r.b[n:]
	return n, nil
}

// readSeen reads stream in reads of step bytes with dec (one decoder and
// one sse reader for two streams in a row, as a worker reads them: the
// second reading's result is returned), inside a synctest bubble.
func readSeen(t *testing.T, stream []byte, step int, dec Decoder) streamSeen {
	var seen streamSeen
	synctest.Test(t, func(t *testing.T) {
		var reader *sse.Reader
		for range 2 {
			origin := time.Now()
			var gaps itl.Stream
			res := &streamResult{gaps: &gaps, origin: origin, reader: &reader}
			dec.Reset()
			readStream(newTrackedBody(&stepReader{b: stream, step: step}, nil), res, dec)
			since := func(at time.Time) time.Duration {
				if at.IsZero() {
					return -1
				}
				return at.Sub(origin)
			}
			seen = streamSeen{FirstEvent: since(res.firstEvent), FirstOutput: since(res.firstOutput),
				FirstContent: since(res.firstContent), TerminalAt: since(res.terminalAt), Terminal: res.terminal,
				Events: res.events, Content: res.contentChunks, Reasoning: res.reasoningChunks,
				Usage: usageText(res.usage), Finish: res.finishReasons, Capture: res.capture.String(),
				Truncated: res.capture.Truncated(), Invalid: res.invalid, InvalidType: res.invalidType,
				Trailing: res.trailing, TrailingDone: res.trailingDone, UsageMissed: res.usageMissed,
				LastCompletion: res.lastCompletion}
			if res.readErr != nil {
				seen.ReadErr = res.readErr.Error()
			}
			s, err := gaps.Summary(itl.DefaultStallRule(), nil)
			seen.Gaps = s
			if err != nil {
				seen.GapsErr = err.Error()
			}
		}
	})
	return seen
}

// usageText prints a Usage for a comparison.
func usageText(u Usage) string {
	return fmt.Sprintf("%t %+v %+v %+v %+v", u.Present, u.Prompt, u.Completion, u.Total, u.Cached)
}

// requireSameReading checks that readStream records the same of stream
// with the chat decoder's fast path as without it, in reads of step
// bytes.
func requireSameReading(t *testing.T, stream []byte, step int) {
	fast := readSeen(t, stream, step, ChatCompletions.NewDecoder())
	slow := readSeen(t, stream, step, slowDecoder{ChatCompletions.NewDecoder()})
	if diff := cmp.Diff(slow, fast); diff != "" {
		t.Fatalf("reads of %d bytes: fast path differs (-slow +fast):\n%s\nstream: %q", step, diff, stream)
	}
}

// fastPathStreams are streams whose events the fast path takes, and
// streams that break it in each way it checks.
func fastPathStreams(t testing.TB) [][]byte {
	ev := func(data string) string { return "data: " + data + "\n\n" }
	content := func(text string) string {
		return ev(`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"` + text + `"},"finish_reason":null}]}`)
	}
	streams := []string{
		vllmStream(40),
		content("a") + content("") + content("b") + content(`q\"uote`) + content("c") + content(`back\\slash`) + content("d") + ev(usageJSON) + ev("[DONE]"),
		content("a") + content("b") + "data:" + content("c")[5:] + content("d") + ": comment\n" + content("e") + "\n" + content("f") + ev("[DONE]"),
		content("a") + content("b") + "data: " + content("c")[6:len(content("c"))-2] + "\r\n\r\n" + content("d") + content("e") + ev("[DONE]"),
		content("a") + content("b") + "event: error\n" + content("c") + content("d") + ev("[DONE]"),
		content("a") + content("b") + "id: 7\n" + content("c") + content("d") + "retry: 1\n" + content("e") + ev("[DONE]"),
		content("a") + content("b") + strings.TrimSuffix(content("c"), "\n\n") + "\ndata: more\n\n" + content("d") + ev("[DONE]"),
		content("a") + content("b") + strings.TrimSuffix(content("c"), "\n\n") + " \n\n" + content("d") + ev("[DONE]"),
		content("a") + content("b") + ev(`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}`) + content("c") + ev("[DONE]"),
		content("a") + ev(`{"id":"c","object":"error","choices":[{"index":0,"delta":{"content":"x"}}],"message":"m"}`) + ev(`{"id":"c","object":"error","choices":[{"index":0,"delta":{"content":"y"}}],"message":"m"}`),
		content("a") + ev(`{"id":"c","choices":[{"index":0,"delta":{"content":"x"}}],"usage":{"completion_tokens":1}}`) + ev(`{"id":"c","choices":[{"index":0,"delta":{"content":"y"}}],"usage":{"completion_tokens":2}}`) + content("b") + ev("[DONE]"),
		content("a") + ev(`{"id":"c","choices":[{"index":0,"delta":{"content":"x","reasoning_content":"r"}}]}`) + ev(`{"id":"c","choices":[{"index":0,"delta":{"content":"y","reasoning_content":"r"}}]}`) + ev("[DONE]"),
		content("a") + content("b") + content("c"),
		content("a") + content("b") + content("c")[:20],
		content("a") + content("b") + strings.TrimSuffix(content("c"), "\n"),
	}
	files, err := filepath.Glob(filepath.Join(transcripts, "*.sse"))
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		streams = append(streams, string(b))
	}
	out := make([][]byte, len(streams))
	for i, s := range streams {
		out[i] = []byte(s)
	}
	return out
}

// TestReadStreamFastPathSame: the fast path of the common event records
// what decoding every event records, for the streams that take it, those
// that break it in each of its checks, and the real captures, whatever
// the sizes of the reads.
func TestReadStreamFastPathSame(t *testing.T) {
	for i, stream := range fastPathStreams(t) {
		for _, step := range []int{1, 7, 64, 300, 1 << 20} {
			requireSameReading(t, stream, step)
		}
		if i == 0 { // the fast path does take vLLM's stream
			var d chatDecoder
			first := bytes.Index(stream, []byte("\n\n")) + 2
			_, err := d.dec.Decode(stream[len(sseDataPrefix) : first-2])
			require.NoError(t, err)
			n, text, ok := d.repeatedContent(stream[first:])
			require.True(t, ok)
			require.Equal(t, first, n)
			require.Equal(t, " tok", string(text))
		}
	}
}

// FuzzReadStreamFastPath: whatever the stream, the fast path records what
// decoding every event records.
func FuzzReadStreamFastPath(f *testing.F) {
	for _, s := range fastPathStreams(f) {
		f.Add(s, uint16(64))
	}
	f.Fuzz(func(t *testing.T, stream []byte, step uint16) {
		if len(stream) > 1<<16 {
			return
		}
		requireSameReading(t, stream, int(step)+1)
	})
}
