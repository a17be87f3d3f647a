package anviltest

import (
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/reporters"
)

// Benchfmt configuration keys Main prints before the first benchmark, in
// this order. ConfigModel, ConfigEngine and ConfigGPU are the keys (and
// values) of the .bench files; the others say what a go test run points
// at and exist only in go test output.
const (
	// ConfigTarget is the endpoint: the base URL without credentials,
	// query or fragment, or "embedded-fake" for the embedded fake server.
	ConfigTarget = "target"
	// ConfigFakeProfile is the embedded fake server's profile.
	ConfigFakeProfile = "fake-profile"
	// ConfigFakeTimeScale is the embedded fake server's time scale (its
	// latencies are real ones times the scale).
	ConfigFakeTimeScale = "fake-time-scale"
	// ConfigFakeDecodeStep is ANVIL_FAKE_DECODE_STEP, when set.
	ConfigFakeDecodeStep = "fake-decode-step"
)

// targetFake is the ConfigTarget value of the embedded fake server.
const targetFake = "embedded-fake"

// Main is a TestMain for a package of capacity benchmarks:
//
//	func TestMain(m *testing.M) { anviltest.Main(m) }
//
// When benchmarks run (-bench set), it first prints the run's identity as
// benchfmt configuration lines, so the go test output itself says what ran
// and benchstat never puts runs of different setups in one row:
//
//	model: fake-reasoning
//	engine: anvil-fakeserver-reasoning
//	gpu: none
//	target: embedded-fake
//	fake-profile: reasoning
//	fake-time-scale: 0.05
//
// The values come from the sources Capacity uses, resolved the same way:
// opts (give the options the benchmarks give Capacity, WithTarget and
// WithFakeProfile), then the ANVIL_* variables, then the embedded fake
// server's profile. A key whose value is not known before the first run
// (the model of a real endpoint without ANVIL_MODEL, probed per run) is
// left out; a configuration error is left to the benchmarks to report.
// Then Main runs the tests and benchmarks and exits with m.Run's status.
func Main(m *testing.M, opts ...Option) {
	if !flag.Parsed() {
		flag.Parse()
	}
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		writeIdentity(os.Stdout, newSettings(opts))
	}
	os.Exit(m.Run())
}

// identityConfig is the configuration Main prints for s, in order; empty
// values are left out.
func identityConfig(s *settings) [][2]string {
	t, err := s.resolveTarget()
	if err != nil {
		return nil
	}
	var kv [][2]string
	add := func(k, v string) {
		if v != "" {
			kv = append(kv, [2]string{k, v})
		}
	}
	if t.BaseURL != "" {
		add(reporters.ConfigModel, t.Model)
		add(reporters.ConfigEngine, t.Engine)
		add(reporters.ConfigGPU, t.GPU)
		add(ConfigTarget, redactedURL(t.BaseURL))
		return kv
	}
	cfg, name, err := s.fakeConfig()
	if err != nil {
		return nil
	}
	model := cfg.Model
	if t.Model != "" {
		model = t.Model
	}
	engine, gpu := t.Engine, t.GPU
	if engine == "" {
		engine = fakeEngine + name
	}
	if gpu == "" {
		gpu = "none"
	}
	add(reporters.ConfigModel, model)
	add(reporters.ConfigEngine, engine)
	add(reporters.ConfigGPU, gpu)
	add(ConfigTarget, targetFake)
	add(ConfigFakeProfile, name)
	add(ConfigFakeTimeScale, strconv.FormatFloat(cfg.TimeScale, 'g', -1, 64))
	if e, _ := s.env(); e.fakeDecodeStep != 0 { // fakeConfig parsed it
		add(ConfigFakeDecodeStep, e.fakeDecodeStep.String())
	}
	return kv
}

// writeIdentity prints identityConfig(s) as benchfmt configuration lines,
// each value one Printable line as in the .bench files.
func writeIdentity(w io.Writer, s *settings) {
	for _, kv := range identityConfig(s) {
		fmt.Fprintf(w, "%s: %s\n", kv[0], oneLine(kv[1]))
	}
}

// oneLine is v as the .bench files write a configuration value: one
// line, whitespace runs as one space, Printable.
func oneLine(v string) string {
	return reporters.Printable(strings.Join(strings.Fields(v), " "))
}

// redactedURL is raw without user information, query and fragment;
// "unparsed-url" when it is not an absolute URL (the benchmarks then fail
// with the reason).
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "unparsed-url"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// recordBenchmark records in r the name go test prints for the benchmark
// that made it (anvil_go.run.benchmark), by which reporters.BenchName and
// `anvilreport bench` name the converted artifact. A report without the
// extension's run object (a custom RunFunc's) is left alone.
func recordBenchmark(r *artifact.Report, name string) {
	if r.AnvilGo == nil || r.AnvilGo.Run == nil || name == "" {
		return
	}
	r.AnvilGo.Run.Benchmark = &name
}
