package reporters

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/anvilbench/anvil/capacity/artifact"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// loadReport reads the artifact at path.

// golden compares got with testdata/name, or rewrites it with -update.
func benchGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create it")
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// parsed is what benchstat sees in a benchfmt stream.
type parsed struct {
	results []*benchfmt.Result
	units   benchfmt.UnitMetadataMap
	errs    []string
}

func parseBench(t testing.TB, data []byte) parsed {
	t.Helper()
	var p parsed
	r := benchfmt.NewReader(bytes.NewReader(data), "out.bench")
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			p.results = append(p.results, rec.Clone())
		case *benchfmt.SyntaxError:
			p.errs = append(p.errs, rec.Error())
		}
	}
	require.NoError(t, r.Err())
	p.units = r.Units()
	return p
}

func benchValueMap(r *benchfmt.Result) map[string]float64 {
	m := map[string]float64{}
	for _, v := range r.Values {
		unit, val := v.Unit, v.Value
		if v.OrigUnit != "" {
			unit, val = v.OrigUnit, v.OrigValue
		}
		m[unit] = val
	}
	return m
}

func TestBenchWriterSeedGolden(t *testing.T) {
	seed := loadReport(t, seedPath)
	var buf bytes.Buffer
	require.NoError(t, writeBenchfmt(&buf, seed))
	benchGolden(t, "seed.bench", buf.Bytes())

	p := parseBench(t, buf.Bytes())
	require.Empty(t, p.errs)
	require.Len(t, p.results, 1)
	res := p.results[0]
	require.Equal(t, "Capacity/ctx=65536/conc=1", res.Name.String(), "benchfmt names drop the Benchmark prefix")
	require.Equal(t, 6, res.Iters, "iterations are the measured requests")
	m := seed.Metrics
	want := map[string]float64{
		unitNsPerOp:          seed.WallClockMS * 1e6 / 6,
		unitTTFTP50:          *m.TTFT.P50,
		unitTTFTP95:          *m.TTFT.P95,
		unitTTFOP50:          *m.TimeToFirstOutput.P50,
		unitTPOT:             *m.TPOT.P50,
		unitDecode:           *m.DecodeTokS.P50,
		unitPrefill:          *m.EffectivePrefillTokS.P50,
		unitE2EP50:           *m.E2E.P50,
		unitOutputThroughput: *m.ThroughputTokS,
		unitCacheHit:         *m.PrefixCacheHitAvg * 100,
		unitFailed:           0,
	}
	for u, v := range want {
		want[u] = goTestRounded(v) // as go test prints it, BenchResult's exact value
	}
	if diff := cmp.Diff(want, benchValueMap(res)); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	require.Equal(t, map[string]string{
		"model":    seed.Model,
		"engine":   "ninfer",
		"gpu":      "rtx5090",
		"protocol": "capacity-v4-reasoning",
		"workload": "ctx=65536 served-ctx=262144 conc=1 max-tokens=8192 cache=unique prefix=0 thinking=default canaries=true",
		"eligible": "true",
	}, benchConfigMap(res))
	require.Equal(t, 1, p.units.GetBetter(unitDecode))
	require.Equal(t, -1, p.units.GetBetter(unitTTFTP50))
	require.Equal(t, "exact", p.units.Get(unitFailed, "assume").Value)
}

func benchConfigMap(r *benchfmt.Result) map[string]string {
	m := map[string]string{}
	for _, c := range r.Config {
		if c.File {
			m[c.Key] = string(c.Value)
		}
	}
	return m
}

func TestBenchValuesOmitNullsAndKeepFailuresVisible(t *testing.T) {
	r := &artifact.Report{Requests: 4, Completed: 0, Failed: 4, WallClockMS: 800}
	got := benchValues(r)
	require.Equal(t, []benchfmt.Value{
		{Value: 2e8, Unit: unitNsPerOp},
		{Value: 4, Unit: unitFailed},
	}, got, "every latency is null: only the wall time and the failure count remain")

	legacy := &artifact.Report{Requests: 10, Completed: 8}
	require.Equal(t, []benchfmt.Value{{Value: 2, Unit: unitFailed}}, benchValues(legacy),
		"legacy artifacts without failures count requests minus completed")
}

