//go:build unix

package client

import "syscall"

// EnsureFileLimit makes sure the process may open filesNeeded(c) files,
// raising the soft limit as far as that (never lowering it) when the hard
// limit allows, and returns a *fileLimitError otherwise.
func EnsureFileLimit(c int) error {
	need := filesNeeded(c)
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return nil // the platform does not say: let the dial errors speak
	}
	if uint64(l.Cur) >= need {
		return nil
	}
	if uint64(l.Max) < need {
		return &fileLimitError{Concurrency: c, Need: need, Soft: uint64(l.Cur), Hard: uint64(l.Max)}
	}
	soft := l.Cur
	l.Cur = need
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return &fileLimitError{Concurrency: c, Need: need, Soft: uint64(soft), Hard: uint64(l.Max)}
	}
	return nil
}
