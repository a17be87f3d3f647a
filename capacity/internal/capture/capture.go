// Package capture reads the repository's real captures of serving engines
// (testdata/transcripts, described in its README.md) for the tests of the
// decoders and the client: the events of a captured stream, the status and
// headers beside it, a table test over every capture of a kind and a
// benchmark over one capture's events. Only tests import it.
package capture

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/sse"
)

// Dir returns the folder of the captures, given the path of the module
// root from the test's package directory ("../../.." from
// capacity/internal/x).
func Dir(root string) string { return filepath.Join(root, "testdata", "transcripts") }

// Event is one event of a captured stream.
type Event struct {
	// Index counts the stream's events from 0.
	Index int
	// Name is the event's type ("" without an event line); Data its data.
	Name, Data []byte
}

// maxEvent bounds an event of a capture.
const maxEvent = 1 << 20

// Events returns the events of the SSE capture at path, read as the
// client reads a stream (package sse).
func Events(path string) ([]Event, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Event
	r := sse.NewReader(bytes.NewReader(b), maxEvent)
	for r.Scan() {
		ev := r.Event()
		out = append(out, Event{Index: len(out), Name: bytes.Clone(ev.Type), Data: bytes.Clone(ev.Data)})
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// Response returns the status code and headers of the capture whose body
// is at path, from the .headers file beside it (curl -D).
func Response(path string) (int, http.Header, error) {
	name := strings.TrimSuffix(path, filepath.Ext(path)) + ".headers"
	b, err := os.ReadFile(name)
	if err != nil {
		return 0, nil, err
	}
	r := textproto.NewReader(bufio.NewReader(bytes.NewReader(b)))
	line, err := r.ReadLine()
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", name, err)
	}
	_, rest, _ := strings.Cut(line, " ")
	code, _, _ := strings.Cut(rest, " ")
	status, err := strconv.Atoi(code)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: status line %q: %w", name, line, err)
	}
	h, err := r.ReadMIMEHeader()
	if err != nil && len(h) == 0 {
		return 0, nil, fmt.Errorf("%s: %w", name, err)
	}
	return status, http.Header(h), nil
}

// Glob returns the captures under dir matching the patterns, sorted and
// without duplicates.
func Glob(dir string, patterns ...string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, p := range patterns {
		m, err := filepath.Glob(filepath.Join(dir, p))
		if err != nil {
			return nil, err
		}
		for _, f := range m {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no capture under %s matches %v", dir, patterns)
	}
	slices.Sort(out)
	return out, nil
}

// StreamEvents returns the events of every SSE capture under dir matching
// the patterns, in file order, failing tb on an error: the seeds of a
// decoder's fuzz target.
func StreamEvents(tb testing.TB, dir string, patterns ...string) []Event {
	tb.Helper()
	files, err := Glob(dir, patterns...)
	require.NoError(tb, err)
	var out []Event
	for _, f := range files {
		evs, err := Events(f)
		require.NoError(tb, err)
		out = append(out, evs...)
	}
	return out
}

// Table runs, for every capture under dir matching the patterns, a
// subtest that folds it with fold and compares the result with want's
// entry for its file name (go-cmp, with opts). A capture without an entry,
// or an entry without a capture, fails the test: every capture is
// checked, and only captures that exist.
func Table[S any](t *testing.T, dir string, want map[string]S, fold func(t *testing.T, file string) S, patterns []string, opts ...cmp.Option) {
	t.Helper()
	files, err := Glob(dir, patterns...)
	require.NoError(t, err)
	names := map[string]bool{}
	for _, f := range files {
		name := filepath.Base(f)
		names[name] = true
		t.Run(name, func(t *testing.T) {
			got := fold(t, f)
			w, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for this capture; it gives %#v", got)
			}
			if diff := cmp.Diff(w, got, opts...); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	for name := range want {
		if !names[name] {
			t.Errorf("expectation for %s, which no capture matching %v is", name, patterns)
		}
	}
}

// DecodeAll runs decode on each event of the SSE capture at path once, in
// order, the terminal [DONE] left out (the client reads it before any
// decoder), and fails tb at the first error.
func DecodeAll(tb testing.TB, path string, decode func(name, data []byte) error) {
	tb.Helper()
	evs, err := Events(path)
	require.NoError(tb, err)
	for _, ev := range evs {
		if string(bytes.TrimSpace(ev.Data)) == "[DONE]" {
			continue
		}
		require.NoError(tb, decode(ev.Name, ev.Data), "%s: event %d", path, ev.Index)
	}
}

// A Repeater is a decoder of events that decodes a repeated shape
// without a scan (package jsonpick's Decoder.Repeat).
type Repeater interface {
	Repeats() int
	Fallbacks() int
}

// Repeats runs decode, d's, on each event of the capture named file in
// dir once (DecodeAll) and returns how many d decoded as repeats; it fails
// tb when one went to encoding/json.
func Repeats(tb testing.TB, dir, file string, d Repeater, decode func(name, data []byte) error) int {
	tb.Helper()
	DecodeAll(tb, filepath.Join(dir, file), decode)
	require.Zero(tb, d.Fallbacks(), "%s went to encoding/json", file)
	return d.Repeats()
}

// Bench runs decode on the events of the SSE capture at path, one event
// per iteration, as a benchmark of the decoder's cost per event; the
// terminal [DONE] is left out. Bytes per operation are the mean event's.
func Bench(b *testing.B, path string, decode func(name, data []byte) error) {
	evs, err := Events(path)
	require.NoError(b, err)
	evs = slices.DeleteFunc(evs, func(e Event) bool { return string(bytes.TrimSpace(e.Data)) == "[DONE]" })
	size := 0
	for _, ev := range evs {
		size += len(ev.Data)
	}
	b.SetBytes(int64(size / len(evs)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ev := &evs[i%len(evs)]
		if err := decode(ev.Name, ev.Data); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
