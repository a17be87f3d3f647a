package artifact

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// counts is a planCount for each (planned, counted) pair.
func counts(pairs ...int) []planCount {
	var out []planCount
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, planCount{Planned: pairs[i], Counted: pairs[i+1]})
	}
	return out
}

// TestCheckPlanExact: under exact sizing a prompt more than 2 % (and 4
// tokens) off its plan is off plan, the warning says so and the run is
// not eligible; max_relative_error, off_plan_requests and warning agree;
// a request planned below its least prompt is unsizable, not judged.
func TestCheckPlanExact(t *testing.T) {
	for _, tc := range []struct {
		name       string
		counts     []planCount
		off, unfit int
		maxErr     float64
	}{
		{"on plan", counts(1000, 1000, 2000, 2010), 0, 0, 0.005},
		{"20 % over", counts(1000, 1200, 2000, 2000), 1, 0, 0.2},
		{"3 % over", counts(1000, 1030), 1, 0, 0.03},
		{"4 tokens are within the tolerance", counts(40, 44), 0, 0, 0.1},
		{"5 tokens are not", counts(40, 45), 1, 0, 0.125},
		{"unsizable", []planCount{{Planned: 2, Counted: 11, Least: 11}, {Planned: 500, Counted: 500}}, 0, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &PromptSizing{Method: "exact", Source: new("tokenize")}
			p.checkPlan(tc.counts)
			require.Equal(t, exactTolerance, p.Tolerance)
			require.Equal(t, len(tc.counts), p.CountedRequests)
			require.Equal(t, tc.off, p.OffPlanRequests)
			require.Equal(t, tc.unfit, p.UnsizableRequests)
			require.InDelta(t, tc.maxErr, *p.MaxRelativeError, 1e-12)
			require.Equal(t, tc.off > 0, p.Warning != nil, "the warning agrees with off_plan_requests")
			require.Equal(t, tc.off > 0, p.OffPlan())
			if p.Warning != nil {
				require.Contains(t, *p.Warning, fmt.Sprintf("exact sizing missed the plan: the server counted %d of", tc.off))
				require.Contains(t, *p.Warning, "not performance eligible")
			}
		})
	}
}

// TestCheckPlanReference: under reference sizing the chat template's
// tokens are estimated and taken off before a count is judged, and the
// run is off plan on the median, on more than 5 % off plan, or on prompts
// cut to one count; a few outliers do not make it so.
func TestCheckPlanReference(t *testing.T) {
	// An Azure-like trace on a server with 9 tokens of template: 0.96 of
	// each plan, plus the template.
	azure := func(extra ...int) []planCount {
		var c []planCount
		for _, p := range []int{2, 2, 10, 13, 21, 40, 64, 150, 300, 600, 999, 1200, 2000, 3000, 4107} {
			c = append(c, planCount{Planned: p, Counted: 9 + p*96/100}, planCount{Planned: p + 1, Counted: 9 + (p+1)*96/100})
		}
		return append(c, counts(extra...)...)
	}
	for _, tc := range []struct {
		name     string
		counts   []planCount
		template *int
		off      int
		warn     string
	}{
		{"the template accounted for", azure(), new(9), 0, ""},
		{"one outlier of 31", azure(1000, 1600), new(9), 1, ""},
		{"two of 32", azure(1000, 1600, 1000, 1700), new(9), 2, "2 off by more than 25%, 8 tokens of chat template taken off each count): more prompts than"},
		{"the median off", counts(4096, 11300, 4096, 11300, 4096, 11290, 4096, 11310), nil, 4,
			"the server counted the prompts at 2.76 x their plan (median of 4 counted; 4 off by more than 25%)"},
		{"cut to one window", counts(8000, 8000, 9000, 4096, 10000, 4096, 8500, 8500, 8200, 8200), nil, 2,
			"all counted exactly 4096 tokens"},
		{"no spread, no template", counts(4096, 3900, 4096, 3890, 4096, 3910, 4096, 3905), nil, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &PromptSizing{Method: "reference"}
			p.checkPlan(tc.counts)
			require.Equal(t, referenceTolerance, p.Tolerance)
			if tc.template == nil {
				require.Nil(t, p.TemplateTokens)
			} else {
				require.NotNil(t, p.TemplateTokens)
				require.InDelta(t, *tc.template, *p.TemplateTokens, 1)
			}
			require.Equal(t, tc.off, p.OffPlanRequests)
			if tc.warn == "" {
				require.Nil(t, p.Warning)
				return
			}
			require.NotNil(t, p.Warning)
			require.Contains(t, *p.Warning, tc.warn)
			require.Contains(t, *p.Warning, "ANVIL_PROMPT_SIZING=exact")
			require.False(t, p.OffPlan(), "a reference run off plan stays eligible")
		})
	}
}

// TestPlanCounts: a merge judges every shard's requests[] as the run did:
// those the server counted, less the invalid_usage ones, refusals and
// unsizable requests marked.
func TestPlanCounts(t *testing.T) {
	details := []RequestDetail{
		{RequestIndex: 0, Outcome: OutcomeSuccess, PlannedPromptTokens: 100, CountedPromptTokens: new(101)},
		{RequestIndex: 1, Outcome: string(FailureHTTPError), PlannedPromptTokens: 9000, CountedPromptTokens: new(9100)},
		{RequestIndex: 2, Outcome: string(FailureStreamValidation), PlannedPromptTokens: 100, CountedPromptTokens: new(-3)},
		{RequestIndex: 3, Outcome: OutcomeSuccess, PlannedPromptTokens: 2, CountedPromptTokens: new(11), LeastPromptTokens: new(11)},
		{RequestIndex: 4, Outcome: OutcomeNeverSent, PlannedPromptTokens: 100},
	}
	failures := []Failure{{RequestIndex: 2, ErrorType: ErrorTypeInvalidUsage}}
	require.Equal(t, []planCount{
		{Planned: 100, Counted: 101},
		{Planned: 9000, Counted: 9100, Refused: true},
		{Planned: 2, Counted: 11, Least: 11},
	}, planCounts(details, failures))
}
