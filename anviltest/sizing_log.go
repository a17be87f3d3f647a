package anviltest

import (
	"strings"
)

// withEnvNames follows Target.MaxModelLen in s, the window a benchmark
// declares with ANVIL_MAX_MODEL_LEN, by the variable's name.
func withEnvNames(s string) string {
	return strings.ReplaceAll(s, "Target.MaxModelLen", "Target.MaxModelLen ("+envMaxModelLen+")")
}
