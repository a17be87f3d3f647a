package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/stretchr/testify/require"
)

// The environment of TestHogChild, set by runHogChild.
const (
	envHog    = "ANVIL_AUDIT_HOG"     // the hog: "none", or "NxSPIN/PERIOD" such as "2x15ms/50ms"
	envHogURL = "ANVIL_AUDIT_HOG_URL" // the stamping server
	envHogOut = "ANVIL_AUDIT_HOG_OUT" // where the child writes its hogResult
)

// hogRequests is a child's measured phase: sequential streams, each
// answered after 2 to 8 ms of the server's own timer, about a second.
const hogRequests = 150

// The hogs: none, and the client's processors taken 15 ms of every 50 ms
// by one goroutine at GOMAXPROCS=1 (TestIntermittentStalls) or by two at
// GOMAXPROCS=2 (the benchmark too: on a machine whose other load starves
// the hog's threads, two spinners need two cores at once and do not
// always take the client's timings, which the audit then, rightly, finds
// ok).
var hogs = []string{"none", "1x15ms/50ms", "2x15ms/50ms"}

// hogResult is what a child measured: its audit and, per request, the
// client's TTFT less the server's own (the server stamps its first
// event's write once flushed): what the network and the client add,
// which a client whose processors are taken stretches.
type hogResult struct {
	Audit      artifact.Audit
	OverheadMS []float64
}

// overheadP90 is the p90 of r's overheads (nearest rank), in ms.
func (r hogResult) overheadP90() float64 {
	s := slices.Sorted(slices.Values(r.OverheadMS))
	return s[min(max(int(0.9*float64(len(s))+0.999999)-1, 0), len(s)-1)]
}

// stampingServer answers every GET with an SSE stream: a first event
// after 2 to 8 ms (by the request's number), then an event holding the
// server's own time from the request's arrival to the first event's
// write, flushed, in nanoseconds.
func stampingServer(tb testing.TB) *httptest.Server {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		arrived := time.Now()
		time.Sleep(time.Duration(2+n.Add(1)%7) * time.Millisecond)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		fmt.Fprintf(w, "data: %d\n\n", time.Since(arrived).Nanoseconds())
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// parseHog reads a hog "NxSPIN/PERIOD": N goroutines, each spinning SPIN
// of every PERIOD; N is also the child's GOMAXPROCS.
func parseHog(tb testing.TB, hog string) (n int, spin, period time.Duration) {
	if hog == "none" {
		return 0, 0, 0
	}
	count, rest, _ := strings.Cut(hog, "x")
	a, b, _ := strings.Cut(rest, "/")
	var err error
	n, err = strconv.Atoi(count)
	require.NoError(tb, err, hog)
	spin, err = time.ParseDuration(a)
	require.NoError(tb, err, hog)
	period, err = time.ParseDuration(b)
	require.NoError(tb, err, hog)
	return n, spin, period
}

// runHogChild runs TestHogChild in a child process against srv, beside
// the hog, with GOMAXPROCS the hog's goroutines (1 without a hog) and
// GOGC=off (the verdict is the scheduler's: a loaded machine stretches a
// stop-the-world pause, a true reason of its own, not the one tested).
func runHogChild(tb testing.TB, srv *httptest.Server, hog string) hogResult {
	n, _, _ := parseHog(tb, hog)
	out := filepath.Join(tb.TempDir(), "hog.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHogChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(max(n, 1)), "GOGC=off",
		envHog+"="+hog, envHogURL+"="+srv.URL, envHogOut+"="+out)
	log, err := cmd.CombinedOutput()
	require.NoError(tb, err, "the child: %s", log)
	raw, err := os.ReadFile(out)
	require.NoError(tb, err, "the child: %s", log)
	var r hogResult
	require.NoError(tb, json.Unmarshal(raw, &r))
	require.Len(tb, r.OverheadMS, hogRequests)
	return r
}

// TestHogChild is the child of runHogChild: hogRequests streams beside
// the hog, each TTFT compared with the server's own, audited.
func TestHogChild(t *testing.T) {
	hog := os.Getenv(envHog)
	if hog == "" {
		t.Skip("the child process of TestIntermittentStalls")
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	n, spin, period := parseHog(t, hog)
	for range n {
		wg.Go(func() { intermittent(&stop, spin, period) })
	}
	hc := &http.Client{}
	var r hogResult
	rec := Start(t.Context())
	for range hogRequests {
		t0 := time.Now()
		resp, err := hc.Get(os.Getenv(envHogURL))
		require.NoError(t, err)
		var ttft, server time.Duration
		for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
			switch data, ok := strings.CutPrefix(sc.Text(), "data: "); {
			case !ok:
			case data == "first":
				ttft = time.Since(t0)
			default:
				ns, err := strconv.ParseInt(data, 10, 64)
				require.NoError(t, err)
				server = time.Duration(ns)
			}
		}
		require.NoError(t, resp.Body.Close())
		r.OverheadMS = append(r.OverheadMS, float64(ttft-server)/float64(time.Millisecond))
	}
	r.Audit = *rec.Stop(Inputs{})
	stop.Store(true)
	wg.Wait()
	raw, err := json.Marshal(r)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(os.Getenv(envHogOut), raw, 0o600))
}

