//go:build unix

package perfbench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMain serves instead of testing when the benchmarks re-execute the
// test binary as their separate-process server.
func TestMain(m *testing.M) {
	if spec := os.Getenv(ServerEnv); spec != "" {
		raiseFileLimit()
		if err := Serve(context.Background(), spec, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// raiseFileLimit raises the soft open-file limit to the hard limit, for a
// server holding thousands of connections.
func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

// startServer starts the server of s in a child process and returns its
// base URL; the child ends with the benchmark.
func startServer(tb testing.TB, s Schedule) string {
	tb.Helper()
	spec, err := json.Marshal(s)
	require.NoError(tb, err)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), ServerEnv+"="+string(spec))
	stdin, err := cmd.StdinPipe()
	require.NoError(tb, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(tb, err)
	// What the server writes to stderr is logged when it ends, never
	// printed between a result's name and its numbers.
	var serverErr bytes.Buffer
	cmd.Stderr = &serverErr
	require.NoError(tb, cmd.Start())
	tb.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if serverErr.Len() > 0 {
			tb.Logf("the server process wrote to stderr:\n%s", serverErr.String())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(tb, err, "the server process did not start")
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	require.True(tb, ok, "unexpected first line %q", line)
	go io.Copy(io.Discard, stdout)
	return addr + "/v1"
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	require.NoError(tb, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// nearestRank is the nearest-rank p-th percentile (0 < p <= 100) of sorted,
// which must not be empty.
func nearestRank(sorted []float64, p float64) float64 {
	return sorted[max(0, int(math.Ceil(p*float64(len(sorted))/100))-1)]
}

// median is the median of xs (the mean of the middle two of an even
// count); xs is sorted in place. 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// loadAverage is the machine's one-minute load average, logged beside the
// results (the machine is shared: a figure means little without it); "?"
// where /proc/loadavg cannot be read.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
