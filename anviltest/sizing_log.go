package anviltest

import (
	"strings"
	"testing"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/reporters"
)

// logSizing logs where the run's context window came from and, when the
// server counted the prompts off their plan, the warning that says how
// far and what to do (capacity/PROTOCOL.md#exact-token-sizing).
func logSizing(b *testing.B, r *artifact.Report) {
	b.Helper()
	if note := reporters.ContextWindowNote(r); note != "" {
		b.Log(withEnvNames(note))
	}
	if w := reporters.PromptPlanWarning(r); w != "" {
		b.Log("prompts off plan: " + withEnvNames(w))
	}
}

// withEnvNames follows Target.MaxModelLen in s, the window a benchmark
// declares with ANVIL_MAX_MODEL_LEN, by the variable's name.
func withEnvNames(s string) string {
	return strings.ReplaceAll(s, "Target.MaxModelLen", "Target.MaxModelLen ("+EnvMaxModelLen+")")
}
