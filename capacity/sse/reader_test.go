package sse

import (
	"bufio"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"github.com/tmaxmax/go-sse"
)

// testMaxEvent is the size limit of the tests: capacity's MaxEventSize.
const testMaxEvent = 256 << 10

// framedEvent is one event as both readers give it, and the end.
type framedEvent struct {
	Type, Data string
}

type framing struct {
	Events []framedEvent
	End    string // "eof", "too long" or the read error's text
}

// frameWithGoSSE is the reference: go-sse's sse.Read.
func frameWithGoSSE(r io.Reader, maxEvent int) framing {
	var f framing
	f.End = "eof"
	for ev, err := range sse.Read(r, &sse.ReadConfig{MaxEventSize: maxEvent}) {
		if err != nil {
			f.End = endName(err)
			break
		}
		f.Events = append(f.Events, framedEvent{ev.Type, ev.Data})
	}
	return f
}

func frameWithReader(r io.Reader, maxEvent int) framing {
	var f framing
	sr := NewReader(r, maxEvent)
	for sr.Scan() {
		ev := sr.Event()
		f.Events = append(f.Events, framedEvent{string(ev.Type), string(ev.Data)})
	}
	f.End = "eof"
	if err := sr.Err(); err != nil {
		f.End = endName(err)
	}
	return f
}

func endName(err error) string {
	switch {
	case errors.Is(err, io.EOF):
		return "eof"
	case errors.Is(err, bufio.ErrTooLong):
		return "too long"
	}
	return err.Error()
}

var framingSeeds = []string{
	"data: x\n\n", "data: x\r\n\r\n", "data: x\r\r", "data: x\n", "data:x\ndata: y\n\n", "event: error\ndata: {}\n\n",
	": ping\n\n", "id: 7\n\n", "id: a\x00b\n\n", "retry: 10\n\n", "event: ping\n\n", "data\n\n", "data:\n\n", "\xEF\xBB\xBFdata: b\n\n",
	"\n\n\ndata: y\n\n\n", "datum: z\n\ndata : q\n\n", "data: [DONE]\n\n", "data: a\r\ndata: b\r\n\r\ndata: c\r\r\n",
	"toolongname: v\ndata: w\n\n", "event:x\nevent:y\ndata:z\n\n", "\r\n\xEF\xBB\xBFdata: bom after blank\n\n",
}

// TestReaderAgainstGoSSE: the seeds, read whole and a byte at a time.
func TestReaderAgainstGoSSE(t *testing.T) {
	for _, s := range framingSeeds {
		for _, maxEvent := range []int{testMaxEvent, 16} {
			want := frameWithGoSSE(strings.NewReader(s), maxEvent)
			for _, r := range []io.Reader{strings.NewReader(s), iotest.OneByteReader(strings.NewReader(s)), iotest.DataErrReader(strings.NewReader(s))} {
				require.Empty(t, cmp.Diff(want, frameWithReader(r, maxEvent)), "%q max %d", s, maxEvent)
			}
		}
	}
}

// TestReaderSizeLimit: an event of exactly maxEvent bytes (its blank
// lines before it included) is read, one byte more fails, as with go-sse.
func TestReaderSizeLimit(t *testing.T) {
	for _, tt := range []string{"data: %s\n\n", "\n\ndata: %s\r\n\r\n", "data: %s\r\r", ": c\ndata: %s\n\n"} {
		for pad := 0; pad < 80; pad++ {
			s := strings.Replace(tt, "%s", strings.Repeat("x", pad), 1) + "data: next\n\n"
			for _, maxEvent := range []int{32, 64} {
				want := frameWithGoSSE(strings.NewReader(s), maxEvent)
				require.Empty(t, cmp.Diff(want, frameWithReader(strings.NewReader(s), maxEvent)), "%q max %d", s, maxEvent)
			}
		}
	}
}

// FuzzReaderAgainstGoSSE: for any bytes, read whole, the events, their
// type and data and the end of the reading are go-sse's; read a byte at a
// time, they are the same.
func FuzzReaderAgainstGoSSE(f *testing.F) {
	for _, s := range framingSeeds {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, small bool) {
		maxEvent := testMaxEvent
		if small {
			maxEvent = 24
		}
		want := frameWithGoSSE(strings.NewReader(string(data)), maxEvent)
		got := frameWithReader(strings.NewReader(string(data)), maxEvent)
		require.Empty(t, cmp.Diff(want, got), "%q", data)
		// go-sse's own size limit depends on how the reads cut the input
		// at a "\r\n"; the Reader's does not (TestReaderReadBoundaries).
		one := frameWithReader(iotest.OneByteReader(strings.NewReader(string(data))), maxEvent)
		require.Empty(t, cmp.Diff(got, one), "one byte at a time: %q", data)
	})
}

