package artifact

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPseudoRevision(t *testing.T) {
	for v, want := range map[string]string{
		"v0.0.0-20261201221049-e02e9a91af51":                "e02e9a91af51",
		"v1.2.4-0.20261201221049-e02e9a91af51":              "e02e9a91af51",
		"v2.0.0-rc.1.0.20261201221049-e02e9a91af51":         "e02e9a91af51",
		"v2.0.1-0.20261201221049-e02e9a91af51+incompatible": "e02e9a91af51",
		"v0.4.0":                             "",
		"(devel)":                            "",
		"v1.0.0-rc1":                         "",
		"v0.0.0-2026120122104-e02e9a91af51":  "", // 13-digit time
		"v0.0.0-20261201221049-E02E9A91AF51": "", // not lowercase hex
		"v0.0.0-20261201221049-e02e9a91af5":  "",
	} {
		got, ok := pseudoRevision(v)
		require.Equal(t, want, got, v)
		require.Equal(t, want != "", ok, v)
	}
}

// TestRecordBuild: a go test binary of this module is the main module,
// unstamped: "(devel)", no revision, and the Go release that built it.
func TestRecordBuild(t *testing.T) {
	var r RunSummary
	r.RecordBuild()
	require.NotNil(t, r.ModuleVersion)
	require.Equal(t, "(devel)", *r.ModuleVersion)
	require.NotNil(t, r.GoVersion)
	require.Equal(t, runtime.Version(), *r.GoVersion)
	mod, err := os.ReadFile("../../go.mod")
	require.NoError(t, err)
	first, _, _ := strings.Cut(string(mod), "\n")
	require.Equal(t, "module "+modulePath, first, "modulePath is go.mod's")
}