// intermittent takes a processor spin of every period until stop: it
// spins (never blocking; only the runtime's preemption, after 10 ms,
// lets another goroutine run) until spin after the period's start, then
// sleeps to the next period.
func intermittent(stop *atomic.Bool, spin, period time.Duration) {
	x := uint64(1)
	for start := time.Now(); !stop.Load(); start = start.Add(period) {
		for time.Since(start) < spin {
			for range 1000 {
				x = x*6364136223846793005 + 1442695040888963407
			}
		}
		time.Sleep(time.Until(start.Add(period)))
	}
	if x == 0 {
		panic("unreachable: keeps the loop")
	}
}

// intermittentTries is how often TestIntermittentStalls runs each hog.
const intermittentTries = 3

// TestIntermittentStalls: the client's processor taken 15 ms of every
// 50 ms (a goroutine spinning beside it at GOMAXPROCS=1) is audited
// suspect, with the intermittent-stall reason, in every try; the same
// client without the hog is ok in every try, unless the machine's own
// load delayed it, which the audit then names (requireQuiet).
//
// The hog provably moves the client's timings, which the test checks
// first: the server stamps its own first write, so the client's TTFT
// less the server's is what the client adds, and a third of the first
// events arrive while every processor spins, to wait for the runtime's
// preemption (10 ms) or the spin's end, whatever else the machine runs
// (a spinner the operating system deschedules still holds the
// processor): the p90 of what the client adds is milliseconds, where the
// quiet client's is a fraction of one. The
// held lag sees the stalls whatever the machine's own load: a hogged
// client burns CPU while its wake-ups wait, a quiet one on a loaded
// machine, whose wake-ups the operating system delays, does not.
func TestIntermittentStalls(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 6 child processes of about a second each")
	}
	srv := stampingServer(t)
	for try := range intermittentTries {
		for _, hog := range hogs[:2] {
			r := runHogChild(t, srv, hog)
			a := r.Audit
			t.Logf("try %d, hog %s: client adds %.2f ms at p90; held wake-up lag p90 %s ms, max %s ms; wake-up lag p50 %s ms; scheduler p99 %s ms: %s %q",
				try+1, hog, r.overheadP90(), show(a.HeldWakeLagP90MS), show(a.HeldWakeLagMaxMS), show(a.WakeLagP50MS), show(a.SchedLatencyP99MS), a.Verdict, a.Reasons)
			again := a
			Judge(&again, Resolution{})
			require.Equal(t, again.Reasons, a.Reasons, "the verdict is the rule's on the measured values")
			if hog == "none" {
				requireQuiet(t, a)
				continue
			}
			require.GreaterOrEqual(t, r.overheadP90(), ms(heldLagP90Limit), "try %d: the hog moves what the client adds to its TTFTs", try+1)
			require.Equal(t, "suspect", a.Verdict, "try %d", try+1)
			require.True(t, slices.ContainsFunc(a.Reasons, func(s string) bool { return strings.HasPrefix(s, "intermittent stalls: ") }),
				"try %d: the stall's own reason: %q", try+1, a.Reasons)
		}
	}
}

// show is *v with 3 significant digits, or "-".
func show(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'g', 3, 64)
}

// BenchmarkIntermittentStalls runs each hog once an iteration in a child
// process, as TestIntermittentStalls does, and reports per hog the share
// of tries audited suspect (suspect/try) and of those whose every reason
// names the machine's other load (machine/try), the median over tries of
// the p90 of what the client adds to its TTFTs (client-adds-p90-ms) and
// of the held wake-up lag p90:
//
//	go test ./capacity/internal/audit -run '^$' -bench IntermittentStalls -benchtime 6x
func BenchmarkIntermittentStalls(b *testing.B) {
	srv := stampingServer(b)
	for _, hog := range hogs {
		b.Run("hog="+hog, func(b *testing.B) {
			var adds, held []float64
			suspect, machine := 0, 0
			for b.Loop() {
				r := runHogChild(b, srv, hog)
				adds = append(adds, r.overheadP90())
				if r.Audit.HeldWakeLagP90MS != nil {
					held = append(held, *r.Audit.HeldWakeLagP90MS)
				}
				if r.Audit.Suspect() {
					suspect++
					if !slices.ContainsFunc(r.Audit.Reasons, func(s string) bool { return !strings.HasSuffix(s, machineLoad) }) {
						machine++
					}
				}
				b.Logf("hog %s: client adds %.2f ms at p90: %s %q", hog, r.overheadP90(), r.Audit.Verdict, r.Audit.Reasons)
			}
			b.ReportMetric(float64(suspect)/float64(b.N), "suspect/try")
			b.ReportMetric(float64(machine)/float64(b.N), "machine/try")
			b.ReportMetric(median(adds), "client-adds-p90-ms")
			if len(held) > 0 {
				b.ReportMetric(median(held), "held-lag-p90-ms")
			}
		})
	}
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
