package anviltest

import (
	"testing"
)

// FuzzParseWindow holds ANVIL_TRACE_WINDOW's parser to its contract: it
// never panics, and a value it accepts is a window the trace package
// accepts, with an end after its start or none.
func FuzzParseWindow(f *testing.F) {
	for _, s := range []string{"10m..20m", "30s..", "0s..1h", "..", "20s..10s", "1h", "-1s..", "1e400s.."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		w, err := parseWindow(v)
		if err != nil {
			return
		}
		if w.Start < 0 || (w.End != 0 && w.End <= w.Start) {
			t.Fatalf("parseWindow(%q) = %+v, accepted", v, w)
		}
	})
}
