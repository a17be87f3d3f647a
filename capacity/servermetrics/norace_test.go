//go:build !race

package servermetrics

import "testing"

// skipUnderRace does nothing without the race detector (see race_test.go).
func skipUnderRace(*testing.T, string) {}
