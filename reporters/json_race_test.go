//go:build race

package reporters

// raceEnabled: the race detector slows the largest-artifact test tenfold;
// it runs without -race.
const raceEnabled = true
