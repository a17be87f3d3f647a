package artifact

import (
	"fmt"
	"math"
	"slices"

	"github.com/anvilbench/anvil/stats"
)

// The plan check of anvil_go.prompt_sizing (capacity/PROTOCOL.md#plan-check):
// one rule per sizing, the same for a run and for the merge of its shards.
const (
	// exactTolerance is the share by which the server's count of a
	// measured prompt may miss its plan under exact sizing before the
	// prompt is off plan: any such prompt makes the run say so and leaves
	// it not performance eligible. Exact sizing lands on the count with a
	// tokenizer endpoint, and within about 0.2 % of the calibrated sizes
	// without one.
	exactTolerance = 0.02
	// referenceTolerance is the share by which the server's count of a
	// measured prompt, less the chat template's tokens, may miss its plan
	// under reference sizing before the prompt is off plan. Reference
	// sizing at 3.0 characters per token lands within a few percent on
	// common tokenizers (the seed artifact's model: -4.9 %); a tokenizer
	// that counts the filler at 1.1 characters per token gives +173 %, a
	// prompt cut to the window far below the plan.
	referenceTolerance = 0.25
	// toleranceTokens is the least miss, in tokens, that makes a prompt
	// off plan whatever its size: calibration reads a text's count off
	// its length, and a text cut within a line of digits counts a few
	// tokens more or less than its length says (a tokenizer endpoint
	// lands on the count, or one token off when one more character is two
	// more tokens).
	toleranceTokens = 4
	// maxOffPlanShare is the share of off-plan prompts above which a
	// reference run is off plan although their median is on plan.
	maxOffPlanShare = 0.05
	// maxTemplateEstimate bounds the chat template's tokens a reference
	// run's counts are believed to hold (templateEstimate).
	maxTemplateEstimate = 256
)

// planCount is one measured prompt the server counted, as the plan check
// judges it: its plan, the server's count (usage.prompt_tokens, or an
// over-window refusal's n_prompt_tokens), and, under exact sizing, what
// its least prompt counts when that is more than its plan (it is then
// unsizable).
type planCount struct {
	Planned, Counted int
	Least            int  // above Planned: the request was unsizable
	Refused          bool // refused over the window
}

// planCounts are the planCounts of the measured requests of details:
// every one the server counted, less those whose index failures names
// with error_type invalid_usage (its usage is impossible, so its prompt
// count judges no plan).
func planCounts(details []RequestDetail, failures []Failure) []planCount {
	invalid := map[int]bool{}
	for _, f := range failures {
		if f.ErrorType == ErrorTypeInvalidUsage {
			invalid[f.RequestIndex] = true
		}
	}
	var out []planCount
	for _, d := range details {
		if d.CountedPromptTokens == nil || invalid[d.RequestIndex] {
			continue
		}
		c := planCount{Planned: d.PlannedPromptTokens, Counted: *d.CountedPromptTokens, Refused: d.Outcome == string(FailureHTTPError)}
		if d.LeastPromptTokens != nil {
			c.Least = *d.LeastPromptTokens
		}
		out = append(out, c)
	}
	return out
}

// CheckPlan sets the plan check of p from the measured requests of a run
// (details, anvil_go.requests, and failures, whose invalid_usage rows are
// not counted), or of all shards of one: Tolerance and
// ToleranceTokens by p.Method, CountedRequests, UnsizableRequests, MaxRelativeError,
// CountedOverPlanned, OffPlanRequests, Warning and, for reference sizing,
// TemplateTokens.
//
// A prompt is off plan when its count misses the plan by more than
// Tolerance of the plan and more than ToleranceTokens tokens. Under exact sizing
// the plan is what the server counts, template included: any off-plan
// prompt makes the run off plan (OffPlan), and it is not performance
// eligible; an unsizable request is counted apart and not judged. Under
// reference sizing the plan is the prompt's text and the chat template's
// tokens come on top: they are estimated from the counts (templateEstimate) and taken off each count
// before it is judged, and the run is off plan when the median of counted
// / planned misses by more than referenceTolerance, when more than 5 % of
// the prompts do, or when two or more prompts counted short of their plan
// all count the same: what a server that cuts prompts to that window
// answers (Ollama reports its window for any longer prompt), the case a
// declared window above the served one hides from the truncation checks.
func (p *PromptSizing) CheckPlan(details []RequestDetail, failures []Failure) {
	p.checkPlan(planCounts(details, failures))
}

