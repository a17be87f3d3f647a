//go:build !race

package capacity

// raceEnabled reports whether the test binary runs under the race detector.
const raceEnabled = false
