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
