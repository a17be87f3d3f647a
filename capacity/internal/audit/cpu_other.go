//go:build !unix

package audit

import "time"

// processCPU is not measured on this platform: cpu_share is null.
func processCPU() (time.Duration, bool) { return 0, false }