// checkPlan is CheckPlan of the counted prompts.
func (p *PromptSizing) checkPlan(counts []planCount) {
	exact := p.Method == "exact"
	p.Tolerance, p.ToleranceTokens = referenceTolerance, toleranceTokens
	if exact {
		p.Tolerance = exactTolerance
	}
	p.CountedRequests, p.UnsizableRequests, p.OffPlanRequests = len(counts), 0, 0
	p.MaxRelativeError, p.CountedOverPlanned, p.Warning = nil, nil, nil
	var judged []planCount
	for _, c := range counts {
		if exact && c.Least > c.Planned {
			p.UnsizableRequests++
			continue
		}
		if c.Planned > 0 {
			judged = append(judged, c)
		}
	}
	template := 0
	if !exact {
		p.TemplateTokens = templateEstimate(judged)
		if p.TemplateTokens != nil {
			template = *p.TemplateTokens
		}
	}
	var ratios []float64
	refused := 0
	var short []int // the counts of off-plan prompts counted short of their plan
	for _, c := range judged {
		r := float64(c.Counted-template) / float64(c.Planned)
		ratios = append(ratios, r)
		e := math.Abs(r - 1)
		if p.MaxRelativeError == nil || e > *p.MaxRelativeError {
			p.MaxRelativeError = &e
		}
		if miss := abs(c.Counted - template - c.Planned); miss > p.ToleranceTokens && e > p.Tolerance {
			p.OffPlanRequests++
			if c.Refused {
				refused++
			}
			if r < 1 {
				short = append(short, c.Counted)
			}
		}
	}
	if len(ratios) == 0 {
		return
	}
	p.SetCountedOverPlanned(ratios)
	median := *p.CountedOverPlanned
	cut := len(short) > 1 && slices.Min(short) == slices.Max(short)
	if p.OffPlanRequests == 0 {
		return
	}
	if !exact && math.Abs(median-1) <= p.Tolerance && float64(p.OffPlanRequests) <= maxOffPlanShare*float64(len(ratios)) && !cut {
		return // a few outliers of a run on plan
	}
	pct := fmt.Sprintf("%.0f%%", p.Tolerance*100)
	var w string
	if exact {
		w = fmt.Sprintf("exact sizing missed the plan: the server counted %d of %d prompts more than %s off their plan (median %.3f x plan, the largest %.1f%% off",
			p.OffPlanRequests, len(ratios), pct, median, *p.MaxRelativeError*100)
	} else {
		w = fmt.Sprintf("the server counted the prompts at %.2f x their plan (median of %d counted; %d off by more than %s",
			median, len(ratios), p.OffPlanRequests, pct)
		if template > 0 {
			w += fmt.Sprintf(", %d tokens of chat template taken off each count", template)
		}
	}
	if refused > 0 {
		w += fmt.Sprintf(", %d of them refused over the window", refused)
	}
	w += ")"
	if cut {
		w += fmt.Sprintf("; the %d counted short of their plan all counted exactly %d tokens: a server that cuts prompts to a window of %d answers so (is Target.MaxModelLen above the window it serves?)",
			len(short), short[0], short[0])
	}
	const advice = "size the prompts with the server's own counts: exact prompt sizing (Workload.PromptSizing \"exact\"; ANVIL_PROMPT_SIZING=exact for go test -bench)"
	switch {
	case !exact && math.Abs(median-1) > p.Tolerance:
		w += ": its tokenizer does not count this filler at about 3.0 characters per token; " + advice
	case !exact:
		w += ": more prompts than the tokenizer's ratio explains counted far from their plan; " + advice
	case p.Source != nil && *p.Source == "tokenize":
		w += ": the server counted its chat requests differently from its tokenizer endpoint (a server that cuts prompts to its window, or a template the endpoint does not apply); the run is not performance eligible; see capacity/PROTOCOL.md#plan-check"
	default:
		w += ": the prompts did not count as calibration learned (text that counts at another ratio than the calibrated sizes, or a server that cuts prompts to its window); the run is not performance eligible; a server with a tokenizer endpoint is sized exactly; see capacity/PROTOCOL.md#plan-check"
	}
	p.Warning = &w
}

// templateEstimate is the chat template's tokens a reference run's counts
// hold: each count is the template's fixed tokens plus its text's, which
// grow with the plan. With at least 4 counted prompts whose plans span a
// factor of 4 or more, the text's share is the median of counted /
// planned over the larger half of the plans (where the template weighs
// least), and the template the median of counted - share x planned over
// the smallest quarter (where it weighs most), at least 0 and at most the
// smallest of their counts and maxTemplateEstimate. nil when the plans do
// not span enough to tell the two apart.
func templateEstimate(counts []planCount) *int {
	if len(counts) < 4 {
		return nil
	}
	c := slices.Clone(counts)
	slices.SortStableFunc(c, func(a, b planCount) int { return a.Planned - b.Planned })
	if c[len(c)-1].Planned < 4*c[0].Planned {
		return nil
	}
	var share, rest []float64
	for _, j := range c[len(c)/2:] {
		share = append(share, float64(j.Counted)/float64(j.Planned))
	}
	slices.Sort(share)
	a := stats.Median(share)
	low := c[:max(len(c)/4, 1)]
	least := low[0].Counted
	for _, j := range low {
		rest = append(rest, float64(j.Counted)-a*float64(j.Planned))
		least = min(least, j.Counted)
	}
	slices.Sort(rest)
	t := int(math.Round(stats.Median(rest)))
	t = min(max(t, 0), least, maxTemplateEstimate)
	return &t
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
