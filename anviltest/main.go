package anviltest

import (
	"flag"
	"io"
	"net/url"
	"os"
	"strconv"
	"testing"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/reporters"
)

// Benchfmt configuration keys Main prints after the model, engine and gpu
// of the .bench files (reporters.WriteIdentity), in this order. They say
// what a go test run points at and exist only in go test output.
const (
	// configTarget is the endpoint: the base URL without credentials,
	// query or fragment, or "embedded-fake" for the embedded fake server.
	configTarget = "target"
	// configFakeProfile is the embedded fake server's profile.
	configFakeProfile = "fake-profile"
	// configFakeTimeScale is the embedded fake server's time scale (its
	// latencies are real ones times the scale).
	configFakeTimeScale = "fake-time-scale"
	// configFakeDecodeStep is ANVIL_FAKE_DECODE_STEP, when set.
	configFakeDecodeStep = "fake-decode-step"
)

// targetFake is the configTarget value of the embedded fake server.
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
// WithEnvironment), then the ANVIL_* variables, then the embedded fake
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

// identity is what Main prints for s: the model, engine and gpu, and the
// keys of go test output only, in order. ok is false when the target
// cannot be resolved (the benchmarks report why).
type identity struct {
	model, engine, gpu string
	extra              [][2]string
}

// identityOf resolves the identity Main prints for s.
func identityOf(s *settings) (identity, bool) {
	t, err := s.resolveTarget()
	if err != nil {
		return identity{}, false
	}
	if t.BaseURL != "" {
		return identity{t.Model, t.Engine, t.GPU, [][2]string{{configTarget, redactedURL(t.BaseURL)}}}, true
	}
	cfg, name, err := s.fakeConfig()
	if err != nil {
		return identity{}, false
	}
	id := identity{model: cfg.Model, engine: t.Engine, gpu: t.GPU}
	if t.Model != "" {
		id.model = t.Model
	}
	if id.engine == "" {
		id.engine = fakeEngine + name
	}
	if id.gpu == "" {
		id.gpu = "none"
	}
	id.extra = [][2]string{
		{configTarget, targetFake},
		{configFakeProfile, name},
		{configFakeTimeScale, strconv.FormatFloat(cfg.TimeScale, 'g', -1, 64)},
	}
	if e, _ := s.env(); e.fakeDecodeStep != 0 { // fakeConfig parsed it
		id.extra = append(id.extra, [2]string{configFakeDecodeStep, e.fakeDecodeStep.String()})
	}
	return id, true
}

// writeIdentity prints the identity of s as benchfmt configuration lines
// (reporters.WriteIdentity), each value one Printable line as in the
// .bench files; nothing when the target cannot be resolved.
func writeIdentity(w io.Writer, s *settings) {
	if id, ok := identityOf(s); ok {
		reporters.WriteIdentity(w, id.model, id.engine, id.gpu, id.extra...)
	}
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
// that made it (anvil_go.run.benchmark), by which reporters.BenchResult and
// `anvilreport bench` name the converted artifact. A report without the
// extension's run object (a custom runFunc's) is left alone.
func recordBenchmark(r *artifact.Report, name string) {
	if r.AnvilGo == nil || r.AnvilGo.Run == nil || name == "" {
		return
	}
	r.AnvilGo.Run.Benchmark = &name
}
