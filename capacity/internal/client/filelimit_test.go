//go:build unix

package client

import (
	"errors"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEnsureFileLimit raises the soft limit up to what a concurrency needs
// and names the numbers when the hard limit is too low. The process's
// limits are restored afterwards.
func TestEnsureFileLimit(t *testing.T) {
	var orig syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &orig))
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &orig) })
	if orig.Max < filesNeeded(100) {
		t.Skipf("hard open-file limit %d is below what the test needs", orig.Max)
	}

	low := orig
	low.Cur = filesNeeded(10)
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low))
	require.NoError(t, EnsureFileLimit(100))
	var now syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &now))
	require.Equal(t, filesNeeded(100), uint64(now.Cur), "raised to what concurrency 100 needs")
	require.NoError(t, EnsureFileLimit(10), "a smaller need never lowers the limit")
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &now))
	require.Equal(t, filesNeeded(100), uint64(now.Cur))

	big := int(orig.Max) // needs more than Max files: above the hard limit
	err := EnsureFileLimit(big)
	var fe *fileLimitError
	require.True(t, errors.As(err, &fe))
	require.Equal(t, big, fe.Concurrency)
	require.Equal(t, filesNeeded(big), fe.Need)
	require.Equal(t, uint64(orig.Max), fe.Hard)
	require.ErrorContains(t, err, "Workload.Concurrency")
}
