package anviltest

import (
	"testing"
	"time"

	"github.com/anvilbench/anvil/anviltest/conformance"
	"github.com/anvilbench/anvil/capacity"
)

// conformanceSettings are the options only Conformance reads.
type conformanceSettings struct {
	required []string
}

// WithRequired makes the named checks mandatory: a SKIP of one of them (the
// server does not offer the feature) becomes a FAIL, e.g.
// WithRequired("prefix_cache", "determinism") for a deployment that must
// cache prefixes and decode greedily. Names are those of
// conformance.Checks (capacity/PROTOCOL.md#conformance lists them); an
// unknown name fails the test with an error naming it and the names
// allowed.
func WithRequired(checks ...string) Option {
	return func(s *settings) { s.conformance.required = append(s.conformance.required, checks...) }
}

// Conformance runs the conformance suite (package conformance) against the
// configured target, one subtest per check (see conformance.Checks), and
// returns the verdicts of the checks that ran:
//
//	func TestConformance(t *testing.T) { anviltest.Conformance(t) }
//
// The target comes from the options and the ANVIL_* variables exactly as
// for Capacity (ANVIL_BASE_URL, ANVIL_MODEL, ANVIL_API_KEY_ENV,
// ANVIL_MAX_MODEL_LEN, ANVIL_TIMEOUT for each request, default
// 2 minutes); without a base URL the embedded fake server
// is started. A check's subtest fails for a violation, skips with a reason
// when the server lacks an optional feature, and logs what it saw either
// way. -run filters the checks as usual (-run Conformance/usage).
//
// The suite is bounded: a few dozen requests, each with a timeout and a
// small max_tokens (1024 where visible content must follow a reasoning
// model's thinking), one prompt longer than the context window, and a
// capacity run of 8 requests for the isolation check.
//
// The verdicts are also written, as conformance.<start>.json and
// conformance.<start>.md (a Markdown table), into the artifact directory
// of Capacity (-artifacts, $ANVIL_OUT, ./anvil-out); their
// paths are logged. Every text of the log and the files is scrubbed of the
// target's credentials.
func Conformance(t *testing.T, opts ...Option) *conformance.Report {
	t.Helper()
	s := newSettings(opts)
	tgt, err := s.resolveTarget()
	if err != nil {
		t.Fatal(err)
	}
	if tgt.BaseURL == "" {
		if tgt, err = s.startFake(t, tgt); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := s.conformanceConfig(tgt)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	suite, err := conformance.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep := suite.NewReport(started)
	for _, name := range conformance.Checks() {
		t.Run(name, func(t *testing.T) {
			v := suite.Check(t.Context(), name)
			rep.Verdicts = append(rep.Verdicts, v)
			reportVerdict(t, v)
		})
	}
	if len(rep.Verdicts) == 0 {
		return rep
	}
	dir, err := s.artifactDir(t)
	if err != nil {
		t.Error(err)
		return rep
	}
	pj, pm, err := rep.WriteFiles(dir)
	if err != nil {
		t.Errorf("anviltest: writing the conformance verdicts: %v", err)
		return rep
	}
	t.Logf("conformance verdicts: %s %s", pj, pm)
	return rep
}

// conformanceConfig is the suite's configuration for tgt: the bearer
// token read from the variable Target.APIKeyEnv names, the per-request
// limit (ANVIL_TIMEOUT, else the suite's default of 2 minutes), the runner and
// the required checks.
func (s *settings) conformanceConfig(tgt capacity.Target) (conformance.Config, error) {
	rt, err := tgt.Resolved()
	if err != nil {
		return conformance.Config{}, explainFields(err, s.envFieldNames()...)
	}
	cfg := conformance.Config{Target: tgt, Run: s.run, Required: s.conformance.required}
	if rt.APIKeyEnv != "" {
		cfg.APIKey = s.getenv(rt.APIKeyEnv)
		if cfg.APIKey == "" {
			return conformance.Config{}, envError(rt.APIKeyEnv, "", "the bearer token ("+envAPIKeyEnv+" names this variable)", nil)
		}
	}
	w, err := s.applyWorkloadEnv(capacity.Workload{})
	if err != nil {
		return conformance.Config{}, err
	}
	cfg.Timeout = w.Timeout
	return cfg, nil
}

// verdictReporter is the part of *testing.T a verdict is reported through.
type verdictReporter interface {
	Helper()
	Log(args ...any)
	Error(args ...any)
	Skip(args ...any)
}

// reportVerdict logs what the check saw, then passes, fails or skips r with
// the verdict's reason, each configuration field it names followed by
// its variable ("Target.BaseURL (ANVIL_BASE_URL)", withEnvNames). Skip
// ends the calling goroutine, so it comes last.
func reportVerdict(r verdictReporter, v conformance.Verdict) {
	r.Helper()
	for _, n := range v.Notes {
		r.Log(withEnvNames(n))
	}
	reason := withEnvNames(v.Reason)
	switch v.Outcome {
	case conformance.Fail:
		r.Error("FAIL: " + reason)
	case conformance.Skip:
		r.Skip("SKIP: " + reason)
	default:
		r.Log("PASS: " + reason)
	}
}