func TestBenchResultRejectsBadNames(t *testing.T) {
	r := &artifact.Report{Requests: 1}
	for _, name := range []string{"Capacity/x", "Benchmark x", "Benchmark\tx"} {
		_, err := BenchResult(r, name)
		require.ErrorContains(t, err, "want Benchmark... without spaces", name)
	}
	_, err := BenchResult(nil, "")
	require.Error(t, err)
}

func TestBenchWriterConfigChangesOnlyWithIdentity(t *testing.T) {
	seed := loadReport(t, seedPath)
	again := loadReport(t, seedPath)
	again.RunID = "benchmark-20991231T000000Z" // per-run values never reach the config
	again.StartedAt = "2099-12-31T00:00:00Z"
	other := loadReport(t, seedPath)
	eng := "vllm"
	other.Engine = &eng
	var buf bytes.Buffer
	require.NoError(t, writeBenchfmt(&buf, seed, again, other))
	out := buf.String()
	require.Equal(t, 2, strings.Count(out, "engine: "), "config is rewritten only when identity changes:\n%s", out)
	require.NotContains(t, out, "2099")
	require.NotContains(t, out, "benchmark-2026")
	p := parseBench(t, buf.Bytes())
	require.Empty(t, p.errs)
	require.Len(t, p.results, 3)
	require.Equal(t, "vllm", benchConfigMap(p.results[2])["engine"])
}

// TestConcatenatedFilesKeepTheirOwnIdentity: a .bench file of a run with
// no engine or gpu, read after another file (cat a.bench b.bench), must
// not inherit the first file's identity; a run that lost requests is
// marked not eligible and so never shares a table with complete runs.
func TestConcatenatedFilesKeepTheirOwnIdentity(t *testing.T) {
	first := loadReport(t, seedPath)
	second := loadReport(t, seedPath)
	second.Engine, second.GPU = nil, nil
	second.Failures = []artifact.Failure{{RequestIndex: 5, FailureClass: artifact.FailureCancelled}}
	second.RequestTimings = second.RequestTimings[:5]
	second.Completed, second.Failed = 5, 1
	require.NoError(t, second.Recompute())

	var a, b bytes.Buffer
	require.NoError(t, writeBenchfmt(&a, first))
	require.NoError(t, writeBenchfmt(&b, second))
	p := parseBench(t, append(a.Bytes(), b.Bytes()...))
	require.Empty(t, p.errs)
	require.Len(t, p.results, 2)
	require.Equal(t, map[string]string{"engine": "ninfer", "gpu": "rtx5090", "eligible": "true"},
		pick(benchConfigMap(p.results[0]), "engine", "gpu", "eligible"))
	require.Equal(t, map[string]string{"eligible": "false"},
		pick(benchConfigMap(p.results[1]), "engine", "gpu", "eligible"))
}

// pick is the subset of m with the given keys that m has.
func pick(m map[string]string, keys ...string) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

// TestCorpusConvertsCleanly converts every artifact of every generation in
// testdata/corpus and parses the result as benchstat does.
func TestCorpusConvertsCleanly(t *testing.T) {
	var reports []*artifact.Report
	for _, path := range corpusFiles(t) {
		reports = append(reports, loadReport(t, path))
	}
	var buf bytes.Buffer
	require.NoError(t, writeBenchfmt(&buf, reports...))
	p := parseBench(t, buf.Bytes())
	require.Empty(t, p.errs)
	require.Len(t, p.results, len(reports))
	allowed := map[string]bool{configModel: true, configEngine: true, configGPU: true, configProtocol: true, configWorkload: true, configEligible: true}
	withTTFT := 0
	for i, res := range p.results {
		vs := benchValueMap(res)
		require.Contains(t, vs, unitFailed, "result %d", i)
		if _, ok := vs[unitTTFTP50]; ok {
			withTTFT++
		}
		for k := range benchConfigMap(res) {
			require.True(t, allowed[k], "config key %q", k)
		}
	}
	// One corpus run (prefix-sequence-256k-70k.json) had no successful
	// request: its null ttft_p50_ms is omitted, every other run has it.
	require.Equal(t, len(reports)-1, withTTFT)
}

// BenchmarkBenchWriter converts the seed artifact to benchfmt: the cost
// of the .bench file anviltest writes after every run.
func BenchmarkBenchWriter(b *testing.B) {
	seed := loadReport(b, seedPath)
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := writeBenchfmt(&buf, seed); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}
