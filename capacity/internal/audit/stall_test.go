package audit

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/stretchr/testify/require"
)

// The environment of TestAuditChild, set by TestStalledClient.
const (
	envChildMode = "ANVIL_AUDIT_CHILD"     // "stall" or "quiet"
	envChildURL  = "ANVIL_AUDIT_CHILD_URL" // the server the child's client requests
	envChildOut  = "ANVIL_AUDIT_CHILD_OUT" // where the child writes its audit (JSON)
)

// childRequests is the measured phase of a child: sequential requests to
// the parent's server, each of which costs the server about 10 ms of
// hashing (no timer anywhere: the client waits for the server's work).
const childRequests = 30

// TestStalledClient: the same client in a child process with
// GOMAXPROCS=1, once with a goroutine spinning beside it for the whole
// measured phase and once without, is audited suspect with the
// scheduler's reason and ok.
//
// Why the stalled verdict cannot come out ok by chance: with one
// processor held by a goroutine that never blocks, the scheduler runs only
// when the system monitor preempts it, at least 10 ms after it got the
// processor, so every wake-up of the probe (due wakePeriod = 5 ms after
// the previous one) runs at least 5 ms late, whatever else the machine
// does (an operating system that runs the process later makes it later
// still): its median is above wakeLagP50Limit. The quiet child waits for
// the server (another process) and wakes up on time; its probe's median
// is the timer's slack, about 0.1 ms.
func TestStalledClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two child processes of about a second each")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintf(w, "data: %x\n\n", serverWork())
	}))
	defer srv.Close()
	for _, tc := range []struct {
		mode    string
		verdict string
	}{{"stall", "suspect"}, {"quiet", "ok"}} {
		t.Run(tc.mode, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "audit.json")
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestAuditChild$", "-test.count=1", "-test.v")
			// GOGC=off: the children collect no garbage, so the verdict
			// is the scheduler's alone (on a loaded machine a
			// stop-the-world pause stretches to tens of milliseconds and
			// adds its own, true, reason, which is not what this tests).
			cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "GOGC=off",
				envChildMode+"="+tc.mode, envChildURL+"="+srv.URL, envChildOut+"="+out)
			log, err := cmd.CombinedOutput()
			require.NoError(t, err, "the child: %s", log)
			raw, err := os.ReadFile(out)
			require.NoError(t, err, "the child: %s", log)
			var a artifact.Audit
			require.NoError(t, json.Unmarshal(raw, &a))
			t.Logf("%s: %s", tc.mode, raw)

			require.Equal(t, 1, a.GOMAXPROCS)
			require.Positive(t, a.WakeSamples)
			require.NotNil(t, a.WakeLagP50MS)
			again := a
			Judge(&again, Resolution{})
			require.Equal(t, again.Reasons, a.Reasons, "the verdict is the rule's on the measured values")
			if tc.verdict == "ok" {
				requireQuiet(t, a)
				return
			}
			require.Equal(t, tc.verdict, a.Verdict, "reasons %q", a.Reasons)
			require.GreaterOrEqual(t, a.WakeSamples, wakeMinSamples, "enough wake-ups for the rule")
			require.GreaterOrEqual(t, *a.WakeLagP50MS, 5.0, "each wake-up waited for the preemption, 10 ms after the previous")
			require.True(t, strings.HasPrefix(a.Reasons[0], "scheduler latency"), "the scheduler's reason first: %q", a.Reasons)
			require.Contains(t, a.Reasons, fmt.Sprintf(
				"scheduler latency: the client's wake-ups ran %.3g ms late at the median (p99 %.3g ms): timings below ~%.2g ms resolution are not trustworthy",
				*a.WakeLagP50MS, *a.WakeLagP99MS, *a.WakeLagP50MS))
		})
	}
}

// requireQuiet: a quiet child's audit is ok, unless the machine itself
// delayed it: every reason is then the wake-up median's, naming the
// machine's other processes (its own work held it up under
// heldLagP90Limit). A machine busy enough to make a quiet client's median
// wake-up 2 ms late distorts its timings, and the audit is right to say
// so; what it must never do is blame the client's own work.
func requireQuiet(t *testing.T, a artifact.Audit) {
	t.Helper()
	if a.Verdict == "ok" {
		require.Equal(t, []string{}, a.Reasons)
		return
	}
	require.Equal(t, "suspect", a.Verdict)
	for _, r := range a.Reasons {
		require.True(t, strings.HasSuffix(r, machineLoad), "a quiet client's reason blames its own work: %q", r)
	}
	t.Logf("the machine itself delayed the quiet child: %q", a.Reasons)
}

// TestAuditChild is the child of TestStalledClient: it audits
// childRequests sequential requests, beside a spinning goroutine in mode
// "stall", and writes the audit to envChildOut.
func TestAuditChild(t *testing.T) {
	mode := os.Getenv(envChildMode)
	if mode == "" {
		t.Skip("the child process of TestStalledClient")
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	if mode == "stall" {
		wg.Go(func() { spin(&stop) })
	}
	hc := &http.Client{}
	rec := Start(t.Context())
	for range childRequests {
		resp, err := hc.Get(os.Getenv(envChildURL))
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
	}
	a := rec.Stop(Inputs{})
	stop.Store(true)
	wg.Wait()
	raw, err := json.Marshal(a)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(os.Getenv(envChildOut), raw, 0o600))
}

// spin keeps a processor busy until stop, never blocking.
func spin(stop *atomic.Bool) {
	x := uint64(1)
	for !stop.Load() {
		x = x*6364136223846793005 + 1442695040888963407
	}
	if x == 0 {
		panic("unreachable: keeps the loop")
	}
}

// serverWork is a request's work on the server: hashing 4 MiB.
func serverWork() [sha256.Size]byte {
	buf := make([]byte, 64<<10)
	h := sha256.New()
	for range 64 {
		h.Write(buf)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
