package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// fullDisk mounts a one-page tmpfs, fills it and returns its path: a file
// can still be created there, but no byte written to it. It skips where
// the test may not mount (not root, no mount command).
func fullDisk(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs for a full disk: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	f, err := os.Create(filepath.Join(dir, "fill"))
	require.NoError(t, err)
	for {
		if _, err := f.Write(make([]byte, 512)); err != nil {
			break
		}
	}
	require.NoError(t, f.Close())
	return dir
}

// TestConformanceFilesOnAFullDisk: writing the verdicts to a full disk
// fails and leaves no verdict file behind, not even an empty one (which
// would then break whatever reads the directory).
func TestConformanceFilesOnAFullDisk(t *testing.T) {
	dir := fullDisk(t)
	_, _, err := sampleReport().WriteFiles(dir)
	require.Error(t, err)
	left, err := filepath.Glob(filepath.Join(dir, "*conformance*"))
	require.NoError(t, err)
	require.Empty(t, left, "files left behind by a failed write")
}
