package reporters

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// goTestPrinted is v as go test prints a metric: the text of
// testing.BenchmarkResult.String, read back.
func goTestPrinted(t *testing.T, v float64) float64 {
	t.Helper()
	line := testing.BenchmarkResult{N: 1, Extra: map[string]float64{"x": v}}.String()
	f := strings.Fields(line)
	require.Len(t, f, 3, "%q", line)
	got, err := strconv.ParseFloat(f[1], 64)
	require.NoError(t, err)
	return got
}

// TestGoTestRounded: every value rounds to what go test prints, at each
// magnitude boundary of the testing package's format and between them;
// rounding twice changes nothing.
func TestGoTestRounded(t *testing.T) {
	values := []float64{0, 18.480492813141684, 7.0642430666666765e+09, 35409670.4, 0.32391, 4.1709643518498964,
		231.96481822725846, 999.95, 999.9499, 99.995, 99.9949, 9.9995, 9.9994, 0.99995, 0.99994, 0.099995, 0.0099995,
		0.00099995, 0.00099994, 1.23456789e-5, -18.4849, 5e-324, 1e300}
	for e := -8.0; e <= 12; e += 0.37 {
		values = append(values, math.Pow(10, e), math.Pow(10, e)*7.77777)
	}
	for _, v := range values {
		want := goTestPrinted(t, v)
		require.Equal(t, want, goTestRounded(v), "%v", v)
		require.Equal(t, want, goTestRounded(goTestRounded(v)), "%v twice", v)
	}
}

// TestMixedBenchstatTableEqual: the same six runs, once as go test
// printed them and once converted from their artifacts (anvilreport bench,
// a BenchWriter), in one benchstat table with the keys that only one side
// has ignored (as the README says): no metric shows a difference. With
// every digit kept, the converted side's 18.480492813141684 against go
// test's 18.48 came out "+0.00% (p=0.002)".
func TestMixedBenchstatTableEqual(t *testing.T) {
	if testing.Short() {
		t.Skip("builds benchstat")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	const name = "BenchmarkCapacity/ctx=65536/conc=1-2" // as anviltest records it
	var printed, converted bytes.Buffer
	fmt.Fprintf(&printed, "goos: linux\ngoarch: amd64\npkg: example.com/bench\ncpu: AMD EPYC\n")
	bw := NewBenchWriter(&converted)
	for i := range 6 {
		r := loadReport(t, seedPath)
		scaleMetrics(r, 1+0.0137*float64(i))
		// A run of today, measured by this binary (WriteIdentity prints
		// its build).
		r.AnvilGo = &artifact.Extension{Version: 1, Run: &artifact.RunSummary{SentRequests: r.Requests}}
		r.AnvilGo.Run.RecordBuild()
		if i == 0 {
			// What anviltest.Main prints before the benchmarks.
			WriteIdentity(&printed, r.Model, deref(r.Engine), deref(r.GPU), [2]string{"target", "http://gpu-box:8000/v1"})
		}
		// What go test prints for the run: the unrounded metrics
		// through testing's own formatting.
		extra := map[string]float64{}
		for _, v := range exactValues(r) {
			extra[v.unit] = v.value
		}
		fmt.Fprintf(&printed, "%s \t%s\n", name, testing.BenchmarkResult{N: 100, Extra: extra}.String())
		require.NoError(t, bw.Write(r, name)) // the name anviltest records

	}
	dir := t.TempDir()
	oldPath, newPath := filepath.Join(dir, "printed.txt"), filepath.Join(dir, "converted.txt")
	require.NoError(t, os.WriteFile(oldPath, printed.Bytes(), 0o644))
	require.NoError(t, os.WriteFile(newPath, converted.Bytes(), 0o644))
	cmd := exec.CommandContext(t.Context(), goTool, "run", "golang.org/x/perf/cmd/benchstat",
		"-ignore", "goos,goarch,pkg,cpu,target,protocol,workload,eligible", oldPath, newPath)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	table := string(out)
	rows := 0
	for _, l := range strings.Split(table, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || !strings.Contains(l, "n=6") {
			continue
		}
		rows++
		// "~": no significant difference; an exact unit (failed-req)
		// shows its change itself, which must be none.
		require.Regexp(t, `(~ \(p=1\.000 n=6\)| 0\.00% \(n=6\))( ¹)?$`, l, "a difference in a table of equal values:\n%s", table)
	}
	require.GreaterOrEqual(t, rows, 10, "one row per metric:\n%s", table)
}

// unitValue is one metric of a report, unrounded.
type unitValue struct {
	unit  string
	value float64
}

// exactValues are the metrics of r as b.ReportMetric would get them
// without any rounding.
func exactValues(r *artifact.Report) []unitValue {
	m := &r.Metrics
	var out []unitValue
	add := func(u string, v *float64) {
		if v != nil {
			out = append(out, unitValue{u, *v})
		}
	}
	ns := r.WallClockMS * 1e6 / float64(r.SentRequests())
	add(unitNsPerOp, &ns)
	add(unitTTFTP50, m.TTFT.P50)
	add(unitTTFTP95, m.TTFT.P95)
	add(unitTTFOP50, m.TimeToFirstOutput.P50)
	add(unitTPOT, m.TPOT.P50)
	add(unitDecode, m.DecodeTokS.P50)
	add(unitPrefill, m.EffectivePrefillTokS.P50)
	add(unitE2EP50, m.E2E.P50)
	add(unitOutputThroughput, m.ThroughputTokS)
	pct := *m.PrefixCacheHitAvg * 100
	add(unitCacheHit, &pct)
	zero := 0.0
	add(unitFailed, &zero)
	return out
}

// scaleMetrics multiplies r's latency and rate statistics and its wall
// time by f, so six runs differ in every digit.
func scaleMetrics(r *artifact.Report, f float64) {
	m := &r.Metrics
	for _, p := range []*float64{m.TTFT.P50, m.TTFT.P95, m.TimeToFirstOutput.P50, m.TPOT.P50, m.DecodeTokS.P50,
		m.EffectivePrefillTokS.P50, m.E2E.P50, m.ThroughputTokS} {
		if p != nil {
			*p *= f
		}
	}
	r.WallClockMS *= f
}
