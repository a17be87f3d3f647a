package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// module is this module's path.
const module = "github.com/anvilbench/anvil"

// deps lists the packages outside the standard library that the packages
// named link, by go list -deps.
func deps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command lists the packages")
	args := append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, pkgs...)
	out, err := exec.CommandContext(t.Context(), goTool, args...).Output()
	require.NoError(t, err, "go list -deps %s", strings.Join(pkgs, " "))
	return strings.Fields(string(out))
}

// TestArtifactIsASchema: package artifact links only the standard library
// and this module, and the command (merge included) links no protobuf and
// no DDSketch library: reading, reporting and merging artifacts is plain
// arithmetic on the document.
func TestArtifactIsASchema(t *testing.T) {
	artifactDeps := deps(t, module+"/capacity/artifact")
	require.Contains(t, artifactDeps, module+"/capacity/artifact")
	for _, p := range artifactDeps {
		require.True(t, strings.HasPrefix(p, module+"/"), "package artifact links %s", p)
	}
	cmd := deps(t, ".")
	require.Contains(t, cmd, module+"/capacity/merge", "the command merges shards")
	for _, p := range cmd {
		for _, banned := range []string{"google.golang.org/protobuf", "github.com/DataDog/sketches-go"} {
			require.False(t, strings.HasPrefix(p, banned), "anvilreport links %s", p)
		}
	}
}
