package capacity

import (
	"fmt"
	"slices"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
)

// maxPlanDeviation is the share by which the server's count of a measured
// prompt may miss its planned context before the run says so
// (anvil_go.prompt_sizing.warning, the log and the summary): a count
// below (1 - maxPlanDeviation) or above (1 + maxPlanDeviation) times the
// plan. Reference sizing at 3.0 characters per token lands within a few
// percent on common tokenizers (the seed artifact's model: -4.9 %); a
// tokenizer that counts the filler at 1.1 characters per token gives
// +173 %, a prompt cut to the window far below the plan.
const maxPlanDeviation = 0.25

// checkPlan sets the plan check of ps from the measured results: how many
// prompts the server counted, the median of counted / planned, how many
// missed the plan by more than maxPlanDeviation, and, when any did, the
// warning naming how far and what to do. Prompts counted short of their
// plan that all count the same are named as what a server cutting prompts
// to that window answers (Ollama reports its window for any longer
// prompt), the case a declared window above the served one hides from the
// truncation checks. A response failed as invalid_usage is not counted.
func checkPlan(ps *artifact.PromptSizing, p *plan, results []result) {
	var ratios []float64
	refused := 0
	var short []int // the counts of prompts counted short of their plan
	for _, res := range results {
		if res.promptTokens == nil {
			continue
		}
		if res.fail != nil && res.fail.ErrorType == client.ErrorTypeInvalidUsage {
			// The usage object was impossible (a negative count, more
			// completion tokens than max_tokens allows, ...): its prompt
			// count cannot judge the plan, and advice to size prompts by
			// it would hide the failure the run names.
			continue
		}
		r := float64(*res.promptTokens) / float64(p.Contexts[res.index])
		ratios = append(ratios, r)
		if r < 1-maxPlanDeviation || r > 1+maxPlanDeviation {
			ps.OffPlanRequests++
			if res.row == nil && res.fail != nil && res.fail.FailureClass == artifact.FailureHTTPError {
				refused++
			}
			if r < 1 {
				short = append(short, *res.promptTokens)
			}
		}
	}
	ps.CountedRequests = len(ratios)
	if len(ratios) == 0 {
		return
	}
	ps.SetCountedOverPlanned(ratios)
	median := *ps.CountedOverPlanned
	if ps.OffPlanRequests == 0 {
		return
	}
	w := fmt.Sprintf("the server counted the prompts at %.2f x their plan (median of %d counted; %d off by more than %.0f%%",
		median, len(ratios), ps.OffPlanRequests, maxPlanDeviation*100)
	if refused > 0 {
		w += fmt.Sprintf(", %d of them refused over the window", refused)
	}
	w += ")"
	if len(short) > 1 && slices.Min(short) == slices.Max(short) {
		w += fmt.Sprintf("; the %d counted short of their plan all counted exactly %d tokens: a server that cuts prompts to a window of %d answers so (is Target.MaxModelLen above the window it serves?)",
			len(short), short[0], short[0])
	}
	if ps.Method == string(promptSizingReference) {
		w += fmt.Sprintf(": its tokenizer does not count this filler at about %.1f characters per token; size the prompts with the server's own counts: exact prompt sizing (Workload.PromptSizing %q; ANVIL_PROMPT_SIZING=exact for go test -bench)",
			promptCharsPerToken, promptSizingExact)
	} else {
		w += ": the measured prompts did not count as exact sizing learned (a server that cuts prompts to its window, or counts a request differently from its calibration); see capacity/PROTOCOL.md#exact-token-sizing"
	}
	ps.Warning = &w
}
