package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// TestInFlightOf reconstructs the requests in flight at each send from a
// timeline worked by hand, with a cap of 2: a request ending at the
// instant another is sent is no longer in flight, one that never ended
// stays in flight, one never sent is not counted.
func TestInFlightOf(t *testing.T) {
	at := func(sent, end float64) artifact.RequestDetail {
		d := artifact.RequestDetail{SentMS: &sent}
		if end >= 0 {
			d.EndMS = &end
		}
		return d
	}
	requests := []artifact.RequestDetail{
		at(0, 100),   // 0 others in flight
		at(10, 50),   // 1: the first
		at(50, 120),  // 1: the second ended at 50
		at(60, 70),   // 2: over the cap
		at(65, -1),   // 3, never ends: over the cap, the peak of 4
		{},           // never sent
		at(200, 200), // 1 (the one that never ended): it ended as it was sent
	}
	got := inFlightOf(requests, 2)
	want := &artifact.ShardInFlight{Cap: 2, Peak: 4, OverCapRequests: 2}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(artifact.ShardInFlight{})); diff != "" {
		t.Fatalf("in flight (-want +got):\n%s", diff)
	}
}
