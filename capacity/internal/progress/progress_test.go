package progress

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// snap is a test snapshot.
type snap struct {
	phase   string
	elapsed time.Duration
	n       int // the runner's counter; 0 for a phase of the feed's own
}

// calls records the feed's calls.
type calls struct {
	mu  sync.Mutex
	got []snap
}

func (c *calls) add(p snap) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, p)
}

// take returns the calls so far and forgets them.
func (c *calls) take() []snap {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.got
	c.got = nil
	return got
}

func stamp(p snap, phase string, elapsed time.Duration) snap {
	p.phase, p.elapsed = phase, elapsed
	return p
}

// TestFeed: a phase change is passed on at once, a quiet feed ticks every
// Tick with its phase's clock, an attached runner's snapshots replace the
// ticks' own, a snapshot older than one passed on is dropped, and after
// Close nothing is called.
func TestFeed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c calls
		f := New(c.add, stamp, "discovery")
		defer func() { f.Close() }() // on a failure; nil once closed
		time.Sleep(Tick + Tick/8)
		require.Equal(t, []snap{{phase: "discovery", elapsed: Tick}}, c.take(), "a tick every Tick of quiet")

		f.Enter("warm-up")
		require.Equal(t, []snap{{phase: "warm-up"}}, c.take(), "a phase change at once")

		n := 0
		f.Attach(func() (snap, uint64) { n++; return snap{phase: "measured", n: n}, f.Next() })
		old := f.Next()
		f.Pass(snap{phase: "measured", n: 100}, f.Next())
		f.Pass(snap{phase: "measured", n: 99}, old)
		require.Equal(t, []snap{{phase: "measured", n: 100}}, c.take(), "the older snapshot is dropped")
		time.Sleep(2*Tick + Tick/2) // ticks 1 and 2 Tick after the last pass
		require.Equal(t, []snap{{phase: "measured", n: 1}, {phase: "measured", n: 2}}, c.take(), "the runner's snapshots as ticks")

		f.Close()
		c.take()
		time.Sleep(3 * Tick)
		f = nil // closed once
		require.Empty(t, c.take())
	})
}

// TestNilFeed: without a func there is no feed, and a nil feed calls
// nothing.
func TestNilFeed(t *testing.T) {
	f := New[snap](nil, stamp, "discovery")
	require.Nil(t, f)
	f.Enter("warm-up")
	f.Attach(nil)
	f.Close()
}

// TestFlights: the oldest request in flight, as requests leave and end in
// any order.
func TestFlights(t *testing.T) {
	var f Flights
	t0 := time.Unix(1000, 0)
	require.Zero(t, f.Oldest(t0))
	f.Out(4, t0)
	f.Out(7, t0.Add(time.Second))
	f.Out(9, t0.Add(3*time.Second))
	require.Equal(t, 5*time.Second, f.Oldest(t0.Add(5*time.Second)))
	f.Back(7)
	require.Equal(t, 5*time.Second, f.Oldest(t0.Add(5*time.Second)), "a later request's end moves nothing")
	f.Back(4)
	require.Equal(t, 2*time.Second, f.Oldest(t0.Add(5*time.Second)), "the head passes every finished one")
	f.Back(12) // never sent
	f.Back(9)
	require.Zero(t, f.Oldest(t0.Add(5*time.Second)))
	f.Reset()
	f.Out(1, t0)
	require.Equal(t, time.Second, f.Oldest(t0.Add(time.Second)))
}
