//go:build !race

package conformance

import "testing"

// skipUnderRace does nothing without the race detector (see race_test.go).
func skipUnderRace(*testing.T, string) {}
