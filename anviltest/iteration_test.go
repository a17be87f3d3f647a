package anviltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// child runs this test binary's BenchmarkSeam in mode with the extra test
// flags, in dir, with artifacts going to ANVIL_OUT=out unless out is empty.
func child(t *testing.T, mode, dir, out string, flags ...string) (string, error) {
	t.Helper()
	return childEnv(t, mode, dir, out, nil, flags...)
}

// childEnv is child with extra environment variables, which win over the
// defaults.
func childEnv(t *testing.T, mode, dir, out string, extra []string, flags ...string) (string, error) {
	t.Helper()
	env := []string{seamEnv + "=" + mode, envBaseURL + "=http://127.0.0.1:9/v1", envProgress + "=0"}
	if out != "" {
		env = append(env, envOut+"="+out)
	}
	cmd := childCommand(t, append(env, extra...), append([]string{"-test.run=^$", "-test.bench=^BenchmarkSeam$"}, flags...)...)
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	return string(b), err
}

// childCommand is a command that runs this test binary again with args.
// Its environment is this process's without the ANVIL_ variables and
// JOB_COMPLETION_INDEX, which the child must not inherit, plus env (later
// entries win).
func childCommand(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), exe, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANVIL_") && !strings.HasPrefix(kv, jobCompletionIndex+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// benchLines parses the benchmark results of a child's output exactly as
// benchstat would; a syntax error fails the test.
func benchLines(t *testing.T, out string) []*benchfmt.Result {
	t.Helper()
	var rs []*benchfmt.Result
	r := benchfmt.NewReader(strings.NewReader(out), "child")
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			rs = append(rs, rec.Clone())
		case *benchfmt.SyntaxError:
			t.Fatalf("benchfmt: %v\n%s", rec, out)
		}
	}
	require.NoError(t, r.Err())
	return rs
}

func valueMap(r *benchfmt.Result) map[string]float64 {
	m := map[string]float64{}
	for _, v := range r.Values {
		if v.OrigUnit != "" {
			m[v.OrigUnit] = v.OrigValue
		} else {
			m[v.Unit] = v.Value
		}
	}
	return m
}

// stepUnits are the values every successful step request yields.
func stepUnits(nsPerOp, failed float64, throughput *float64) map[string]float64 {
	m := map[string]float64{
		"ns/op":       nsPerOp,
		"ttft-p50-ms": 40, "ttft-p95-ms": 40, "ttfo-p50-ms": 20,
		"tpot-ms": 1.6, "decode-tok/s": 625, "prefill-tok/s": 50000,
		"e2e-p50-ms": 100, "failed-req": failed,
	}
	if throughput != nil {
		m["output-tok/s"] = *throughput
	}
	return m
}

func ptr(v float64) *float64 { return &v }

