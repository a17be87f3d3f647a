package anviltest

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/merge"
	fakeserver "github.com/anvilbench/anvil/fake_server"
	"github.com/anvilbench/anvil/reporters"
)

// shardChildEnv makes BenchmarkShardChild run; unset, it skips.
const shardChildEnv = "ANVILTEST_SHARD_CHILD" // not ANVIL_*: anviltest would refuse it as unknown

// shardChildSeed seeds the workload of BenchmarkShardChild; its canary
// markers name it.
const shardChildSeed = 11

// BenchmarkShardChild is the workload the shard-process tests run, whole or
// as a shard (ANVIL_SHARD, ANVIL_START_AT from the parent): a short seeded
// open loop with request canaries, so the server can tell every request
// apart.
func BenchmarkShardChild(b *testing.B) {
	if os.Getenv(shardChildEnv) == "" {
		b.Skip("run by TestShardProcesses with " + shardChildEnv + " set")
	}
	Capacity(b, capacity.Workload{Requests: 24, Concurrency: 8, Seed: shardChildSeed, MaxTokens: 32,
		ContextTokens: 512, RequestCanaries: true, Rate: 40, Arrival: "poisson"})
}

// arrival is one chat request as the recording server saw it.
type arrival struct {
	at   time.Time
	body [sha256.Size]byte
}

// arrivalRecorder is a plain HTTP server in front of the fake that records when
// each chat request arrived and its body's SHA-256, by canary index.
type arrivalRecorder struct {
	fake *fakeserver.Server
	srv  *httptest.Server
	mu   sync.Mutex
	seen map[int][]arrival
}

var canaryIndex = regexp.MustCompile("ANVIL_REQ_" + strconv.Itoa(shardChildSeed) + `_(\d+)`)

func newArrivalRecorder(t *testing.T) *arrivalRecorder {
	r := &arrivalRecorder{fake: fakeserver.New(fakeserver.Fast()), seen: map[int][]arrival{}}
	r.srv = httptest.NewServer(r)
	t.Cleanup(func() { r.srv.Close(); r.fake.Close() })
	return r
}

// ServeHTTP records a chat request and forwards every request to the fake,
// streaming its answer back.
func (r *arrivalRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return
	}
	if m := canaryIndex.FindSubmatch(body); m != nil && strings.HasSuffix(req.URL.Path, "/chat/completions") {
		i, _ := strconv.Atoi(string(m[1]))
		r.mu.Lock()
		r.seen[i] = append(r.seen[i], arrival{now, sha256.Sum256(body)})
		r.mu.Unlock()
	}
	out, err := http.NewRequestWithContext(req.Context(), req.Method, r.fake.URL+req.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	out.Header = req.Header.Clone()
	resp, err := r.fake.Client().Do(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			w.Write(buf[:n])
			w.(http.Flusher).Flush()
		}
		if err != nil {
			return
		}
	}
}

// shardChild runs BenchmarkShardChild against base with the extra
// variables, artifacts in out; it returns the output and the error.
func shardChild(t *testing.T, base, out string, extra ...string) *exec.Cmd {
	env := []string{shardChildEnv + "=1", envBaseURL + "=" + base, envOut + "=" + out, envProgress + "=0",
		envClockDomainID + "=test-host-clock"}
	return childCommand(t, append(env, extra...), "-test.run=^$", "-test.bench=^BenchmarkShardChild$", "-test.benchtime=1x")
}

// readShardArtifact reads the one JSON artifact in dir.
func readShardArtifact(t *testing.T, dir string) (string, []byte) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	require.Len(t, paths, 1, "artifacts in %s", dir)
	data, err := os.ReadFile(paths[0])
	require.NoError(t, err)
	return paths[0], data
}

