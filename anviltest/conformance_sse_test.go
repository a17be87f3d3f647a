package anviltest

import (
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

func readAll(t *testing.T, s string) ([]sseEvent, *sseReader, error) {
	t.Helper()
	r := newSSEReader(strings.NewReader(s))
	var evs []sseEvent
	for {
		ev, err := r.next()
		if errors.Is(err, io.EOF) {
			return evs, r, nil
		}
		if err != nil {
			return evs, r, err
		}
		evs = append(evs, ev)
	}
}

func TestSSEReader(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []sseEvent
		comments int
	}{
		{"lf", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []sseEvent{{Data: `{"a":1}`}, {Data: "[DONE]"}}, 0},
		{"crlf and cr", "data: x\r\n\r\ndata:y\r\rdata: z\n\n", []sseEvent{{Data: "x"}, {Data: "y"}, {Data: "z"}}, 0},
		{"multi-line data", "data: {\"a\":\ndata: 1}\n\n", []sseEvent{{Data: "{\"a\":\n1}"}}, 0},
		{"comments, names, ids", ": keep-alive\nevent: delta\nid: 7\ndata: x\n\n", []sseEvent{{Name: "delta", Data: "x"}}, 1},
		{"no data, no event", "event: ping\n\nid: 3\n\n", nil, 0},
		{"unterminated last event", "data: x\n\ndata: y", []sseEvent{{Data: "x"}, {Data: "y"}}, 0},
		{"one space only", "data:  two\n\n", []sseEvent{{Data: " two"}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, r, err := readAll(t, tc.in)
			require.NoError(t, err)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			require.Equal(t, tc.comments, r.comments)
		})
	}
}

func TestSSEReaderBounds(t *testing.T) {
	_, _, err := readAll(t, "data: "+strings.Repeat("x", maxSSELine+1)+"\n\n")
	require.ErrorIs(t, err, errSSELimit)
	_, _, err = readAll(t, strings.Repeat("data: x\n\n", maxSSEEvents+1))
	require.ErrorIs(t, err, errSSELimit)
}

// FuzzSSEReader: any byte stream reads to an end without panicking, within
// the bounds, and an event's data never holds a line terminator other than
// the "\n" that joins data lines.
func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{"data: x\n\n", "data: a\r\ndata: b\r\n\r\n", ": c\nevent: e\ndata\n\n", "data:[DONE]", "\r\r\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		evs, _, err := readAll(t, in)
		if err != nil && !errors.Is(err, errSSELimit) {
			t.Fatalf("unexpected error %v", err)
		}
		for _, ev := range evs {
			if strings.ContainsRune(ev.Data, '\r') || strings.ContainsRune(ev.Name, '\n') || strings.ContainsRune(ev.Name, '\r') {
				t.Fatalf("a line terminator inside %q", ev)
			}
			if len(ev.Data) > maxSSELine {
				t.Fatalf("event of %d bytes", len(ev.Data))
			}
		}
	})
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
