package anviltest

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/anvilbench/anvil/capacity"
)

// benchtimeFlag is the testing package's -benchtime flag as registered in a
// test binary.
const benchtimeFlag = "test.benchtime"

// defaultBenchtime is the testing package's default -benchtime.
const defaultBenchtime = time.Second

// benchtime is the parsed -benchtime value: either a request count (Nx) or
// a campaign duration.
type benchtime struct {
	n int           // > 0 for -benchtime Nx
	d time.Duration // > 0 for a time-based -benchtime
}

// String formats b the way the flag is written.
func (b benchtime) String() string {
	if b.n > 0 {
		return fmt.Sprintf("%dx", b.n)
	}
	return b.d.String()
}

// parseBenchtime parses a -benchtime value with the testing package's rules.
func parseBenchtime(s string) (benchtime, error) {
	if n, ok := strings.CutSuffix(s, "x"); ok {
		v, err := strconv.Atoi(n)
		if err != nil || v <= 0 {
			return benchtime{}, fmt.Errorf("anviltest: -benchtime %q: want Nx with N >= 1 or a positive duration", s)
		}
		return benchtime{n: v}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return benchtime{}, fmt.Errorf("anviltest: -benchtime %q: want Nx with N >= 1 or a positive duration", s)
	}
	return benchtime{d: d}, nil
}

// currentBenchtime reads -benchtime from the test binary's flags; the
// default applies when the flag is not registered (not in a test binary).
func currentBenchtime() (benchtime, error) {
	f := flag.Lookup(benchtimeFlag)
	if f == nil {
		return benchtime{d: defaultBenchtime}, nil
	}
	return parseBenchtime(f.Value.String())
}

// artifactsFlagSet reports whether the test binary runs with -artifacts.
func artifactsFlagSet() bool {
	f := flag.Lookup("test.artifacts")
	return f != nil && f.Value.String() == "true"
}

// planWorkload applies the iteration semantics to w:
//   - a Workload that sizes itself wins over -benchtime: Requests (or
//     Burst) set means exactly that many measured requests, Duration set a
//     campaign of that length;
//   - -benchtime Nx: exactly N measured requests;
//   - a time-based -benchtime D: a closed-loop campaign of length D (no new
//     request after D; in-flight requests finish).
func planWorkload(w capacity.Workload, bt benchtime) capacity.Workload {
	switch {
	case sizesItself(w):
	case bt.n > 0:
		w.Requests = bt.n
	default:
		w.Duration = bt.d
	}
	return w
}

// sizesItself reports whether w fixes its own size (Requests, Burst or
// Duration), which wins over -benchtime.
func sizesItself(w capacity.Workload) bool { return w.Requests > 0 || w.Burst > 0 || w.Duration > 0 }
