//go:build !unix

package client

// EnsureFileLimit does nothing where the platform has no RLIMIT_NOFILE.
func EnsureFileLimit(int) error { return nil }
