package fakeserver

import (
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// engineConfig is a config with round numbers: 1,000 prompt tokens prefill
// in exactly 1 ms, a decode step is 1 ms plus 250 µs per further sequence.
func engineConfig() Config {
	c := Fast()
	c.PrefillTokensPerSecond = 1_000_000
	c.DecodeStep = time.Millisecond
	c.DecodeStepPerSeq = 250 * time.Microsecond
	c.SpecTokens = Range{1, 1}
	c.CacheTokens = 0
	return c.withDefaults()
}

// contentPlan is a plan of n content tokens.
func contentPlan(n int) *outputPlan {
	p := &outputPlan{finish: "stop"}
	for range n {
		p.tokens = append(p.tokens, token{kindContent, " x"})
	}
	return p
}

// runEngine submits one sequence per prompt size (all before the engine's
// first step) and returns, per sequence, the scheduled time of each token
// (since t0) and its queueing time.
func runEngine(t *testing.T, cfg Config, prompts []int, tokens int) (times [][]time.Duration, queued []time.Duration) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		e := newEngine(&cfg)
		t0 := time.Now()
		var seqs []*seq
		for i, p := range prompts {
			s := newSeq(t0, p, nil, contentPlan(tokens), cfg.SpecTokens, rand.New(rand.NewPCG(1, uint64(i))))
			seqs = append(seqs, s)
			e.submit(s)
		}
		go e.run()
		times = make([][]time.Duration, len(seqs))
		for i, s := range seqs {
			for final := false; !final; {
				<-s.notify
				var outs []stepOut
				outs, final = s.take()
				for _, o := range outs {
					for range o.to - o.from {
						times[i] = append(times[i], o.at)
					}
				}
			}
			queued = append(queued, s.queued)
		}
		e.stop()
	})
	return times, queued
}

func ms(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }

// TestEngineBatch: four sequences prefill together (4,000 tokens: 4 ms),
// then decode in 1.75 ms steps (1 ms + 3 x 250 µs).
func TestEngineBatch(t *testing.T) {
	times, _ := runEngine(t, engineConfig(), []int{1000, 1000, 1000, 1000}, 5)
	want := []time.Duration{ms(4), ms(5.75), ms(7.5), ms(9.25), ms(11)}
	for i := range times {
		if diff := cmp.Diff(want, times[i]); diff != "" {
			t.Errorf("sequence %d token times (-want +got):\n%s", i, diff)
		}
	}
}

// TestEngineStepGrowsWithBatch: the inter-token gap is DecodeStep +
// (n-1) x DecodeStepPerSeq, so per-stream rate falls and aggregate rises.
func TestEngineStepGrowsWithBatch(t *testing.T) {
	for _, n := range []int{1, 2, 4, 8} {
		prompts := make([]int, n)
		for i := range prompts {
			prompts[i] = 10
		}
		times, _ := runEngine(t, engineConfig(), prompts, 4)
		gap := times[0][3] - times[0][2]
		want := time.Millisecond + time.Duration(n-1)*250*time.Microsecond
		if gap != want {
			t.Errorf("n=%d: gap %v, want %v", n, gap, want)
		}
	}
}

// TestEngineAdmissionQueue: with MaxSeqs 2 the third sequence waits until
// the first two finish.
func TestEngineAdmissionQueue(t *testing.T) {
	cfg := engineConfig()
	cfg.MaxSeqs = 2
	times, queued := runEngine(t, cfg, []int{1000, 1000, 1000}, 3)
	want := [][]time.Duration{
		{ms(2), ms(3.25), ms(4.5)}, // prefill 2,000 tokens, then 1.25 ms steps
		{ms(2), ms(3.25), ms(4.5)},
		{ms(5.5), ms(6.5), ms(7.5)}, // admitted at 4.5 ms, prefill 1 ms, 1 ms steps
	}
	if diff := cmp.Diff(want, times); diff != "" {
		t.Errorf("token times (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]time.Duration{0, 0, ms(4.5)}, queued); diff != "" {
		t.Errorf("queueing (-want +got):\n%s", diff)
	}
}

// TestEngineChunkedPrefill: a 20,000-token prompt prefills in three
// MaxBatchTokens chunks; the first token comes after exactly 20 ms.
func TestEngineChunkedPrefill(t *testing.T) {
	times, _ := runEngine(t, engineConfig(), []int{20000}, 2)
	if diff := cmp.Diff([]time.Duration{ms(20), ms(21)}, times[0]); diff != "" {
		t.Errorf("token times (-want +got):\n%s", diff)
	}
}

// TestEngineSpecTokens: each decode step accepts SpecTokens tokens; the
// first token comes alone from the prefill step.
func TestEngineSpecTokens(t *testing.T) {
	cfg := engineConfig()
	cfg.SpecTokens = Range{3, 3}
	times, _ := runEngine(t, cfg, []int{1000}, 8)
	want := []time.Duration{ms(1), ms(2), ms(2), ms(2), ms(3), ms(3), ms(3), ms(4)}
	if diff := cmp.Diff(want, times[0]); diff != "" {
		t.Errorf("token times (-want +got):\n%s", diff)
	}
}

// TestEngineTimeScale halves every duration at TimeScale 0.5.
func TestEngineTimeScale(t *testing.T) {
	cfg := engineConfig()
	cfg.TimeScale = 0.5
	times, _ := runEngine(t, cfg, []int{1000}, 3)
	if diff := cmp.Diff([]time.Duration{ms(0.5), ms(1), ms(1.5)}, times[0]); diff != "" {
		t.Errorf("token times (-want +got):\n%s", diff)
	}
}

func TestPrefixCacheLRU(t *testing.T) {
	c := newPrefixCache(4)
	a := blockHashes("aaaabbbbccccdddd", 4)
	c.insert(a)
	if got := c.lookup(a); got != 4 {
		t.Fatalf("lookup after insert = %d, want 4", got)
	}
	// A different first block changes every chained hash after it.
	if got := c.lookup(blockHashes("zzzzbbbbccccdddd", 4)); got != 0 {
		t.Errorf("lookup of another prefix = %d, want 0", got)
	}
	// Two new blocks evict the old prompt's tail first: its head survives.
	c.insert(blockHashes("eeeeffff", 4))
	if got := c.lookup(a); got != 2 {
		t.Errorf("lookup after eviction = %d, want 2 (head blocks kept)", got)
	}
	z := newPrefixCache(0)
	z.insert(a)
	if got := z.lookup(a); got != 0 {
		t.Errorf("a zero-capacity cache holds %d blocks", got)
	}
}
