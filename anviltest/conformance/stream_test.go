package conformance

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/sse"
)

// seenOf reads body as the suite reads a 200 stream.
func seenOf(body string) *streamSeen {
	s := &streamSeen{status: 200}
	s.read(sse.NewReader(strings.NewReader(body), capacity.MaxEventSize))
	return s
}

// TestStreamRead: what the suite records of a stream's events, through the
// engine's framer (CRLF and CR line ends, comments, event types, data after
// [DONE], data that is not JSON, a last event without its blank line).
func TestStreamRead(t *testing.T) {
	chunk := `{"object":"chat.completion.chunk","choices":[{"delta":{"content":"Hi"},"finish_reason":"stop"}]}`
	usage := `{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`
	for _, tc := range []struct {
		name                             string
		body                             string
		events, afterDone, badJSON, chnk int
		done                             bool
		names                            []string
	}{
		{"lf", "data: " + chunk + "\n\ndata: " + usage + "\n\ndata: [DONE]\n\n", 3, 0, 0, 1, true, nil},
		{"crlf and cr", "data: " + chunk + "\r\n\r\ndata: " + usage + "\r\rdata: [DONE]\r\n\r\n", 3, 0, 0, 1, true, nil},
		{"comments and types", ": keep-alive\n\nevent: delta\ndata: " + chunk + "\n\ndata: [DONE]\n\n", 2, 0, 0, 1, true, []string{"delta"}},
		{"after [DONE]", "data: [DONE]\n\ndata: " + chunk + "\n\n", 2, 1, 0, 0, true, nil},
		{"not JSON", "data: {oops\n\ndata: [DONE]\n\n", 2, 0, 1, 0, true, nil},
		{"[DONE] without its blank line", "data: " + chunk + "\n\ndata: [DONE]\n", 1, 0, 0, 1, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := seenOf(tc.body)
			require.NoError(t, s.readErr)
			require.Equal(t, tc.events, s.events, "events")
			require.Equal(t, tc.afterDone, s.afterDone, "after [DONE]")
			require.Len(t, s.badJSON, tc.badJSON)
			require.Equal(t, tc.chnk, s.contentChunks, "content chunks")
			require.Equal(t, tc.done, s.done, "[DONE]")
			require.Equal(t, tc.names, s.names)
		})
	}
}

// TestStreamReadBounds: an event over capacity.MaxEventSize and more
// events than any request of the suite asks for end the reading with an
// error saying which.
func TestStreamReadBounds(t *testing.T) {
	s := seenOf("data: " + strings.Repeat("x", capacity.MaxEventSize) + "\n\n")
	require.ErrorContains(t, s.readErr, "larger than capacity.MaxEventSize")
	s = seenOf(strings.Repeat("data: {}\n\n", maxEvents+1))
	require.ErrorContains(t, s.readErr, "more than 8192 events")
	require.Equal(t, maxEvents, s.events)
}

// FuzzSafeText: the output is valid UTF-8 with no control character and no
// bidirectional override, whatever the input.
func FuzzSafeText(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[2J", "\xff\xfe", "\u202e\u2066", "a\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := safeText(in, maxNoteRunes)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 %q", out)
		}
		for _, r := range out {
			if unsafeRune(r) {
				t.Fatalf("unsafe rune %U in %q", r, out)
			}
		}
		if n := utf8.RuneCountInString(out); n > 4*maxNoteRunes+40 {
			t.Fatalf("%d characters", n)
		}
	})
}

// TestStreamSummaryCountsAsTheVerdict: the log's summary counts the JSON
// data events as stream_framing's verdict does, [DONE] apart (it said
// "116 data events" beside the verdict's "115 JSON data events").
func TestStreamSummaryCountsAsTheVerdict(t *testing.T) {
	chunk := `{"object":"chat.completion.chunk","choices":[{"delta":{"content":"Hi"},"finish_reason":"stop"}]}`
	s := seenOf("data: " + chunk + "\n\ndata: " + chunk + "\n\ndata: [DONE]\n\n")
	require.Contains(t, s.summary(), ", 2 JSON data events, terminal true,")
	require.Equal(t, 2, s.jsonEvents(), "the verdict's count (checkStreamFraming)")
}