// TestReaderReadBoundaries: the framing, the size limit included, is
// a function of the bytes alone, not of how the reads cut them: split at
// every byte, or one byte a read, the events and the end are those of the
// whole input. (A "\r\n" ending an event whose '\n' comes in the next read
// belongs to that event, not to the next one's size.)
func TestReaderReadBoundaries(t *testing.T) {
	var inputs []string
	for _, s := range framingSeeds {
		inputs = append(inputs, s, s+s)
	}
	for pad := 0; pad < 70; pad++ {
		x := strings.Repeat("x", pad)
		inputs = append(inputs, "data: a\r\n\r\ndata: "+x+"\r\n\r\ndata: next\n\n", "data: a\r\r\ndata: "+x+"\r\n\r\n",
			": c\r\n\r\ndata: "+x+"\r\n\r\n")
	}
	for _, s := range inputs {
		for _, maxEvent := range []int{testMaxEvent, 16, 32, 64} {
			want := frameWithReader(strings.NewReader(s), maxEvent)
			require.Empty(t, cmp.Diff(want, frameWithReader(iotest.OneByteReader(strings.NewReader(s)), maxEvent)), "%q max %d, one byte a read", s, maxEvent)
			for at := 1; at < len(s); at++ {
				split := io.MultiReader(strings.NewReader(s[:at]), strings.NewReader(s[at:])) // two reads
				require.Empty(t, cmp.Diff(want, frameWithReader(split, maxEvent)), "%q max %d, split at %d", s, maxEvent, at)
			}
		}
	}
}

// trailingOf is the reference of Trailing, a byte at a time: the bytes of
// the non-comment lines after the last blank line (a line end right after
// a line end, "\r\n" being one), their line ends included (of "\r\n", the
// '\r').
func trailingOf(s string) (n int, head string) {
	lineStart, comment, prevCR := true, false, false
	var kept []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\n' && prevCR {
			prevCR = false
			continue
		}
		prevCR = false
		if c == '\n' || c == '\r' {
			if lineStart {
				kept = kept[:0]
			} else if !comment {
				kept = append(kept, c)
			}
			lineStart, comment, prevCR = true, false, c == '\r'
			continue
		}
		if lineStart {
			lineStart, comment = false, c == ':'
		}
		if !comment {
			kept = append(kept, c)
		}
	}
	return len(kept), string(kept[:min(len(kept), trailingHead)])
}

// FuzzTrailing: at the end of any input, read whole or a byte at a time,
// Trailing counts what trailingOf counts.
func FuzzTrailing(f *testing.F) {
	for _, s := range framingSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte("data: a\n\ndata: [DONE]"))
	f.Add([]byte("data: a\n\ndata: {\"cut\n"))
	f.Add([]byte("data: a\r\n\r\n: c\r\ndata: b"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, head := trailingOf(string(data))
		for _, r := range []io.Reader{strings.NewReader(string(data)), iotest.OneByteReader(strings.NewReader(string(data)))} {
			sr := NewReader(r, testMaxEvent)
			for sr.Scan() {
			}
			if sr.Err() != nil {
				return // too long: no trailing bytes to speak of
			}
			gotN, gotHead := sr.Trailing()
			require.Equal(t, int64(n), gotN, "%q", data)
			require.Equal(t, head, string(gotHead), "%q", data)
		}
	})
}

// TestReaderGrowsForFastStreams: a stream whose reads fill the buffer is
// read in ever larger reads, up to maxReadBuffer; one whose reads do not
// keeps the first buffer.
func TestReaderGrowsForFastStreams(t *testing.T) {
	body := strings.Repeat("data: {\"x\":1}\n\n", 40000)
	var sizes []int
	sr := NewReader(readSizes{strings.NewReader(body), &sizes}, testMaxEvent)
	n := 0
	for sr.Scan() {
		n++
	}
	require.NoError(t, sr.Err())
	require.Equal(t, 40000, n)
	require.Equal(t, startBuffer, sizes[0])
	require.Equal(t, maxReadBuffer, slices.Max(sizes))

	sizes = sizes[:0]
	sr = NewReader(readSizes{iotest.HalfReader(strings.NewReader(body[:100000])), &sizes}, testMaxEvent)
	for sr.Scan() {
	}
	require.NoError(t, sr.Err())
	require.Equal(t, startBuffer, slices.Max(sizes), "reads that never fill the room do not grow it")
}

// readSizes records the size of every read's buffer.
type readSizes struct {
	r     io.Reader
	sizes *[]int
}

func (r readSizes) Read(p []byte) (int, error) {
	*r.sizes = append(*r.sizes, len(p))
	return r.r.Read(p)
}

// TestReaderReset: a Reader reset onto each input in turn frames each as a
// new Reader does, whatever the one before it left (an event cut short, a
// "\r" whose "\n" never came, an error).
func TestReaderReset(t *testing.T) {
	inputs := append([]string{"data: a\r", "data: cut", "data: " + strings.Repeat("x", 100) + "\n\n"}, framingSeeds...)
	sr := NewReader(strings.NewReader(""), 64)
	for i, s := range inputs {
		for _, next := range []string{inputs[(i+1)%len(inputs)], s} {
			sr.Reset(strings.NewReader(next))
			var got framing
			for sr.Scan() {
				ev := sr.Event()
				got.Events = append(got.Events, framedEvent{string(ev.Type), string(ev.Data)})
			}
			got.End = "eof"
			if err := sr.Err(); err != nil {
				got.End = endName(err)
			}
			require.Empty(t, cmp.Diff(frameWithReader(strings.NewReader(next), 64), got), "%q after %q", next, s)
		}
	}
}

