package anviltest_test

import (
	"os"
	"testing"
	"time"

	"github.com/anvilbench/anvil/anviltest"
)

// Conformance runs inside an ordinary test function; go test -run
// Conformance -v prints one PASS, FAIL or SKIP per check with its reason.
// WithRequired makes optional features mandatory for this deployment.
func ExampleConformance() {
	_ = func(t *testing.T) {
		rep := anviltest.Conformance(t, anviltest.WithRequired(anviltest.CheckPrefixCache))
		if v, ok := rep.Verdict(anviltest.CheckUsage); ok && v.Outcome == anviltest.Fail {
			t.Log("benchmarks of this endpoint count output in content chunks")
		}
	}
}

// The Markdown verdict file is a table of the checks that ran.
func ExampleConformanceReport_WriteMarkdown() {
	rep := &anviltest.ConformanceReport{
		BaseURL:   "http://localhost:8000/v1",
		Model:     "qwen3-8b",
		StartedAt: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC),
		Verdicts: []anviltest.Verdict{
			{Check: anviltest.CheckUsage, Outcome: anviltest.Fail, Reason: "no usage object, although the request set stream_options.include_usage"},
			{Check: anviltest.CheckDeterminism, Outcome: anviltest.Skip, Reason: "temperature 0 twice gave different outputs"},
		},
	}
	if err := rep.WriteMarkdown(os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// # Conformance of qwen3-8b at http://localhost:8000/v1
	//
	// 2026-12-01T09:00:00Z: 0 pass, 1 fail, 1 skip.
	//
	// | check | verdict | reason |
	// |---|---|---|
	// | usage | FAIL | no usage object, although the request set stream_options.include_usage |
	// | determinism | SKIP | temperature 0 twice gave different outputs |
}
