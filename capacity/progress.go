package capacity

import (
	"time"

	"github.com/anvilbench/anvil/capacity/internal/progress"
)

// The phases of a run, Progress.Phase.
const (
	phaseDiscovery   = "discovery"   // the model probe, the context window, the slots, the metrics endpoint
	phaseCalibration = "calibration" // exact prompt sizing
	phaseWarmup      = "warm-up"     // Workload.Warmup's requests
	phaseConnections = "connections" // the connection warm-up
	phaseStart       = "start"       // a shard waiting for Shard.StartAt
	phaseMeasured    = "measured"    // the measured requests
)

// newProgressFeed starts the feed of fn (Workload.Progress) in
// phaseDiscovery; nil for a nil fn.
func newProgressFeed(fn func(Progress)) *progress.Feed[Progress] {
	return progress.New(fn, func(p Progress, phase string, elapsed time.Duration) Progress {
		p.Phase, p.Elapsed = phase, elapsed
		return p
	}, phaseDiscovery)
}