// frameSkipping reads r as a caller of the fast path does: where Pending
// begins with a common event ("data: " + one line + a blank line) it
// takes that event's data itself and consumes it with SkipDataEvent;
// elsewhere, and when SkipDataEvent refuses, it scans. The end adds the
// trailing bytes (Trailing).
func frameSkipping(r io.Reader, maxEvent int) (framing, int64, string) {
	var f framing
	sr := NewReader(r, maxEvent)
	for {
		if rest := sr.Pending(); len(rest) > 0 {
			if i := strings.IndexByte(string(rest), '\n'); i >= 0 && i+1 < len(rest) && rest[i+1] == '\n' &&
				strings.HasPrefix(string(rest), "data: ") && sr.SkipDataEvent(i+2) {
				f.Events = append(f.Events, framedEvent{"", string(rest[len("data: "):i])})
				if ev := sr.Event(); ev.Data != nil || ev.Type != nil {
					panic("an event after SkipDataEvent")
				}
				continue
			}
		}
		if !sr.Scan() {
			break
		}
		ev := sr.Event()
		f.Events = append(f.Events, framedEvent{string(ev.Type), string(ev.Data)})
	}
	f.End = "eof"
	if err := sr.Err(); err != nil {
		f.End = endName(err)
	}
	n, head := sr.Trailing()
	return f, n, string(head)
}

// FuzzSkipDataEvent: a reader whose common events are consumed with
// SkipDataEvent where Pending offers them gives the events, the end and
// the trailing bytes of one that scans every event, whole or a byte a
// read, and refuses to skip what is not a common event.
func FuzzSkipDataEvent(f *testing.F) {
	for _, s := range framingSeeds {
		f.Add([]byte(s), false)
	}
	f.Add([]byte("data: a\n\ndata: b\n\ndata: "+strings.Repeat("c", 30)+"\n\ndata: d\n\n"), true)
	f.Add([]byte("data: a\n\ndata: b\r\n\r\ndata: c\n\n: x\ndata: d\n\ndata: e"), false)
	f.Fuzz(func(t *testing.T, data []byte, small bool) {
		maxEvent := testMaxEvent
		if small {
			maxEvent = 24
		}
		scan := func(r io.Reader) (framing, int64, string) {
			sr := NewReader(r, maxEvent)
			var f framing
			for sr.Scan() {
				ev := sr.Event()
				f.Events = append(f.Events, framedEvent{string(ev.Type), string(ev.Data)})
			}
			f.End = "eof"
			if err := sr.Err(); err != nil {
				f.End = endName(err)
			}
			n, head := sr.Trailing()
			return f, n, string(head)
		}
		wf, wn, wh := scan(strings.NewReader(string(data)))
		for _, r := range []io.Reader{strings.NewReader(string(data)), iotest.OneByteReader(strings.NewReader(string(data)))} {
			gf, gn, gh := frameSkipping(r, maxEvent)
			require.Empty(t, cmp.Diff(wf, gf), "%q", data)
			if wf.End == "eof" { // Trailing is the bytes after the last event at the end of the input
				require.Equal(t, wn, gn, "trailing bytes of %q", data)
				require.Equal(t, wh, gh, "trailing head of %q", data)
			}
		}
	})
}

// TestSkipDataEventRefuses: SkipDataEvent consumes nothing unless its
// bytes are a whole common event within the size limit.
func TestSkipDataEventRefuses(t *testing.T) {
	for _, tc := range []struct {
		stream string
		n, max int
		data   string // the second event's, as Scan then reads it; "" when too long
	}{
		{"data: a\n\ndata: b\n\n", 8, testMaxEvent, "b"},  // one byte short
		{"data: a\n\ndata: b\n\n", 10, testMaxEvent, "b"}, // one byte over
		{"data: a\n\ndata:b\n\n", 8, testMaxEvent, "b"},   // not "data: "
		{"data: a\n\ndata: b\n\n", 40, testMaxEvent, "b"}, // past the buffer
		{"data: a\n\ndata: bc\n\n", 10, 9, ""},            // over the size limit
	} {
		sr := NewReader(strings.NewReader(tc.stream), tc.max)
		require.True(t, sr.Scan())
		rest := sr.Pending()
		require.NotNil(t, rest, "%q", tc.stream)
		require.False(t, sr.SkipDataEvent(tc.n), "%q skipping %d", tc.stream, tc.n)
		require.Equal(t, string(rest), string(sr.Pending()), "nothing consumed")
		if tc.data == "" { // Scan refuses it too
			require.False(t, sr.Scan())
			require.ErrorIs(t, sr.Err(), bufio.ErrTooLong)
			continue
		}
		require.True(t, sr.Scan())
		require.Equal(t, tc.data, string(sr.Event().Data))
	}
}
