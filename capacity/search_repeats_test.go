package capacity

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// noisyKnee is a server whose TTFT misses a 100 ms SLO with a probability
// set by the most requests it has had in flight, not monotone in them: 7%
// of requests miss at 3 or 4 (the noisy knee: an attainment near 0.93,
// drifting from run to run), none at 5 or 6, 20% at 7, half from 8 on. A
// miss answers after 300 ms, the rest after 20 ms. Each request's draw is
// seeded by the server's seed and its arrival count, so a run is exact
// and each server (one per probe) draws anew.
type noisyKnee struct {
	seed uint64

	mu             sync.Mutex
	inFlight, peak int
	seen           uint64
}

func (s *noisyKnee) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	s.inFlight++
	s.peak = max(s.peak, s.inFlight)
	s.seen++
	n, k := s.peak, s.seen
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	miss := map[int]float64{3: 0.07, 4: 0.07, 7: 0.2}[n]
	if n >= 8 {
		miss = 0.5
	}
	ttft := 20 * time.Millisecond
	if rand.New(rand.NewPCG(s.seed, k)).Float64() < miss {
		ttft = 300 * time.Millisecond
	}
	time.Sleep(ttft)
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\n")
	w.(http.Flusher).Flush()
	time.Sleep(50 * time.Millisecond)
	_, _ = fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":250,\"completion_tokens\":20,\"total_tokens\":270}}\n\ndata: [DONE]\n\n")
}

// TestSearchRepeatsNoisyKnee: a concurrency search with 3 runs a value on
// the noisy knee reports the knee (6: every run attains 1; 7 fails every
// run) and that it is sure of it, judges each value by the interval of
// its attainment (4 is unsure: its runs straddle 0.9), and names
// concurrency 4 as non-monotone: it attains less than 6, beyond both
// intervals.
func TestSearchRepeatsNoisyKnee(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A fresh server per probe: its peak is the probe's concurrency.
		prober := ProberFunc(func(ctx context.Context, w Workload, p artifact.SearchProbe) (*artifact.Report, error) {
			return Run(ctx, pipeTarget(t, &noisyKnee{seed: uint64(p.Probe)}), w)
		})
		res, err := Search(t.Context(), prober, Workload{ContextTokens: 256, Requests: 400},
			SLO{TTFT: 100 * time.Millisecond}, SearchSpec{Kind: "concurrency", Max: 16, Repeats: 3})
		require.NoError(t, err)
		require.Equal(t, 6.0, res.Best)
		require.Equal(t, 7.0, res.Failed)
		require.True(t, res.Sure, "%+v", res.Values)
		require.Equal(t, 3, res.Repeats)

		var probed []float64
		for _, v := range res.Values {
			probed = append(probed, v.Value)
			require.Len(t, v.Attained, 3)
		}
		require.Equal(t, []float64{1, 2, 4, 8, 6, 7}, probed)
		require.Len(t, res.Runs, 3*len(res.Values))
		for i, r := range res.Runs {
			v := res.Values[i/3]
			require.Equal(t, v.Value, r.AnvilGo.Search.Value)
			require.Equal(t, i%3, *r.AnvilGo.Search.Repeat)
			require.Equal(t, v.Attained[i%3], r.AnvilGo.SLO.Attained)
		}
		unsteady := 0
		for _, r := range res.Runs[:3] {
			if !r.AnvilGo.Steady.Found {
				unsteady++
			}
		}
		require.Equal(t, unsteady, res.Values[0].Unsteady, "the runs without a steady window are counted")

		byValue := map[float64]SearchValue{}
		for _, v := range res.Values {
			byValue[v.Value] = v
		}
		six, seven, four := byValue[6], byValue[7], byValue[4]
		require.Equal(t, "pass", six.Verdict)
		require.Equal(t, "fail", seven.Verdict)
		require.GreaterOrEqual(t, six.Low, 0.9)
		require.Less(t, seven.High, 0.9)
		require.Equal(t, "unsure", four.Verdict, "the noisy knee: %v", four.Attained)
		require.Less(t, four.High, six.Low, "4 attains less than 6")
		require.Contains(t, res.NonMonotone, fmt.Sprintf(
			"attainment rose from %.3f [%.3f, %.3f] at concurrency 4 to %.3f [%.3f, %.3f] at 6: not monotone in the load",
			four.Mean, four.Low, four.High, six.Mean, six.Low, six.High))
	})
}

// TestSearchValueVerdicts: a value is judged by the interval of its
// attainment: above the SLO's, below it, or holding it; one run has no
// interval and is judged by its attainment alone.
func TestSearchValueVerdicts(t *testing.T) {
	for _, tc := range []struct {
		attained []float64
		want     string
	}{
		{[]float64{0.95, 0.96, 0.97}, "pass"},
		{[]float64{0.80, 0.82, 0.81}, "fail"},
		{[]float64{0.88, 0.93, 0.91}, "unsure"},
		{[]float64{0.9}, "pass"},
		{[]float64{0.89}, "fail"},
		{[]float64{1, 1, 1}, "pass"},
	} {
		v := SearchValue{Attained: tc.attained}
		v.judge(0.9)
		require.Equal(t, tc.want, v.Verdict, "%v", tc.attained)
	}
}
