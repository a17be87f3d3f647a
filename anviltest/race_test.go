//go:build race

package anviltest

import "testing"

// skipUnderRace skips, under the race detector, a test whose cost is its
// size (what: the requests and prompts it sends), which the detector
// makes tenfold, or whose work is a binary of its own: go test ./...
// runs it without -race, and the concurrency it drives, capacity.Run's,
// is raced by the package's smaller runs.
func skipUnderRace(t *testing.T, what string) {
	t.Helper()
	t.Skip("skipped under the race detector (" + what + "); go test without -race runs it")
}
