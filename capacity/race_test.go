//go:build race

package capacity

// raceEnabled: the race detector slows the largest-artifact test tenfold;
// it runs without -race.
const raceEnabled = true
