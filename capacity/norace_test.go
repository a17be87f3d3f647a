//go:build !race

package capacity

import "testing"

// raceEnabled reports whether the test binary runs under the race detector.
const raceEnabled = false

// skipUnderRace does nothing without the race detector (see race_test.go).
func skipUnderRace(*testing.T, string) {}
