package anviltest

import "testing"

// TestConformance runs the conformance suite against ANVIL_BASE_URL (the
// embedded fake server when it is unset):
//
//	ANVIL_BASE_URL=http://localhost:8000/v1 go test -run Conformance -v ./anviltest
//
// Against the embedded fake every check passes.
func TestConformance(t *testing.T) {
	Conformance(t)
}
