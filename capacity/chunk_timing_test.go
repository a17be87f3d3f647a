package capacity

import (
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/itl"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// ignoreChunkShape compares chunk timing members by their values.
var ignoreChunkShape = cmpopts.IgnoreUnexported(artifact.ChunkTiming{}, artifact.Quantiles{}, artifact.StallRule{})

// stallingStream is an independent server: every answer is chunks content
// chunks, gap apart, except that every stallEvery-th gap lasts stall; its
// usage reports tokensPerChunk tokens per chunk and no prompt count.
type stallingStream struct {
	chunks, stallEvery, tokensPerChunk int
	gap, stall                         time.Duration
}

func (s stallingStream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	f := w.(http.Flusher)
	fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n") // not an output event
	f.Flush()
	for i := range s.chunks {
		if i > 0 {
			if i%s.stallEvery == 0 {
				time.Sleep(s.stall)
			} else {
				time.Sleep(s.gap)
			}
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ab \"}}]}\n\n")
		f.Flush()
	}
	fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n"+
		"data: {\"choices\":[],\"usage\":{\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", s.chunks*s.tokensPerChunk)
}

// TestChunkTimingStalls is the acceptance test of chunk timing: 16
// requests of 100 chunks 4 ms apart, every 10th gap an 80 ms stall, 2
// tokens per chunk. Under fake time every gap is exact.
func TestChunkTimingStalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := stallingStream{chunks: 100, stallEvery: 10, tokensPerChunk: 2, gap: 4 * time.Millisecond, stall: 80 * time.Millisecond}
		rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 16, Concurrency: 4, ContextTokens: 512, MaxTokens: 256})
		require.NoError(t, err)
		require.Equal(t, 16, rep.Completed, "failures: %+v", rep.Failures)

		two := 2.0
		want := &artifact.ChunkTiming{
			ITLMS:     artifact.Quantiles{P50: 4, P90: 4, P99: 80, P999: 80, Max: 80},
			Gaps:      16 * 99,
			Exact:     true,
			Stalls:    16 * 9,
			StallRule: artifact.StallRule{Relative: itl.DefaultStallRelative, FloorMS: 50},
			// 200 usage tokens over 100 chunks.
			TokensPerChunkMean: &two,
		}
		if diff := cmp.Diff(want, rep.AnvilGo.ChunkTiming, ignoreChunkShape); diff != "" {
			t.Fatalf("chunk_timing (-want +got):\n%s", diff)
		}
		for i := range 16 {
			d := rep.AnvilGo.Request(i)
			require.NotNil(t, d)
			require.Empty(t, cmp.Diff(&artifact.Quantiles{P50: 4, P90: 4, P99: 80, Max: 80}, d.ITLMS, ignoreChunkShape), "request %d", i)
			require.Equal(t, 100, d.OutputChunks)
			require.Equal(t, 9, d.Stalls)
			require.Equal(t, 2.0, *d.TokensPerChunk)
		}
	})
}

// TestChunkTimingStallThreshold: Workload.StallThreshold replaces the
// relative rule: above 100 ms nothing of the stream above stalls, and its
// value is recorded.
func TestChunkTimingStallThreshold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := stallingStream{chunks: 20, stallEvery: 5, tokensPerChunk: 1, gap: 4 * time.Millisecond, stall: 80 * time.Millisecond}
		for _, tt := range []struct {
			threshold time.Duration
			stalls    int
		}{{0, 3}, {100 * time.Millisecond, 0}, {5 * time.Millisecond, 3}, {time.Millisecond, 19}} {
			rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 2, Concurrency: 1, ContextTokens: 512, StallThreshold: tt.threshold})
			require.NoError(t, err)
			ct := rep.AnvilGo.ChunkTiming
			require.Equal(t, 2*tt.stalls, ct.Stalls, "threshold %v", tt.threshold)
			if tt.threshold == 0 {
				require.Nil(t, ct.StallRule.OverrideMS)
			} else {
				require.Equal(t, client.MS(tt.threshold), *ct.StallRule.OverrideMS)
			}
		}
	})
}

