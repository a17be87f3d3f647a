package capacity_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// replay is a Source of recorded requests (a trace): each its own prompt
// size and max_tokens.
type replay []struct{ prompt, maxTokens int }

func (r replay) Request(_ context.Context, i int) (capacity.Request, error) {
	return capacity.Request{PromptTokens: r[i].prompt, MaxTokens: r[i].maxTokens}, nil
}

// Example_seams plugs a Source, a Schedule and an Observer into a run: the
// requests of a recorded trace, each due at its offset (all at once here),
// and an observer that records when the measured phase started.
func Example_seams() {
	srv := fakeserver.New(fakeserver.Fast())
	defer srv.Close()

	trace := replay{{512, 40}, {1024, 48}, {2048, 64}}
	offsets := []time.Duration{0, 0, 0}
	var started time.Time
	obs := capacity.ObserverFunc(func(_ context.Context, at time.Time) func(*artifact.Report) {
		started = at
		return func(rep *artifact.Report) {
			fmt.Println("observed the phase of the report:", started.UnixNano() == rep.StartedAtUnixNS)
		}
	})
	rep, err := capacity.Run(context.Background(),
		capacity.Target{BaseURL: srv.URL + "/v1", Engine: "fake", GPU: "none"},
		capacity.Workload{
			Requests: len(trace), Concurrency: 3,
			Source:    trace,
			Schedule:  capacity.ScheduleFunc(func(_ context.Context, i int) capacity.Due { return capacity.DueAt(offsets[i]) }),
			Observers: []capacity.Observer{obs},
		})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("completed:", rep.Completed, "of", rep.Requests)
	for _, row := range rep.RequestTimings {
		fmt.Println("request", row.RequestIndex, "planned", row.PlannedContextTokens, "tokens, output at most", trace[row.RequestIndex].maxTokens, ":", *row.OutputTokens <= trace[row.RequestIndex].maxTokens)
	}
	// Output:
	// observed the phase of the report: true
	// completed: 3 of 3
	// request 0 planned 512 tokens, output at most 40 : true
	// request 1 planned 1024 tokens, output at most 48 : true
	// request 2 planned 2048 tokens, output at most 64 : true
}
