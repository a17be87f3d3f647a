package client

import "fmt"

// fileMargin is the open files a run needs besides its connections: the
// process's own (standard streams, the artifact being written, DNS, the
// runtime) with room to spare.
const fileMargin = 64

// filesNeeded is the open-file limit a run at concurrency c needs: one
// connection per request in flight, a sixteenth more for connections being
// torn down while their replacements open, and fileMargin.
func filesNeeded(c int) uint64 { return uint64(c + c/16 + fileMargin) }

// fileLimitError is returned by Run when the process may not open enough
// files for Workload.Concurrency and the hard limit forbids raising it.
type fileLimitError struct {
	Concurrency int    // Workload.Concurrency
	Need        uint64 // open files the run needs
	Soft, Hard  uint64 // the process's limits (RLIMIT_NOFILE)
}

var _ error = (*fileLimitError)(nil)

// Error names the concurrency, the files it needs and both limits.
func (e *fileLimitError) Error() string {
	return fmt.Sprintf("capacity: Workload.Concurrency = %d needs %d open files, but the hard limit is %d (soft %d): raise it (ulimit -Hn, or LimitNOFILE for a service) or lower the concurrency",
		e.Concurrency, e.Need, e.Hard, e.Soft)
}
