package reporters

import (
	"bytes"
	"fmt"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// allUsage reports whether every timing row of r that has output_tokens
// counts them from usage. Rows without usage have output_tokens null (the
// chunk count stays in content_chunks); an older artifact may still hold a
// chunk count there, which the summary must not call completion tokens.
func allUsage(r *artifact.Report) bool {
	for i := range r.RequestTimings {
		row := &r.RequestTimings[i]
		if row.OutputTokens != nil && row.OutputTokenSource != "" && row.OutputTokenSource != artifact.SourceUsage {
			return false
		}
	}
	return true
}

// outputCountNote says which rows the output-count row of the table
// covers when not every successful request reported usage; empty when all
// did.
func outputCountNote(r *artifact.Report) string {
	usage, chunks, none := 0, 0, 0
	for i := range r.RequestTimings {
		row := &r.RequestTimings[i]
		switch {
		case row.OutputTokens == nil:
			none++
		case row.OutputTokenSource == "" || row.OutputTokenSource == artifact.SourceUsage:
			usage++
		default:
			chunks++
		}
	}
	switch {
	case chunks > 0:
		return fmt.Sprintf("output: %d rows count tokens from usage, %d count content chunks (no usage), %d have no count", usage, chunks, none)
	case none > 0:
		return fmt.Sprintf("completion tokens: from usage of %d rows; %d rows without usage (output counted in content chunks only)", usage, none)
	}
	return ""
}

// checkCounts tallies one contract check over every checked response.
type checkCounts struct {
	samples, passed int // all checked responses, and those that passed
	failedSamples   int // checked responses of failed requests
	failedPassed    int
	unobservable    int // controlled output only: capture incomplete
}

// checks tallies the request canary and controlled-output checks of r's
// timing rows and of its failures (their response_timing, or the check
// recorded on the failure itself). The v1 metrics count successful rows
// only; a failure such as request_canary_failed is a checked response too.
func checks(r *artifact.Report) (canary, controlled checkCounts) {
	addCanary := func(c *artifact.CanaryCheck, failed bool) {
		if c == nil {
			return
		}
		canary.samples++
		if failed {
			canary.failedSamples++
		}
		if c.Passed {
			canary.passed++
			if failed {
				canary.failedPassed++
			}
		}
	}
	addControlled := func(c *artifact.ControlledOutputCheck, failed bool) {
		if c == nil {
			return
		}
		controlled.samples++
		if failed {
			controlled.failedSamples++
		}
		switch {
		case c.ExactAdherence == nil:
			controlled.unobservable++
		case *c.ExactAdherence:
			controlled.passed++
			if failed {
				controlled.failedPassed++
			}
		}
	}
	for i := range r.RequestTimings {
		addCanary(r.RequestTimings[i].RequestCanary, false)
		addControlled(r.RequestTimings[i].ControlledOutput, false)
	}
	for i := range r.Failures {
		f := &r.Failures[i]
		if f.ResponseTiming != nil {
			addCanary(f.ResponseTiming.RequestCanary, true)
			addControlled(f.ResponseTiming.ControlledOutput, true)
		} else {
			addCanary(f.RequestCanary, true)
			addControlled(f.ControlledOutput, true)
		}
	}
	// A legacy artifact may carry the metrics without the rows.
	m := &r.Metrics
	if canary.samples == 0 && m.RequestCanarySamples > 0 {
		canary = checkCounts{samples: m.RequestCanarySamples, passed: m.RequestCanaryPassed}
	}
	if controlled.samples == 0 && m.ControlledOutputSamples > 0 {
		controlled = checkCounts{samples: m.ControlledOutputSamples, passed: m.ControlledOutputExactAdherence,
			unobservable: m.ControlledOutputUnobservable}
	}
	return canary, controlled
}

// writeChecks prints the canary and controlled-output lines: passed over
// every checked response, and how many of those were failed requests.
func writeChecks(buf *bytes.Buffer, r *artifact.Report) {
	canary, controlled := checks(r)
	inFailed := func(c checkCounts) string {
		if c.failedSamples == 0 {
			return ""
		}
		return fmt.Sprintf(" (%d of them failed requests, %d of those passed)", c.failedSamples, c.failedPassed)
	}
	if canary.samples > 0 {
		fmt.Fprintf(buf, "request canaries %d/%d passed%s\n", canary.passed, canary.samples, inFailed(canary))
	}
	if controlled.samples > 0 {
		rate := "-"
		if observable := controlled.samples - controlled.unobservable; observable > 0 {
			rate = num(new(float64(controlled.passed) / float64(observable)))
		}
		fmt.Fprintf(buf, "controlled output (%s) exact %d/%d, unobservable %d, rate %s%s\n",
			orDash(r.ControlledOutputPolicy), controlled.passed, controlled.samples,
			controlled.unobservable, rate, inFailed(controlled))
	}
}
