package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// TestCompareSingleRunWithMergedShardRuns: three shard runs of one seeded
// open loop (capacity.Workload.Shard, in fake time against one fake
// server) merge with anvilreport merge, and anvilreport compare of a
// single run of the same workload against the merged artifact exits 0.
func TestCompareSingleRunWithMergedShardRuns(t *testing.T) {
	dir := t.TempDir()
	w := capacity.Workload{Requests: 24, Concurrency: 6, Seed: 5, MaxTokens: 32, ContextTokens: 512, Rate: 40}
	synctest.Test(t, func(t *testing.T) {
		target := func(srv *fakeserver.Server) capacity.Target {
			return capacity.Target{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client(), ClockDomainID: "test-clock"}
		}
		one := fakeserver.NewInMemory(fakeserver.Fast())
		defer one.Close()
		rep, err := capacity.Run(t.Context(), target(one), w)
		require.NoError(t, err)
		require.NoError(t, rep.WriteFile(filepath.Join(dir, "single.json")))

		srv := fakeserver.NewInMemory(fakeserver.Fast())
		defer srv.Close()
		at := time.Now().Add(time.Second)
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for k := range 3 {
			wg.Go(func() {
				sw := w
				sw.Shard = capacity.Shard{Index: k, Count: 3, StartAt: at}
				rep, err := capacity.Run(t.Context(), target(srv), sw)
				if err == nil {
					err = rep.WriteFile(filepath.Join(dir, fmt.Sprintf("shard-%d.json", k)))
				}
				errs[k] = err
			})
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
	})
	shards, err := filepath.Glob(filepath.Join(dir, "shard-*.json"))
	require.NoError(t, err)
	require.Len(t, shards, 3)
	merged := filepath.Join(dir, "merged.json")
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run(append([]string{"merge", "-o", merged}, shards...), &stdout, &stderr), stderr.String())
	stdout.Reset()
	require.Equal(t, 0, run([]string{"compare", filepath.Join(dir, "single.json"), merged}, &stdout, &stderr), stderr.String())
	require.Contains(t, stdout.String(), "TTFT p50")
}
