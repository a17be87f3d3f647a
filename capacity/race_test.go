//go:build race

package capacity

import "testing"

// raceEnabled: the test binary runs under the race detector, which makes
// the largest tests minutes each (.ci/run runs them without it).
const raceEnabled = true

// skipUnderRace skips a test whose cost is its size (what: the requests
// and prompts it sends) under the race detector, which slows it tenfold:
// go test ./... runs it without -race, and the concurrency it drives,
// Run's, is raced by the package's smaller Run tests.
func skipUnderRace(t *testing.T, what string) {
	t.Helper()
	t.Skip("skipped under the race detector (" + what + "); go test without -race runs it")
}
