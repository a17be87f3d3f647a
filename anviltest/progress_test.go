package anviltest

import (
	"bytes"
	"flag"
	"net"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

// clock is a settable time for the progress writers.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

var at = time.Date(2027, 3, 4, 5, 6, 7, 0, time.UTC)

func TestProgressLineDrawsAfterTheNameAndClears(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{at}
	p := newProgressLine(&buf, progressView{target: "http://gpu-box:8000/v1"}, c.now)
	p.clear()
	require.Empty(t, buf.String(), "nothing drawn, nothing to clear")

	p.update(capacity.Progress{Phase: "measured", Planned: 60, Dispatched: 8, Succeeded: 3, Failed: 1, InFlight: 4, Oldest: 900 * time.Millisecond, Elapsed: 1500 * time.Millisecond})
	require.Equal(t, "\x1b7\x1b[?7l\x1b[K[8 of 60 sent, 3 ok, 1 failed, 4 in flight (oldest 900ms), 1.5s, about 21s to go]\x1b[?7h\x1b8", buf.String(),
		"saved cursor, no autowrap (a wrap could scroll the saved position away), cleared line, text, restored")

	buf.Reset()
	c.t = c.t.Add(100 * time.Millisecond)
	p.update(capacity.Progress{Phase: "measured", Succeeded: 4, Elapsed: 1600 * time.Millisecond})
	require.Empty(t, buf.String(), "redrawn at most every progressInterval")

	c.t = c.t.Add(progressInterval)
	p.update(capacity.Progress{Phase: "warm-up", Warmup: true, InFlight: 1, Elapsed: 1750 * time.Millisecond})
	require.Equal(t, "\x1b7\x1b[?7l\x1b[K[warm-up 1.8s: 1 in flight]\x1b[?7h\x1b8", buf.String())

	buf.Reset()
	p.clear()
	require.Equal(t, "\x1b[K", buf.String())

	var nilLine *progressLine
	nilLine.update(capacity.Progress{Elapsed: time.Hour})
	nilLine.clear()
}

// TestProgressText: each phase says what the run waits for; the measured
// phase has its total and what is left.
func TestProgressText(t *testing.T) {
	v := progressView{target: "http://gpu-box:8000/v1"}
	for _, tc := range []struct {
		view progressView
		p    capacity.Progress
		want string
	}{
		{v, capacity.Progress{Phase: "discovery", Elapsed: 12 * time.Second},
			"discovery 12s: asking http://gpu-box:8000/v1 for the model and its window, no answer yet"},
		{v, capacity.Progress{Phase: "calibration", Elapsed: 3 * time.Second}, "calibration 3s: sizing the prompts with the server's counts"},
		{v, capacity.Progress{Phase: "connections", Elapsed: 1 * time.Second}, "connections 1s: opening a connection per request in flight"},
		{progressView{startAt: at.Add(time.Hour)}, capacity.Progress{Phase: "start", Elapsed: 10 * time.Second},
			"start: waiting 1h0m0s for the common start 2027-03-04T06:06:07Z (ANVIL_START_AT)"},
		{v, capacity.Progress{Phase: "warm-up", Warmup: true, InFlight: 2, Oldest: 61500 * time.Millisecond, Elapsed: 70 * time.Second},
			"warm-up 1m10s: 2 in flight (oldest 1m2s)"},
		{v, capacity.Progress{Phase: "measured", Planned: 60, Dispatched: 12, Succeeded: 10, InFlight: 2, Oldest: 3200 * time.Millisecond, Elapsed: 14100 * time.Millisecond},
			"12 of 60 sent, 10 ok, 0 failed, 2 in flight (oldest 3.2s), 14.1s, about 1m11s to go"},
		{v, capacity.Progress{Phase: "measured", Planned: 60, Dispatched: 1, InFlight: 1, Elapsed: 400 * time.Second, Oldest: 400 * time.Second},
			"1 of 60 sent, 0 ok, 0 failed, 1 in flight (oldest 6m40s), 6m40s"},
		{progressView{campaign: 30 * time.Second}, capacity.Progress{Phase: "measured", Planned: 10000, Dispatched: 40, Succeeded: 36, InFlight: 4, Elapsed: 12 * time.Second},
			"40 sent, 36 ok, 0 failed, 4 in flight, 12s of 30s"},
		{progressView{campaign: 30 * time.Second}, capacity.Progress{Phase: "measured", Planned: 10000, Dispatched: 90, Succeeded: 88, InFlight: 2, Elapsed: 31 * time.Second},
			"90 sent, 88 ok, 0 failed, 2 in flight, 31s, finishing the requests in flight"},
	} {
		require.Equal(t, tc.want, tc.view.text(tc.p, at))
	}
}

// TestHeartbeat: a line every heartbeatInterval, none before it, each
// beginning with "[anvil]" so that benchfmt readers skip it.
func TestHeartbeat(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{at}
	h := newHeartbeat(&buf, "BenchmarkX/conc=4", progressView{target: "http://h/v1"}, c.now)
	for range 9 {
		c.t = c.t.Add(time.Second)
		h.update(capacity.Progress{Phase: "discovery", Elapsed: c.t.Sub(at)})
	}
	require.Empty(t, buf.String(), "a short run prints none")
	c.t = c.t.Add(time.Second)
	h.update(capacity.Progress{Phase: "discovery", Elapsed: c.t.Sub(at)})
	require.Equal(t, "[anvil] BenchmarkX/conc=4: discovery 10s: asking http://h/v1 for the model and its window, no answer yet\n", buf.String())
	c.t = c.t.Add(9 * time.Second)
	h.update(capacity.Progress{Phase: "discovery", Elapsed: c.t.Sub(at)})
	require.Equal(t, 1, strings.Count(buf.String(), "\n"), "at most every 10 s")
	lines := benchLines(t, "goos: linux\n"+buf.String()+"BenchmarkX 1 2 ns/op\n")
	require.Len(t, lines, 1)
	var keys []string
	for _, c := range lines[0].Config {
		keys = append(keys, c.Key)
	}
	require.Equal(t, []string{"goos"}, keys, "no configuration from a heartbeat")
	var nilBeat *heartbeat
	nilBeat.update(capacity.Progress{})
}

// TestHeartbeatStartAhead: a shard whose common start is an hour ahead
// says so, and until when, the moment it starts waiting, then every
// heartbeatInterval; one a few seconds ahead waits for the next line.
func TestHeartbeatStartAhead(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{at}
	h := newHeartbeat(&buf, "BenchmarkX", progressView{target: "http://h/v1", startAt: at.Add(time.Hour + 2*time.Second)}, c.now)
	c.t = c.t.Add(time.Second)
	h.update(capacity.Progress{Phase: "connections", Elapsed: time.Second})
	require.Empty(t, buf.String())
	c.t = c.t.Add(time.Second)
	h.update(capacity.Progress{Phase: "start"})
	require.Equal(t, "[anvil] BenchmarkX: start: waiting 1h0m0s for the common start 2027-03-04T06:06:09Z (ANVIL_START_AT)\n", buf.String())
	for range 9 {
		c.t = c.t.Add(time.Second)
		h.update(capacity.Progress{Phase: "start", Elapsed: c.t.Sub(at)})
	}
	require.Equal(t, 1, strings.Count(buf.String(), "\n"), "then every 10 s")
	c.t = c.t.Add(time.Second)
	h.update(capacity.Progress{Phase: "start", Elapsed: c.t.Sub(at)})
	require.Equal(t, 2, strings.Count(buf.String(), "\n"))
	require.True(t, strings.HasSuffix(buf.String(), "start: waiting 59m50s for the common start 2027-03-04T06:06:09Z (ANVIL_START_AT)\n"), buf.String())

	buf.Reset()
	c.t = at
	soon := newHeartbeat(&buf, "BenchmarkX", progressView{startAt: at.Add(5 * time.Second)}, c.now)
	soon.update(capacity.Progress{Phase: "start"})
	require.Empty(t, buf.String(), "a start seconds ahead is no wait to announce")
}

// TestHeartbeatWanted: heartbeats go to a standard error that is not a
// terminal, unless the progress is turned off.
func TestHeartbeatWanted(t *testing.T) {
	f, err := os.Create(t.TempDir() + "/captured")
	require.NoError(t, err)
	defer f.Close()
	tty, err := os.OpenFile("/dev/null", os.O_WRONLY, 0) // a character device
	require.NoError(t, err)
	defer tty.Close()
	s := newSettings([]Option{WithEnvironment(env{}.get)})
	require.True(t, s.heartbeatWanted(f))
	require.False(t, s.heartbeatWanted(tty), "a terminal gets the line")
	require.True(t, newSettings([]Option{WithEnvironment(env{"TERM": "dumb"}.get)}).heartbeatWanted(tty))
	require.False(t, newSettings([]Option{WithEnvironment(env{envProgress: "0"}.get)}).heartbeatWanted(f))
	require.False(t, newSettings([]Option{withProgress(false)}).heartbeatWanted(f))
}

// TestSilentServerChild: a server that accepts connections and never
// answers, in a real go test -bench run whose standard error is a pipe,
// with the default request timeout of 15 minutes: the heartbeat says
// within seconds what the run waits for, naming the URL, and the run
// fails after discovery.ModelsTimeout, naming the URL, the bound and the
// variable that lowers it; the benchmark line is never split.
func TestSilentServerChild(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 30 s for a silent server")
	}
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // read nothing, answer nothing
		}
	}()
	url := "http://" + ln.Addr().String() + "/v1"
	cmd := childCommand(t, []string{envBaseURL + "=" + url, envOut + "=" + t.TempDir()},
		"-test.run=^$", "-test.bench=^BenchmarkCapacityContext$/^ctx=4096/", "-test.benchtime=2x")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	require.Regexp(t, `(?m)^\[anvil\] BenchmarkCapacityContext/ctx=4096/conc=4: discovery 1\d(\.\d)?s: asking `+regexp.QuoteMeta(url)+` for the model and its window, no answer yet$`, string(out))
	require.Contains(t, string(out), "capacity: model probe GET "+url+"/models: timed out (no answer within 30s, the bound of GET /models (Workload.Timeout (ANVIL_TIMEOUT) lowers it):"+
		" the server took the request and sent nothing; is it serving, and is Target.BaseURL (ANVIL_BASE_URL) its API root?)", "%s", out)
}

// TestNamePending: under -count or several -cpu without -v, a run may be
// one whose name the testing package has printed already.
func TestNamePending(t *testing.T) {
	set := func(name, v string) {
		f := flag.Lookup(name)
		require.NotNil(t, f, name)
		old := f.Value.String()
		require.NoError(t, flag.Set(name, v))
		t.Cleanup(func() { flag.Set(name, old) })
	}
	set("test.v", "false")
	set("test.count", "1")
	set("test.cpu", "")
	require.False(t, namePending())
	set("test.cpu", "2")
	require.False(t, namePending())
	set("test.cpu", "1,2")
	require.True(t, namePending())
	set("test.cpu", "")
	set("test.count", "10")
	require.True(t, namePending())
	set("test.v", "true")
	require.False(t, namePending(), "-v prints each name on its own line")
}
