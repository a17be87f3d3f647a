package reporters

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// TestSummaryShowsWindowAndPlanWarning: the console summary names where
// the window came from, the advertised one that disagrees, and the
// warning of prompts counted off their plan; an artifact without them
// prints neither line.
func TestSummaryShowsWindowAndPlanWarning(t *testing.T) {
	warning := "the server counted the prompts at 2.74 x their plan (median of 4 counted; 4 off by more than 25%): use exact prompt sizing\x1b[31m"
	r := &artifact.Report{Requests: 4, Completed: 4, AnvilGo: &artifact.Extension{
		PromptSizing: &artifact.PromptSizing{Method: "reference", CharsPerToken: 3, Warning: &warning},
		ContextWindow: &artifact.ContextWindow{Tokens: 16384, Source: "Target.MaxModelLen", Advertised: new(4096),
			AdvertisedSource: new("/api/ps"), TruncationWindow: 4096, Note: new("Target.MaxModelLen 16384 is above the window")},
	}}
	var buf bytes.Buffer
	require.NoError(t, WriteSummary(&buf, r))
	require.Contains(t, buf.String(), "context window 16384 tokens from Target.MaxModelLen, the server advertises 4096 (/api/ps), truncation checked at 4096: Target.MaxModelLen 16384 is above the window\n")
	require.Contains(t, buf.String(), "prompts off plan: the server counted the prompts at 2.74 x their plan")
	require.NotContains(t, buf.String(), "\x1b", "server-influenced text is printable")

	r.AnvilGo = nil
	buf.Reset()
	require.NoError(t, WriteSummary(&buf, r))
	require.NotContains(t, buf.String(), "context window")
	require.NotContains(t, buf.String(), "off plan")
}

// TestRunLogNamesUnsizableRequests: the run log says how many requests
// exact sizing sent at their least prompt, planned below the template.
func TestRunLogNamesUnsizableRequests(t *testing.T) {
	r := &artifact.Report{Requests: 4, Completed: 4, AnvilGo: &artifact.Extension{
		PromptSizing: &artifact.PromptSizing{Method: "exact", UnsizableRequests: 2, TemplateTokens: new(9)},
	}}
	require.Contains(t, strings.Join(RunLog(r), "\n"), "2 requests were planned below what their least prompt counts (the chat template alone counts 9 tokens): sent at that least prompt, left out of the plan check")
	r.AnvilGo.PromptSizing.UnsizableRequests = 0
	require.NotContains(t, strings.Join(RunLog(r), "\n"), "least prompt")
}