// TestShardProcesses: N = 1, 2, 3 and 8 shard processes (this test binary
// re-executed with ANVIL_SHARD=i/N and one ANVIL_START_AT) of one seeded
// open loop against one server send every planned request exactly once,
// byte for byte the single process's request, none before its global
// offset from the common start; their artifacts merge (artifact.Merge) into
// the single process's plan (contexts, schedule, request bytes) with v1
// metrics that are Recompute's, comparable with the single run
// (reporters.Compare, what anvilreport compare exits 0 on). A shard started
// after ANVIL_START_AT fails saying how late it was, its artifact written.
func TestShardProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	dir := t.TempDir()
	counts := []int{1, 2, 3, 8}
	single := newArrivalRecorder(t)
	servers := make([]*arrivalRecorder, len(counts))
	for c := range counts {
		servers[c] = newArrivalRecorder(t)
	}
	late := newArrivalRecorder(t)
	// A lead for 15 processes to start, probe and plan on a loaded host.
	start := time.Now().Add(5 * time.Second).UTC().Truncate(time.Millisecond)
	type proc struct {
		cmd *exec.Cmd
		out bytes.Buffer
		dir string
	}
	var procs []*proc
	add := func(base, name string, extra ...string) *proc {
		p := &proc{dir: filepath.Join(dir, name)}
		require.NoError(t, os.Mkdir(p.dir, 0o755))
		p.cmd = shardChild(t, base, p.dir, extra...)
		p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
		procs = append(procs, p)
		return p
	}
	wholeRun := add(single.srv.URL+"/v1", "single")
	shards := make([][]*proc, len(counts))
	for c, n := range counts {
		for k := range n {
			shards[c] = append(shards[c], add(servers[c].srv.URL+"/v1", fmt.Sprintf("n%d-shard%d", n, k),
				envShard+"="+fmt.Sprintf("%d/%d", k, n), envStartAt+"="+start.Format(time.RFC3339Nano)))
		}
	}
	lateRun := add(late.srv.URL+"/v1", "late", envShard+"=1/2", envStartAt+"="+time.Now().Add(-time.Hour).UTC().Format(time.RFC3339))
	for _, p := range procs {
		require.NoError(t, p.cmd.Start())
	}
	errs := make([]error, len(procs))
	for i, p := range procs {
		errs[i] = p.cmd.Wait()
	}
	for i, p := range procs {
		if p != lateRun {
			require.NoError(t, errs[i], "%s:\n%s", p.dir, p.out.String())
		}
	}

	// The late shard: failed, how late named, its artifact written.
	require.Error(t, errs[len(procs)-1])
	require.Regexp(t, `shard 1 of 2 was ready 1h0m[0-9.]+s after Workload.Shard.StartAt`, lateRun.out.String())
	require.Regexp(t, `ANVIL_START_AT had passed 1h0m[0-9.]+s before this benchmark began: one ANVIL_START_AT starts one benchmark's measured phase, so run each sub-benchmark as a command of its own`, lateRun.out.String())
	_, lateData := readShardArtifact(t, lateRun.dir)
	lateRep, err := artifact.Read(bytes.NewReader(lateData))
	require.NoError(t, err)
	require.Contains(t, *lateRep.AnvilGo.Run.StopReason, "after Workload.Shard.StartAt")
	require.Zero(t, lateRep.SentRequests())
	require.Empty(t, late.seen, "a late shard sends nothing")

	_, singleData := readShardArtifact(t, wholeRun.dir)
	singleRep, err := artifact.Read(bytes.NewReader(singleData))
	require.NoError(t, err)
	require.Equal(t, 24, singleRep.Completed, "failures: %+v", singleRep.Failures)
	type planned struct {
		Index, Context int
		ScheduledMS    float64
		Body           [sha256.Size]byte
	}
	planOf := func(r *artifact.Report, rec *arrivalRecorder) []planned {
		var out []planned
		for _, d := range r.AnvilGo.Requests {
			seen := rec.seen[d.RequestIndex]
			require.Len(t, seen, 1, "request %d reached the server once", d.RequestIndex)
			// No request leaves before its due time: its arrival on
			// this host's clock is at or after its start + offset.
			due := time.Unix(0, r.StartedAtUnixNS).Add(time.Duration(*d.ScheduledMS * 1e6))
			require.False(t, seen[0].at.Before(due.Add(-time.Millisecond)), "request %d arrived %v before its due time", d.RequestIndex, due.Sub(seen[0].at))
			out = append(out, planned{d.RequestIndex, d.PlannedPromptTokens, *d.ScheduledMS, seen[0].body})
		}
		require.Len(t, rec.seen, len(out), "the server saw only planned requests")
		return out
	}
	want := planOf(singleRep, single)

	for c, n := range counts {
		t.Run(fmt.Sprintf("shards=%d", n), func(t *testing.T) {
			files := make([]merge.Artifact, n)
			for k, p := range shards[c] {
				name, data := readShardArtifact(t, p.dir)
				files[k] = merge.Artifact{Name: name, Data: data}
			}
			merged, err := merge.Shards(files...)
			require.NoError(t, err)
			require.Equal(t, start.UnixNano(), merged.AnvilGo.Shards.StartAtUnixNS)
			require.Equal(t, start.UnixNano(), merged.StartedAtUnixNS, "every shard started at the common start")
			if diff := cmp.Diff(want, planOf(merged, servers[c])); diff != "" {
				t.Fatalf("plan (-single process +merged shards):\n%s", diff)
			}
			require.Equal(t, singleRep.ContextDistribution, merged.ContextDistribution)
			require.Equal(t, singleRep.MaxTokens, merged.MaxTokens)
			require.Equal(t, singleRep.Concurrency, merged.Concurrency)
			require.Equal(t, singleRep.AnvilGo.Arrival.OfferedRPS, merged.AnvilGo.Arrival.OfferedRPS)
			again := *merged
			require.NoError(t, again.Recompute())
			var a, b bytes.Buffer
			_, err = merged.WriteTo(&a)
			require.NoError(t, err)
			_, err = again.WriteTo(&b)
			require.NoError(t, err)
			require.Equal(t, a.String(), b.String(), "the merged v1 metrics are Recompute's of its rows")
			_, err = reporters.Compare([]*artifact.Report{singleRep}, []*artifact.Report{merged})
			require.NoError(t, err, "the single run and the merged shards are one workload")
		})
	}
}