// TestBenchmarkLinePerMode pins what the benchmark line prints in each
// iteration mode: the requests sent (the .bench file's iteration count),
// b.Loop's iteration count on the go test line (one per request sent,
// plus those the run left unused), ns/op = wall time per request sent,
// the units, and one call (one artifact) per -count.
func TestBenchmarkLinePerMode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child benchmarks")
	}
	// The testing package prints about four significant digits, and the
	// .bench artifact the same digits (so benchstat sees the two equal).
	printed := cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 1e-3*math.Abs(b) })
	for _, tc := range []struct {
		name, mode string
		flags      []string
		iters      int // requests sent
		// lineIters is b.Loop's count on the go test line; 0: at least
		// iters (a time-based -benchtime ends on b.Loop's ramp-up step).
		lineIters int
		values    map[string]float64
	}{
		// 7 requests at concurrency 2: 4 waves of 100 ms.
		{"Nx is N requests", "plain", []string{"-test.benchtime=7x"}, 7, 7,
			stepUnits(400e6/7, 0, ptr(7*51/0.4))},
		{"1x is one request", "plain", []string{"-test.benchtime=1x"}, 1, 1,
			stepUnits(100e6, 0, ptr(51/0.1))},
		// A 250 ms campaign at concurrency 2: waves start at 0, 100, 200 ms.
		{"duration is a campaign", "plain", []string{"-test.benchtime=250ms"}, 6, 0,
			stepUnits(300e6/6, 0, ptr(6*51/0.3))},
		// The Workload's 5 requests took 5 of the 20 iterations.
		{"Requests wins over Nx", "requests", []string{"-test.benchtime=20x"}, 5, 20,
			stepUnits(300e6/5, 0, ptr(5*51/0.3))},
		{"Requests wins over a duration", "requests", []string{"-test.benchtime=50ms"}, 5, 0,
			stepUnits(300e6/5, 0, ptr(5*51/0.3))},
		// Failed requests are no latency samples and make the run not
		// eligible for aggregate throughput, which is then omitted.
		{"failures stay visible", "failures", []string{"-test.benchtime=6x"}, 6, 6,
			stepUnits(300e6/6, 2, nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			stdout, err := child(t, tc.mode, t.TempDir(), out, append(tc.flags, "-test.count=2")...)
			require.NoError(t, err, stdout)
			rs := benchLines(t, stdout)
			require.Len(t, rs, 2, "one line per -count:\n%s", stdout)
			for _, r := range rs {
				require.Regexp(t, `^Seam(-\d+)?$`, r.Name.String(), "benchfmt drops the Benchmark prefix")
				if tc.lineIters > 0 {
					require.Equal(t, tc.lineIters, r.Iters)
				} else {
					require.GreaterOrEqual(t, r.Iters, tc.iters)
				}
				if diff := cmp.Diff(tc.values, valueMap(r), printed); diff != "" {
					t.Errorf("values (-want +got):\n%s\n%s", diff, stdout)
				}
			}
			// The line is printed whole: name, iterations and numbers.
			require.Regexp(t, regexp.MustCompile(`(?m)^BenchmarkSeam\S*\s+\d+\s+\S+ ns/op\s`), stdout)
			jsons, _ := filepath.Glob(filepath.Join(out, "*.json"))
			benches, _ := filepath.Glob(filepath.Join(out, "*.bench"))
			require.Len(t, jsons, 2, "one run per -count, each with its own files")
			require.Len(t, benches, 2)
			require.Contains(t, stdout, "artifacts: "+out)
			for _, path := range benches {
				data, err := os.ReadFile(path)
				require.NoError(t, err)
				rs := benchLines(t, string(data))
				require.Len(t, rs, 1)
				require.Equal(t, rs[0].Name.String(), strings.TrimPrefix(benchLines(t, stdout)[0].Name.String(), "Benchmark"),
					"the .bench file names the benchmark as go test does")
				require.Equal(t, tc.iters, rs[0].Iters)
				if diff := cmp.Diff(tc.values, valueMap(rs[0]), printed); diff != "" {
					t.Errorf("%s (-want +got):\n%s", path, diff)
				}
				lines := benchLines(t, stdout)
				require.True(t, cmp.Equal(valueMap(rs[0]), valueMap(lines[0])) || cmp.Equal(valueMap(rs[0]), valueMap(lines[1])),
					"%s has the digits of its go test line:\n%s\n%s", path, data, stdout)
			}
		})
	}
}

// TestArtifactsLocation checks the three artifact locations: -artifacts
// (under -test.outputdir), ANVIL_OUT (above), and ./anvil-out.
func TestArtifactsLocation(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child benchmarks")
	}
	dir := t.TempDir()
	stdout, err := child(t, "plain", dir, "", "-test.benchtime=2x")
	require.NoError(t, err, stdout)
	got, _ := filepath.Glob(filepath.Join(dir, defaultOutDir, "BenchmarkSeam.*.json"))
	require.Len(t, got, 1, stdout)
	r := readArtifact(t, got[0])
	require.Equal(t, 2, r.Requests)

	dir = t.TempDir()
	outdir := t.TempDir()
	stdout, err = child(t, "plain", dir, "", "-test.benchtime=2x", "-test.artifacts", "-test.outputdir="+outdir)
	require.NoError(t, err, stdout)
	got = nil
	require.NoError(t, filepath.WalkDir(filepath.Join(outdir, "_artifacts"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "BenchmarkSeam.") {
			got = append(got, p)
		}
		return err
	}))
	require.Len(t, got, 2, "the .json and .bench under -test.outputdir/_artifacts:\n%s", stdout)
	none, _ := filepath.Glob(filepath.Join(dir, defaultOutDir))
	require.Empty(t, none, "with -artifacts nothing goes to ./anvil-out")
}

func readArtifact(t *testing.T, path string) *artifact.Report {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	r, err := artifact.Read(bytes.NewReader(data))
	require.NoError(t, err)
	return r
}

// oneArtifact reads the one JSON artifact in dir; msgAndArgs say what to
// show when there is not exactly one.
func oneArtifact(t *testing.T, dir string, msgAndArgs ...any) *artifact.Report {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	require.Len(t, paths, 1, msgAndArgs...)
	return readArtifact(t, paths[0])
}

