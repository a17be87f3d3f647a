package reporters

import (
	"bytes"
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
