//go:build !race

package reporters

// raceEnabled reports whether the test binary runs under the race detector.
const raceEnabled = false
