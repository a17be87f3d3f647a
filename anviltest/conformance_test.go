package anviltest

import (
	"flag"
	"strings"
	"testing"
)

// TestConformance runs the conformance suite against ANVIL_BASE_URL (the
// embedded fake server when it is unset):
//
//	ANVIL_BASE_URL=http://localhost:8000/v1 go test -run Conformance -v ./anviltest
//
// Against the embedded fake every check passes. The environment is read
// only when -run names the suite (as above): a plain go test ./... runs it
// against the embedded fake as one of this package's tests, the same
// whatever ANVIL_* variables the shell holds.
func TestConformance(t *testing.T) {
	if !runSelects("Conformance") {
		Conformance(t, WithEnvironment(nil), WithOutDir(t.TempDir()))
		return
	}
	Conformance(t)
}

// runSelects reports whether the test binary's -run pattern names word.
func runSelects(word string) bool {
	f := flag.Lookup("test.run")
	return f != nil && strings.Contains(f.Value.String(), word)
}
