package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVersion: -version (and --version, version) print the build of the
// module and exit 0; a go test binary is "(devel)" and unstamped.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"-version", "--version", "version"} {
		var stdout, stderr bytes.Buffer
		require.Equal(t, 0, run([]string{arg}, &stdout, &stderr), arg)
		require.Equal(t, "anvilreport (devel), revision unknown (go build stamps it from a git checkout), "+runtime.Version()+"\n", stdout.String())
		require.Empty(t, stderr.String())
	}
}

// TestVersionStamped: the command built by go build from a git checkout
// prints the commit it was built from (git rev-parse HEAD), as every
// artifact of a stamped benchmark binary records it.
func TestVersionStamped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	head, err := exec.CommandContext(t.Context(), "git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not a git checkout")
	}
	bin := filepath.Join(t.TempDir(), "anvilreport")
	build := exec.CommandContext(t.Context(), goTool, "build", "-buildvcs=true", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Skipf("go build -buildvcs=true: %v\n%s", err, out) // a checkout go cannot read (a linked worktree)
	}
	out, err := exec.CommandContext(t.Context(), bin, "-version").Output()
	require.NoError(t, err)
	if strings.Contains(string(out), "revision unknown") {
		t.Skipf("go build did not stamp this checkout (a linked worktree): %s", out)
	}
	require.Regexp(t, `^anvilreport v0\.0\.0-\d{14}-[0-9a-f]{12}(\+dirty)?, revision `+strings.TrimSpace(string(head))+`( \(modified\))?, go`, string(out))
}
