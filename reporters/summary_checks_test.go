package reporters

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// failLastRow turns the seed's last request into a failure of class
// class that kept its timing row, as the engine records a response that
// arrived but broke a contract; edit changes the kept row first.
func failLastRow(t *testing.T, class artifact.FailureClass, edit func(*artifact.TimingRow)) *artifact.Report {
	t.Helper()
	r := loadReport(t, seedPath)
	last := r.RequestTimings[len(r.RequestTimings)-1]
	edit(&last)
	r.RequestTimings = r.RequestTimings[:len(r.RequestTimings)-1]
	r.Failures = append(r.Failures, artifact.Failure{
		RequestIndex: last.RequestIndex, PlannedContextTokens: last.PlannedContextTokens,
		FailureClass: class, ErrorType: string(class), ErrorMessage: "contract check failed",
		ResponseReceived: true, ResponseTiming: &last,
	})
	r.Completed, r.Failed = len(r.RequestTimings), 1
	r.PerformanceEligible = false
	require.NoError(t, r.Recompute())
	return r
}

func summaryOf(t *testing.T, r *artifact.Report) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, WriteSummary(&buf, r))
	return buf.String()
}

// TestSummaryCanariesCountFailedRequests: a request_canary_failed failure
// is a checked response; "6/6 passed" beside it would hide the very
// failure the check exists for.
func TestSummaryCanariesCountFailedRequests(t *testing.T) {
	r := failLastRow(t, artifact.FailureRequestCanary, func(row *artifact.TimingRow) {
		row.RequestCanary.MarkerAtStart, row.RequestCanary.Passed = false, false
	})
	require.Equal(t, 5, r.Metrics.RequestCanarySamples, "the v1 metric counts successful rows only")
	out := summaryOf(t, r)
	require.Contains(t, out, "failures request_canary_failed=1\n")
	require.Contains(t, out, "request canaries 5/6 passed (1 of them failed requests, 0 of those passed)\n")

	// A failure without a timing row carries its check on the failure.
	r.Failures[0].RequestCanary, r.Failures[0].ResponseTiming = r.Failures[0].ResponseTiming.RequestCanary, nil
	require.Contains(t, summaryOf(t, r), "request canaries 5/6 passed (1 of them failed requests, 0 of those passed)\n")
}

func TestSummaryControlledOutputCountsFailedRequests(t *testing.T) {
	yes, no := true, false
	r := loadReport(t, seedPath)
	r.ControlledOutputPolicy = "strict"
	for i := range r.RequestTimings {
		r.RequestTimings[i].ControlledOutput = &artifact.ControlledOutputCheck{
			RequestedWords: 16, ObservedCodeWords: 16, CaptureComplete: true, ExactAdherence: &yes, Policy: "strict", Passed: true,
		}
	}
	require.NoError(t, r.Recompute())
	r = func() *artifact.Report {
		// Write and read back: the summary must work from the file.
		var buf bytes.Buffer
		_, err := r.WriteTo(&buf)
		require.NoError(t, err)
		back, err := artifact.Read(&buf)
		require.NoError(t, err)
		return back
	}()
	last := &r.RequestTimings[len(r.RequestTimings)-1]
	last.ControlledOutput.ObservedCodeWords, last.ControlledOutput.ExactAdherence, last.ControlledOutput.Passed = 15, &no, false
	row := *last
	r.RequestTimings = r.RequestTimings[:len(r.RequestTimings)-1]
	r.Failures = []artifact.Failure{{RequestIndex: row.RequestIndex, FailureClass: artifact.FailureControlledOutput, ResponseTiming: &row}}
	r.Completed, r.Failed, r.PerformanceEligible = 5, 1, false
	require.NoError(t, r.Recompute())
	out := summaryOf(t, r)
	require.Contains(t, out, "controlled output (strict) exact 5/6, unobservable 0, rate 0.833 (1 of them failed requests, 0 of those passed)\n")
}

// TestSummaryLabelsOutputCounts: a row without usage has output_tokens
// null, and an older artifact may hold a chunk count there; neither is
// labelled as completion tokens.
func TestSummaryLabelsOutputCounts(t *testing.T) {
	r := loadReport(t, seedPath)
	out := summaryOf(t, r)
	require.Contains(t, out, "    completion tokens    tok  6 ")
	require.NotContains(t, out, "rows without usage")

	r.RequestTimings[0].OutputTokens = nil
	r.RequestTimings[0].OutputTokenSource = artifact.SourceContentChunks
	require.NoError(t, r.Recompute())
	out = summaryOf(t, r)
	require.Contains(t, out, "    completion tokens    tok  5 ")
	require.Contains(t, out, "completion tokens: from usage of 5 rows; 1 rows without usage (output counted in content chunks only)\n")

	r.RequestTimings[0].OutputTokens = new(r.RequestTimings[0].ContentChunks)
	require.NoError(t, r.Recompute())
	out = summaryOf(t, r)
	require.NotContains(t, out, "completion tokens")
	require.Contains(t, out, "output (tokens or chunks)  tok|chunk  6 ")
	require.Contains(t, out, "output: 5 rows count tokens from usage, 1 count content chunks (no usage), 0 have no count\n")
}