// TestInterruptWritesPartialReport: Ctrl-C during a run still writes the
// partial report, marked not performance eligible, and fails the benchmark.
func TestInterruptWritesPartialReport(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child benchmarks")
	}
	if !canInterruptSelf {
		t.Skip("the child cannot send itself Ctrl-C here")
	}
	out := t.TempDir()
	stdout, err := child(t, "interrupt", t.TempDir(), out, "-test.benchtime=10x")
	require.Error(t, err, "the benchmark fails:\n%s", stdout)
	require.Contains(t, stdout, "--- FAIL: BenchmarkSeam")
	require.Contains(t, stdout, "interrupted: 3 of 3 planned requests sent, 2 succeeded, 0 never sent")
	r := oneArtifact(t, out, stdout)
	require.False(t, r.PerformanceEligible)
	require.Equal(t, 2, r.Completed)
	require.Equal(t, artifact.FailureCancelled, r.Failures[0].FailureClass)
	require.Empty(t, benchLines(t, stdout), "no benchmark line for an interrupted run")
}

// TestNoSuccessFailsTheBenchmark: a run in which every request failed (a
// wrong port, a server answering 503) has no latency sample; it writes its
// report but fails instead of printing a line benchstat would compare.
func TestNoSuccessFailsTheBenchmark(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child benchmarks")
	}
	out := t.TempDir()
	stdout, err := child(t, "allfail", t.TempDir(), out, "-test.benchtime=3x")
	require.Error(t, err, "the benchmark fails:\n%s", stdout)
	require.Contains(t, stdout, "--- FAIL: BenchmarkSeam")
	require.Contains(t, stdout, "none of the 3 requests succeeded")
	require.Contains(t, stdout, "failures by class: http_error 3")
	require.Empty(t, benchLines(t, stdout), "no benchmark line without a success")
	r := oneArtifact(t, out, stdout)
	require.Zero(t, r.Completed)
	require.Len(t, r.Failures, 3)
	require.False(t, r.PerformanceEligible)
}

// countingServer is a plain chat-completions handler, not the fake: it
// answers every chat request at once with one content chunk and usage
// (prompt tokens at 3 characters each), and counts the requests and the
// most in flight at once. Every other request (the window discovery's,
// the connection warm-up's) is 404.
type countingServer struct {
	seen, inFlight, peak atomic.Int32
}

func (s *countingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	s.seen.Add(1)
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
	}
	raw, _ := io.ReadAll(r.Body)
	var body struct {
		Messages []struct{ Content string } `json:"messages"`
	}
	_ = json.Unmarshal(raw, &body)
	prompt := 0
	for _, m := range body.Messages {
		prompt += len(m.Content) / 3
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\n"+
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":1,\"total_tokens\":%d}}\n\n"+
		"data: [DONE]\n\n", prompt, prompt+1)
}

// TestEngineIterations: with the engine itself (capacity.Run through
// Capacity's b.Loop gate) against a plain server, -benchtime 20x is
// exactly 20 requests on the server, 20 iterations on the line and in the
// .bench file; a time-based -benchtime is a closed-loop campaign whose
// requests the server counts as the report does, each one iteration.
func TestEngineIterations(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child benchmarks")
	}
	for _, tc := range []struct {
		name, benchtime string
		want            int // requests; 0: a campaign, counted by the report
	}{
		{"20x", "20x", 20},
		{"duration", "100ms", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &countingServer{}
			srv := httptest.NewServer(h)
			defer srv.Close()
			out := t.TempDir()
			stdout, err := childEnv(t, "engine", t.TempDir(), out,
				[]string{envBaseURL + "=" + srv.URL + "/v1", envModel + "=m", envMaxModelLen + "=8192", envEngine + "=e", envGPU + "=g"},
				"-test.benchtime="+tc.benchtime)
			require.NoError(t, err, stdout)
			lines := benchLines(t, stdout)
			require.Len(t, lines, 1, stdout)
			rep := oneArtifact(t, out)
			sent := rep.SentRequests()
			require.EqualValues(t, sent, h.seen.Load(), "the server saw every request the report counts, no more")
			require.Equal(t, rep.Requests, rep.Completed)
			require.LessOrEqual(t, h.peak.Load(), int32(2), "at most Concurrency 2 in flight")
			if tc.want > 0 {
				require.Equal(t, tc.want, sent)
				require.Equal(t, tc.want, lines[0].Iters)
			} else {
				require.GreaterOrEqual(t, lines[0].Iters, sent)
				require.NotNil(t, rep.AnvilGo.Run.DurationMS)
				require.Equal(t, 100.0, *rep.AnvilGo.Run.DurationMS)
			}
			require.InDelta(t, rep.WallClockMS*1e6/float64(sent), valueMap(lines[0])["ns/op"], 1e-3*rep.WallClockMS*1e6/float64(sent))
			benches, _ := filepath.Glob(filepath.Join(out, "*.bench"))
			require.Len(t, benches, 1)
			data, err := os.ReadFile(benches[0])
			require.NoError(t, err)
			require.Equal(t, sent, benchLines(t, string(data))[0].Iters)
		})
	}
}
