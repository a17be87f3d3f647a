package reporters

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// TestSentFailedRequestsBothShapes: the requests sent and failed add up
// with the requests sent whether the never-sent requests have cancelled
// failure rows (an interrupted run) or no rows at all (an early stop).
func TestSentFailedRequestsBothShapes(t *testing.T) {
	details := func(never ...int) []artifact.RequestDetail {
		var out []artifact.RequestDetail
		for i := range 4 {
			d := artifact.RequestDetail{RequestIndex: i, Outcome: "failed"}
			for _, n := range never {
				if n == i {
					d.Outcome = artifact.OutcomeNeverSent
				}
			}
			out = append(out, d)
		}
		return out
	}
	fails := func(idx ...int) []artifact.Failure {
		var out []artifact.Failure
		for _, i := range idx {
			out = append(out, artifact.Failure{RequestIndex: i, FailureClass: artifact.FailureCancelled})
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		r          artifact.Report
		sent, fail int
	}{
		{"interrupted: never-sent requests are cancelled rows",
			artifact.Report{Requests: 4, Failed: 4, Failures: fails(0, 1, 2, 3),
				AnvilGo: &artifact.Extension{Run: &artifact.RunSummary{SentRequests: 2}, Requests: details(2, 3)}}, 2, 2},
		{"early stop: never-sent requests have no rows",
			artifact.Report{Requests: 4, Failed: 3, Failures: fails(0, 1, 2),
				AnvilGo: &artifact.Extension{Run: &artifact.RunSummary{SentRequests: 3}, Requests: details(3)}}, 3, 3},
		{"no extension", artifact.Report{Requests: 4, Failed: 1, Failures: fails(0)}, 4, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.sent, SentRequests(&tc.r))
			require.Equal(t, tc.fail, SentFailedRequests(&tc.r))
			require.Equal(t, tc.fail, len(SentFailures(&tc.r)))
		})
	}
}