// TestChunkTimingAgainstFakeTrace: against the fake's periodic stalls and
// fixed tokens per chunk, every request's gaps, stalls and tokens per
// chunk are those of the server's trace (its write offsets of the
// reasoning and content chunks), and the run's distribution is theirs.
func TestChunkTimingAgainstFakeTrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fakeserver.Fast()
		cfg.StallEvery, cfg.StallFor, cfg.TokensPerChunk = 7, 300*time.Millisecond, 3
		srv := fakeserver.NewInMemory(cfg)
		defer srv.Close()
		const seed = 5
		rep, err := Run(t.Context(), Target{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client(), MetricsURL: "off"},
			Workload{Requests: 12, Concurrency: 3, Seed: seed, MaxTokens: 200, RequestCanaries: true, ContextTokens: 1024})
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 12, rep.Completed, "failures: %+v", rep.Failures)
		traces := tracesByIndex(t, srv, seed)

		all, err := itl.NewRun(itl.DefaultStallRule())
		require.NoError(t, err)
		stalled := 0
		for i := range 12 {
			tr := traces[i]
			var s itl.Stream
			for _, c := range tr.Chunks {
				if c.Kind == "reasoning" || c.Kind == "content" {
					s.Add(c.Written)
				}
			}
			tokens := tr.CompletionTokens
			want, err := all.Record(&s, &tokens)
			require.NoError(t, err)
			stalled += want.Stalls
			d := rep.AnvilGo.Request(i)
			require.Equal(t, want.OutputChunks, d.OutputChunks, "request %d", i)
			require.Equal(t, want.Stalls, d.Stalls, "request %d", i)
			require.Equal(t, *want.TokensPerChunk, *d.TokensPerChunk, "request %d", i)
			require.Empty(t, cmp.Diff(&artifact.Quantiles{P50: want.ITL.P50, P90: want.ITL.P90, P99: want.ITL.P99, Max: want.ITL.Max}, d.ITLMS, ignoreChunkShape), "request %d", i)
		}
		require.Positive(t, stalled, "the fake stalled")
		wantRun := client.ChunkTimingOf(all)
		// The run's tokens-per-chunk mean is a float sum the client merges
		// per worker in the order the workers end, which the scheduler
		// chooses: equal up to the last bits, not bit for bit.
		if diff := cmp.Diff(wantRun, rep.AnvilGo.ChunkTiming, ignoreChunkShape, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
			t.Fatalf("chunk_timing (-trace +client):\n%s", diff)
		}
		require.Greater(t, rep.AnvilGo.ChunkTiming.ITLMS.Max, 300.0, "a stall is in the distribution")
	})
}

// TestChunkTimingFailuresAndNone: a failed request keeps its own chunk
// summary but stays out of the run's distribution, and a run without any
// gap has no chunk_timing.
func TestChunkTimingFailuresAndNone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rep, err := Run(t.Context(), pipeTarget(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			raw, _ := io.ReadAll(r.Body)
			wiretest.WriteOKStream(w, raw) // one content chunk: no gap
		})), Workload{Requests: 3, Concurrency: 1, ContextTokens: 512})
		require.NoError(t, err)
		require.Nil(t, rep.AnvilGo.ChunkTiming)
		d := rep.AnvilGo.Request(0)
		require.Nil(t, d.ITLMS)
		require.Equal(t, 1, d.OutputChunks)
		require.Equal(t, 3.0, *d.TokensPerChunk)

		// The second request (concurrency 1: request 1) is cut after its
		// chunks: a drop, so a failure.
		h := stallingStream{chunks: 10, stallEvery: 3, tokensPerChunk: 1, gap: 4 * time.Millisecond, stall: 90 * time.Millisecond}
		var arrived atomic.Int32
		rep, err = Run(t.Context(), pipeTarget(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if arrived.Add(1) == 2 {
				stallingStream{chunks: 10, stallEvery: 100, gap: time.Millisecond}.writeChunksOnly(w)
				panic(http.ErrAbortHandler)
			}
			h.ServeHTTP(w, r)
		})), Workload{Requests: 3, Concurrency: 1, ContextTokens: 512})
		require.NoError(t, err)
		require.Equal(t, 2, rep.Completed)
		failed := rep.AnvilGo.Request(1)
		require.Equal(t, string(artifact.FailureStreamValidation), failed.Outcome)
		require.Equal(t, 10, failed.OutputChunks)
		require.Equal(t, 1.0, failed.ITLMS.Max, "its own gaps")
		ct := rep.AnvilGo.ChunkTiming
		require.Equal(t, 2*9, ct.Gaps, "only the two successful streams")
		require.Equal(t, 2*3, ct.Stalls)
	})
}

// writeChunksOnly writes the content chunks of s and nothing else.
func (s stallingStream) writeChunksOnly(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	f := w.(http.Flusher)
	for i := range s.chunks {
		if i > 0 {
			time.Sleep(s.gap)
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ab \"}}]}\n\n")
		f.Flush()
	}
}

// TestStallThresholdValidation: the bounds of Workload.StallThreshold and
// Workload.PromptSizing, as *FieldError naming the field.
func TestStallThresholdValidation(t *testing.T) {
	tests := []struct {
		name  string
		w     Workload
		field string
		rule  string
	}{
		{"negative threshold", Workload{StallThreshold: -time.Millisecond}, "Workload.StallThreshold", "must be 0 (the relative stall rule) or in (0s, Timeout = 15m0s]"},
		{"threshold over timeout", Workload{Timeout: time.Second, StallThreshold: 2 * time.Second}, "Workload.StallThreshold", "must be 0 (the relative stall rule) or in (0s, Timeout = 1s]"},
		{"unknown sizing", Workload{PromptSizing: "tokens"}, "Workload.PromptSizing", `must be "reference" or "exact"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.w.Resolved()
			var ce *FieldError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, tt.field, ce.Field)
			require.Equal(t, tt.rule, ce.Rule)
		})
	}
	for _, ok := range []Workload{{StallThreshold: time.Second}, {PromptSizing: promptSizingExact}, {Timeout: time.Second, StallThreshold: time.Second}} {
		_, err := ok.Resolved()
		require.NoError(t, err)
	}
}
