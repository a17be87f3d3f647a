package client

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// TestClockSetDetail: each stamp as an offset from the campaign's start,
// the queue and the scheduled times from when the request was taken, and
// nothing for a stamp never reached.
func TestClockSetDetail(t *testing.T) {
	start := time.Unix(100, 0)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	var d artifact.RequestDetail
	Clock{Taken: at(10), Sent: at(15), FirstOutput: at(40), FirstContent: at(55), End: at(90)}.SetDetail(&d, start)
	require.Equal(t, artifact.RequestDetail{ScheduledMS: new(10.0), SentMS: new(15.0), QueueMS: new(5.0),
		FirstOutputMS: new(40.0), FirstContentMS: new(55.0), EndMS: new(90.0),
		ScheduledTTFTMS: new(45.0), ScheduledE2EMS: new(80.0)}, d)

	d = artifact.RequestDetail{}
	Clock{Taken: at(10), End: at(30)}.SetDetail(&d, start) // never sent
	require.Equal(t, artifact.RequestDetail{ScheduledMS: new(10.0), EndMS: new(30.0), ScheduledE2EMS: new(20.0)}, d)
}
