//go:build race

package conformance

import "testing"

// skipUnderRace skips a test whose cost is its size (what: the requests
// and prompts it sends) under the race detector, which slows it tenfold:
// go test ./... runs it without -race, and the concurrency it drives,
// the package's, is raced by its smaller tests.
func skipUnderRace(t *testing.T, what string) {
	t.Helper()
	t.Skip("skipped under the race detector (" + what + "); go test without -race runs it")
}
