package reporters

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// hostileTerm is text a server (or a hand-edited artifact) can put into every
// string a report prints: clear screen, NUL, a C1 CSI, a bidi override, a
// forged line and invalid UTF-8.
const hostileTerm = "x\x1b[2J\x00\u009b31m\u202eevil\nBenchmarkForged 1 1 ns/op\r\xff"

// hostileReport is the seed artifact with hostileTerm text in every string
// field the summary, the benchfmt conversion and the comparison print.
func hostileReport(t *testing.T) *artifact.Report {
	t.Helper()
	r := loadReport(t, seedPath)
	engine, gpu, effort := "eng"+hostileTerm, "gpu"+hostileTerm, "low"+hostileTerm
	r.Model, r.Engine, r.GPU = "model"+hostileTerm, &engine, &gpu
	r.MeasurementProtocol = "proto" + hostileTerm
	r.RunID, r.StartedAt, r.FinishedAt = "run"+hostileTerm, "start"+hostileTerm, "end"+hostileTerm
	r.PromptCacheMode = "cache" + hostileTerm
	r.ServeFlags.ThinkingMode = "think" + hostileTerm
	r.ServeFlags.ReasoningEffort = &effort
	r.ResponseWords, r.ControlledOutputPolicy = 16, "policy"+hostileTerm
	r.MetricPopulation.P99Interpretation = "p99" + hostileTerm
	r.Failures = []artifact.Failure{{RequestIndex: 6, FailureClass: artifact.FailureClass("class" + hostileTerm),
		ErrorType: "type" + hostileTerm, ErrorMessage: "message" + hostileTerm}}
	r.Requests, r.Failed = 7, 1
	return r
}

func TestSummaryIsSafeForTheTerminal(t *testing.T) {
	out := summaryOf(t, hostileReport(t))
	safeForTerminal(t, out, true)
	require.Contains(t, out, `model modelx\x1b[2J\x00\u009b31m\u202eevil\x0aBenchmarkForged 1 1 ns/op\x0d\xff  engine eng`)
	require.Contains(t, out, `failures classx\x1b[2J`)
	require.NotContains(t, out, "\nBenchmarkForged")
}

func TestBenchfmtIsSafeAndValid(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, writeBenchfmt(&buf, hostileReport(t)))
	out := buf.String()
	safeForTerminal(t, strings.ReplaceAll(out, "\t", " "), true)
	p := parseBench(t, buf.Bytes())
	require.Empty(t, p.errs)
	require.Len(t, p.results, 1, "the forged line is no result:\n%s", out)
	cfg := benchConfigMap(p.results[0])
	require.Equal(t, `modelx\x1b[2J\x00\u009b31m\u202eevil BenchmarkForged 1 1 ns/op \xff`, cfg[configModel],
		"one line: whitespace runs become one space, then controls are escaped")
	require.Contains(t, cfg[configWorkload], `thinking=thinkx\x1b[2J`)

	_, err := BenchResult(hostileReport(t), "BenchmarkX/\x1b[2J")
	require.ErrorContains(t, err, "control characters")
}

func TestComparisonIsSafeForTheTerminal(t *testing.T) {
	// Workloads differ: the refusal names the values.
	_, err := Compare([]*artifact.Report{loadReport(t, seedPath)}, []*artifact.Report{hostileReport(t)})
	require.Error(t, err)
	require.Contains(t, err.Error(), `\u001b[2J\u0000\u009b31m\u202eevil`)
	safeForTerminal(t, err.Error(), true)

	// One workload, a hostile setup: the provenance lines.
	r := loadReport(t, seedPath)
	engine := "eng" + hostileTerm
	r.Model, r.Engine = "model"+hostileTerm, &engine
	c, err := Compare([]*artifact.Report{loadReport(t, seedPath)}, []*artifact.Report{r})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, WriteComparison(&buf, c))
	require.Contains(t, buf.String(), `engx\u001b[2J\u0000\u009b31m\u202eevil\nBenchmarkForged`)
	safeForTerminal(t, buf.String(), true)
}
