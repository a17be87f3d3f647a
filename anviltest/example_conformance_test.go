package anviltest_test

import (
	"testing"

	"github.com/anvilbench/anvil/anviltest"
	"github.com/anvilbench/anvil/anviltest/conformance"
)

// TestSuiteInYourPackage is the test function the README shows for
// your own package, run here against the embedded fake (an Example cannot
// hold the *testing.T the suite runs its subtests on): Conformance runs
// inside an ordinary test function, go test -run Conformance -v prints one
// PASS, FAIL or SKIP per check with its reason, and WithRequired makes an
// optional feature mandatory for this deployment (check names are those
// of conformance.Checks). WithEnvironment is for this package's own test
// run only: it runs the suite against the embedded fake whatever ANVIL_*
// variables the shell holds (in your package, leave it out to read
// ANVIL_BASE_URL and the rest), with ANVIL_OUT keeping the verdict files
// out of the source tree. Its name leaves out "Conformance", so the
// README's go test -run Conformance selects only TestConformance, the
// suite against the endpoint ANVIL_BASE_URL names.
func TestSuiteInYourPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole suite against the embedded fake")
	}
	env := map[string]string{"ANVIL_OUT": t.TempDir()}
	rep := anviltest.Conformance(t, anviltest.WithRequired("prefix_cache"),
		anviltest.WithEnvironment(func(name string) string { return env[name] }))
	if v, ok := rep.Verdict("usage"); ok && v.Outcome == conformance.Fail {
		t.Log("benchmarks of this endpoint count output in content chunks")
	}
	// What the example relies on: every check ran, and the embedded fake,
	// which caches prefixes, passes the required one.
	if got, want := len(rep.Verdicts), len(conformance.Checks()); got != want {
		t.Fatalf("%d verdicts, want one per check (%d)", got, want)
	}
	if v, _ := rep.Verdict("prefix_cache"); v.Outcome != conformance.Pass {
		t.Errorf("required %s: %s: %s", v.Check, v.Outcome, v.Reason)
	}
}
