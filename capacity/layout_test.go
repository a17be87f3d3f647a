package capacity

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPlanPromptLayout: a plan fixes every request's context before the
// run; each worker builds its prompts into one reused buffer.
func TestPlanPromptLayout(t *testing.T) {
	w := Workload{Requests: 3, ContextTokens: 60, SharedPrefixTokens: 25, RequestCanaries: true, Seed: 7}
	plan, err := newPlan(w, 8192, defaultMargin, "")
	require.NoError(t, err)
	var buf []byte
	buf, _ = plan.AppendPrompt(buf[:0], 2)
	require.Len(t, buf, 180)
	require.Equal(t, 60, plan.Contexts[2])
	require.Equal(t, "def helper_0():\n    return compute(0)  # routine specialist context\ndef hel\ndef helper_\n"+
		"# request 2: begin your answer with ANVIL_REQ_7_00002, then summarize the above in one line.", string(buf))
}

// TestRedactBaseURLDropsCredentials: userinfo and query never reach the
// recorded base URL.
func TestRedactBaseURLDropsCredentials(t *testing.T) {
	u, err := redactBaseURL("https://user:secret@api.example.com/v1?key=abc")
	require.NoError(t, err)
	require.Equal(t, "https://api.example.com/v1", u)
}
