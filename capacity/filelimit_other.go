//go:build !unix

package capacity

// ensureFileLimit does nothing where the platform has no RLIMIT_NOFILE.
func ensureFileLimit(int) error { return nil }
