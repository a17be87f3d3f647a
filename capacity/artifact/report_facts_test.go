package artifact

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSentFailedRequestsBothShapes: the requests sent and failed add up
// with the requests sent whether the never-sent requests have cancelled
// failure rows (an interrupted run) or no rows at all (an early stop).
func TestSentFailedRequestsBothShapes(t *testing.T) {
	details := func(never ...int) []RequestDetail {
		var out []RequestDetail
		for i := range 4 {
			d := RequestDetail{RequestIndex: i, Outcome: "failed"}
			for _, n := range never {
				if n == i {
					d.Outcome = OutcomeNeverSent
				}
			}
			out = append(out, d)
		}
		return out
	}
	fails := func(idx ...int) []Failure {
		var out []Failure
		for _, i := range idx {
			out = append(out, Failure{RequestIndex: i, FailureClass: FailureCancelled})
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		r          Report
		sent, fail int
	}{
		{"interrupted: never-sent requests are cancelled rows",
			Report{Requests: 4, Failed: 4, Failures: fails(0, 1, 2, 3),
				AnvilGo: &Extension{Run: &RunSummary{SentRequests: 2}, Requests: details(2, 3)}}, 2, 2},
		{"early stop: never-sent requests have no rows",
			Report{Requests: 4, Failed: 3, Failures: fails(0, 1, 2),
				AnvilGo: &Extension{Run: &RunSummary{SentRequests: 3}, Requests: details(3)}}, 3, 3},
		{"no extension", Report{Requests: 4, Failed: 1, Failures: fails(0)}, 4, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.sent, tc.r.SentRequests())
			require.Equal(t, tc.fail, tc.r.SentFailedRequests())
			require.Equal(t, tc.fail, len(tc.r.SentFailures()))
		})
	}
}

// TestSentFailureClasses: rows count by failure class, else by error type,
// else as "-"; the cancelled row of a request never sent is left out, so
// the counts sum to SentFailedRequests.
func TestSentFailureClasses(t *testing.T) {
	r := &Report{
		Requests: 5, Failed: 4,
		Failures: []Failure{
			{RequestIndex: 0, FailureClass: FailureCancelled},
			{RequestIndex: 1, ErrorType: "ReadTimeout"},
			{RequestIndex: 2},
			{RequestIndex: 4, FailureClass: FailureCancelled},
		},
		AnvilGo: &Extension{Run: &RunSummary{SentRequests: 4}, Requests: []RequestDetail{
			{RequestIndex: 0, Outcome: "failed"}, {RequestIndex: 1, Outcome: "failed"},
			{RequestIndex: 2, Outcome: "failed"}, {RequestIndex: 3, Outcome: OutcomeSuccess},
			{RequestIndex: 4, Outcome: OutcomeNeverSent},
		}},
	}
	require.Equal(t, map[string]int{string(FailureCancelled): 1, "ReadTimeout": 1, "-": 1}, r.SentFailureClasses())
	require.Equal(t, 3, r.SentFailedRequests())
	require.Equal(t, 1, r.UnsentRequests())
	require.Equal(t, 4, r.FailedRequests())
}
