package merge_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/merge"
)

// TestMergeRefusesShiftedTimelines: a shard whose anvil_go.requests[]
// offsets were moved is refused, naming the shard, the request and what
// contradicts it: the arrival schedule (regenerated from anvil_go.arrival)
// for a moved due time, its own rows and differences for a moved send, its
// shard's bounds, and its own in-flight cap; and open-loop shards that
// kept different caps are two workloads.
func TestMergeRefusesShiftedTimelines(t *testing.T) {
	single := runSingle(t)
	shift := func(by float64, ps ...**float64) {
		for _, p := range ps {
			*p = new(**p + by)
		}
	}
	for _, tt := range []struct {
		name string
		edit func(s []*artifact.Report, d *artifact.RequestDetail)
		want string
	}{
		{"scheduled_ms and sent_ms moved", func(_ []*artifact.Report, d *artifact.RequestDetail) {
			shift(50, &d.ScheduledMS, &d.SentMS)
		}, "shard-1.json (shard 1): anvil_go.requests[] request 4: scheduled_ms 150.710551 is not its offset in the arrival schedule, 100.710551"},
		{"every offset of a request moved", func(_ []*artifact.Report, d *artifact.RequestDetail) {
			shift(50, &d.ScheduledMS, &d.SentMS, &d.EndMS, &d.FirstOutputMS, &d.FirstContentMS)
		}, "request 4: scheduled_ms 150.710551 is not its offset in the arrival schedule, 100.710551"},
		{"sent_ms moved", func(_ []*artifact.Report, d *artifact.RequestDetail) { shift(5, &d.SentMS) },
			"request 4: queue_ms 0 is not sent_ms - scheduled_ms, 5"},
		{"sent_ms and queue_ms moved", func(_ []*artifact.Report, d *artifact.RequestDetail) { shift(5, &d.SentMS, &d.QueueMS) },
			"request 4: the row's time_to_first_output_ms"},
		{"sent before it was due", func(_ []*artifact.Report, d *artifact.RequestDetail) {
			shift(-10, &d.SentMS, &d.QueueMS, &d.EndMS, &d.FirstOutputMS, &d.FirstContentMS)
		}, "request 4: sent_ms 90.710551 is before its scheduled_ms 100.710551"},
		{"ended after its shard", func(s []*artifact.Report, d *artifact.RequestDetail) {
			d.EndMS = new(s[1].WallClockMS + 1)
		}, "request 4: end_ms"},
		{"over its own cap", func(s []*artifact.Report, _ *artifact.RequestDetail) {
			for _, r := range s {
				r.Concurrency, r.AnvilGo.Arrival.MaxInFlight = 1, 1
			}
		}, "shard-0.json (shard 0): anvil_go.requests[] has 2 requests in flight at once, over its anvil_go.arrival.max_in_flight 1"},
		{"two caps", func(s []*artifact.Report, _ *artifact.RequestDetail) { s[2].AnvilGo.Arrival.MaxInFlight = 2 },
			"two workloads: shard-0.json has anvil_go.arrival process=poisson rate_rps=40 burstiness=1 seed=11 max_in_flight=5, shard-2.json has process=poisson rate_rps=40 burstiness=1 seed=11 max_in_flight=2"},
		{"two concurrencies", func(s []*artifact.Report, _ *artifact.RequestDetail) { s[1].Concurrency = 2 },
			"two workloads: shard-0.json has concurrency 5, shard-1.json has 2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := splitShards(t, single, 3)
			d := &s[1].AnvilGo.Requests[1]
			require.Equal(t, 4, d.RequestIndex)
			tt.edit(s, d)
			_, err := merge.Shards(shardFiles(t, s)...)
			require.ErrorIs(t, err, merge.ErrNotMergeable)
			require.ErrorContains(t, err, tt.want)
		})
	}
}
