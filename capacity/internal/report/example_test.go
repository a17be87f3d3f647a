package report_test

import (
	"fmt"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/report"
)

// A fixed-count run of three requests cancelled after two were
// dispatched: one answered, one failed, and the third, never sent, is a
// cancelled failure of the report.
func ExampleAssemble() {
	start := time.Now()
	ok := report.Result{
		Index: 0,
		Row:   &artifact.TimingRow{RequestIndex: 0, PlannedContextTokens: 512},
		Clock: client.Clock{Taken: start, Sent: start, End: start.Add(time.Second)},
	}
	failed := report.Result{
		Index: 1,
		Fail:  &artifact.Failure{RequestIndex: 1, PlannedContextTokens: 1024, FailureClass: artifact.FailureHTTPError},
		Clock: client.Clock{Taken: start, Sent: start, End: start.Add(time.Second)},
	}
	rep := &artifact.Report{Schema: artifact.Schema}
	run := report.Run{
		Report: rep, Start: start, Contexts: []int{512, 1024, 2048}, Indexes: []int{0, 1, 2}, Dispatched: 2,
		Results: []report.Result{ok, failed}, Cancelled: true, API: artifact.APIChat,
		PromptSizing: &artifact.PromptSizing{Method: "reference"}, Connections: &artifact.Connections{},
	}
	report.Assemble(run)
	fmt.Println("requests", rep.Requests, "completed", rep.Completed, "failed", rep.Failed)
	for _, f := range rep.Failures {
		fmt.Println("failure", f.RequestIndex, f.FailureClass)
	}
	x := rep.AnvilGo
	fmt.Println("never sent", x.Run.NeverSentRequests, "sent", x.Run.SentRequests, "interrupted", x.Run.Interrupted)
	for _, d := range x.Requests {
		fmt.Println("request", d.RequestIndex, d.Outcome)
	}
	// Output:
	// requests 3 completed 1 failed 2
	// failure 1 http_error
	// failure 2 cancelled
	// never sent 1 sent 2 interrupted true
	// request 0 success
	// request 1 http_error
	// request 2 never_sent
}
