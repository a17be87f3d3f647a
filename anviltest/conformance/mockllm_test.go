package conformance

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
)

// EnvMockLLMURL is the base URL of a running @dwmkerr/mock-llm (version
// 0.1.29, default rules), e.g. http://127.0.0.1:6556/v1; .ci/mock-llm.sh
// installs it from npm, starts it and sets this.
const EnvMockLLMURL = "ANVIL_MOCK_LLM_URL"

func mockLLMURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv(EnvMockLLMURL)
	if u == "" {
		t.Skipf("%s is not set: run .ci/mock-llm.sh, which installs @dwmkerr/mock-llm from npm and starts it", EnvMockLLMURL)
	}
	return u
}

// TestMockLLMConformance runs the suite against mock-llm, an echo server
// written by others, and asserts its known verdicts.
func TestMockLLMConformance(t *testing.T) {
	got := suiteAt(t, Config{Target: capacity.Target{BaseURL: mockLLMURL(t)}})
	// mock-llm 0.1.29 echoes the last user message in chunks of 50
	// characters: no usage, no max_tokens, no context length, no reasoning,
	// no marker at the start of an answer; an unknown model is served and a
	// malformed request gets {"error": "SyntaxError", ...} or a 500.
	want := map[string]Outcome{
		nameModels:              Skip,
		nameStreamFraming:       Pass,
		nameUsage:               Fail,
		nameMaxTokens:           Fail,
		nameFinishReason:        Pass,
		nameContent:             Pass,
		nameReasoningSeparation: Skip,
		namePromptTokens:        Skip,
		namePrefixCache:         Skip,
		nameBadRequest:          Fail,
		nameIsolation:           Skip,
		nameDeterminism:         Pass,
		nameMetrics:             Skip,
	}
	checkVerdicts(t, got, want)
}

// TestMockLLMCapacity runs a short capacity benchmark against mock-llm,
// which sends no usage: every row counts its output in content chunks.
func TestMockLLMCapacity(t *testing.T) {
	base := mockLLMURL(t)
	rep, err := capacity.Run(t.Context(), capacity.Target{BaseURL: base, MaxModelLen: 8192},
		capacity.Workload{Requests: 4, Concurrency: 2, ContextTokens: 64, SharedPrefixTokens: capacity.None,
			MaxTokens: 16, Timeout: 30 * time.Second})
	require.NoError(t, err)
	require.Equal(t, 4, rep.Completed, "failures: %v", rep.Failures)
	for _, r := range rep.RequestTimings {
		require.Equal(t, artifact.SourceContentChunks, r.OutputTokenSource, "request %d", r.RequestIndex)
	}
	require.Equal(t, map[artifact.OutputTokenSource]int{artifact.SourceContentChunks: 4}, rep.Metrics.OutputTokenSources)
}
