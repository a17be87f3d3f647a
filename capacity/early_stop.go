package capacity

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
)

// earlyStopRequests is the number of measured requests that, when they are
// the first to end and all fail for a reason that will not change
// (permanentFailure), stop the run early (capacity/PROTOCOL.md#early-stop):
// every further request would fail the same way and cost the server the
// same time. Workload.KeepGoing turns the rule off.
const earlyStopRequests = 4

// ErrStoppedEarly is wrapped by Run's error when the first measured
// requests all failed for a reason that will not change (a 4xx, a prompt
// over or truncated at the context window): the report of what ran is
// returned with it, not performance eligible, its never-sent requests in
// anvil_go.run.never_sent_requests.
var ErrStoppedEarly = errors.New("capacity: run stopped early: the first requests all failed for a reason that will not change")

// permanentFailure reports whether f failed for a reason no retry of the
// same workload changes: an HTTP 4xx other than 408 (Request Timeout) and
// 429 (Too Many Requests), which say try again, or a prompt the server
// truncated (prompt_truncated). A 401, 403 or 404 before any success
// stops the run at once, as a refusal, before this rule applies.
func permanentFailure(f *artifact.Failure) bool {
	if f.ErrorType == client.ErrorTypePromptTruncated {
		return true
	}
	if f.HTTPStatus == nil {
		return false
	}
	st := *f.HTTPStatus
	return st >= 400 && st < 500 && st != http.StatusRequestTimeout && st != http.StatusTooManyRequests
}

// earlyStopOn applies the early stop to a measured failure; r.mu is held.
// The run stops dispatching when the first earlyStopRequests measured
// requests to end all failed permanently (no success before them);
// requests in flight finish.
func (r *runner) earlyStopOn(f *artifact.Failure) {
	if r.keepGoing || r.earlyStop != "" || r.succeeded > 0 {
		return
	}
	if !permanentFailure(f) || r.permanent != r.failed-1 {
		return // a failure that may change (or one came before) ends the rule
	}
	r.permanent++
	if r.permanent < earlyStopRequests || r.dispatched >= r.n {
		return
	}
	first := r.results[0].Fail // every measured result so far is such a failure
	r.stopped = true
	r.earlyStop = fmt.Sprintf("the first %d measured requests all failed for a reason that will not change; the first: request %d: %s: %s (set Workload.KeepGoing to send every request anyway)",
		r.permanent, first.RequestIndex, first.FailureClass, first.ErrorMessage)
}

// runnerFailure is the runner_error row of measured request i whose body
// could not be built from what the Source described: error_type
// over_window for a request planned at or above the window, else
// source_request.
func runnerFailure(i, planned int, err error, scrub func(string) string) *artifact.Failure {
	f := &artifact.Failure{
		RequestIndex: i, PlannedContextTokens: planned, FailureClass: artifact.FailureRunnerError,
		ErrorType: client.ErrorTypeSourceRequest,
	}
	var ow *overWindowError
	if errors.As(err, &ow) {
		f.ErrorType = client.ErrorTypeOverWindow
	}
	msg := scrub(err.Error())
	f.SetErrorMessage(msg)
	return f
}
