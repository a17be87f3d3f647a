package report

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// TestAttempted checks what the report accounts for in every way a run
// ends: the requests, the indexes never sent, and whether they get a
// failure row.
func TestAttempted(t *testing.T) {
	ix := []int{0, 1, 2, 3}
	tests := []struct {
		name    string
		run     Run
		want    int
		unsent  []int
		rowless bool
	}{
		{"fixed count, finished", Run{Dispatched: 4}, 4, nil, false},
		{"fixed count, cancelled", Run{Dispatched: 2, Cancelled: true}, 4, []int{2, 3}, false},
		{"fixed count, stopped on failures", Run{Dispatched: 2, Stopped: true}, 2, nil, false},
		{"fixed count, cancelled after it stopped", Run{Dispatched: 2, Stopped: true, Cancelled: true}, 2, nil, false},
		{"fixed count, stopped early", Run{Dispatched: 1, Stopped: true, EarlyStop: "every request failed"}, 4, []int{1, 2, 3}, true},
		{"campaign, ended", Run{Dispatched: 3, Campaign: time.Minute, Expired: true}, 3, nil, false},
		{"campaign, cancelled", Run{Dispatched: 3, Campaign: time.Minute, Cancelled: true}, 4, []int{3}, false},
		{"campaign, cancelled at its end", Run{Dispatched: 3, Campaign: time.Minute, Cancelled: true, Expired: true}, 3, nil, false},
		{"campaign, cancelled with nothing left", Run{Dispatched: 4, Campaign: time.Minute, Cancelled: true}, 4, nil, false},
		{"campaign, stopped early", Run{Dispatched: 2, Campaign: time.Minute, Stopped: true, EarlyStop: "every request failed"}, 2, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run.Indexes = ix
			requests, unsent, rows := tt.run.Attempted()
			require.Equal(t, tt.want, requests)
			require.Equal(t, tt.unsent, unsent)
			require.Equal(t, !tt.rowless, rows)
		})
	}
}

// TestAssembleSourceBudget checks what a v1 reader learns of a Source's
// requests: the largest max_tokens sent, and no shared prefix unless one
// prompt was built in the plan's layout.
func TestAssembleSourceBudget(t *testing.T) {
	for _, prefixed := range []bool{false, true} {
		rep := &artifact.Report{MaxTokens: 64, SharedPrefixTokens: 100}
		results := []Result{
			{Index: 0, Row: &artifact.TimingRow{}, Source: &Source{MaxTokens: 16}},
			{Index: 1, Row: &artifact.TimingRow{RequestIndex: 1}, Source: &Source{MaxTokens: 200, Prefixed: prefixed}},
		}
		Assemble(Run{Report: rep, Contexts: []int{10, 20}, Indexes: []int{0, 1}, Dispatched: 2, Results: results,
			PromptSizing: &artifact.PromptSizing{Method: "reference"}, Connections: &artifact.Connections{}})
		require.Equal(t, 200, rep.MaxTokens)
		require.Equal(t, map[bool]int{false: 0, true: 100}[prefixed], rep.SharedPrefixTokens)
		require.Equal(t, map[int]int{10: 1, 20: 1}, rep.ContextDistribution)
		require.Equal(t, 16, *rep.AnvilGo.Requests[0].PlannedOutputTokens)
	}
}
