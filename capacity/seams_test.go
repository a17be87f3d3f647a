package capacity

import (
	gocmp "cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/prompt"
)

// seenRequest is what a test server saw of one chat request.
type seenRequest struct {
	At        time.Duration // arrival, from the server's start (fake time)
	MaxTokens int
	Messages  []Message
	CachePrm  *bool // the cache_prompt body field, when sent
}

// answeringServer answers every chat request after 100 ms with one
// content chunk "answer to <last user message>" and usage, and records
// what it saw, in arrival order.
type answeringServer struct {
	start time.Time
	mu    sync.Mutex
	seen  []seenRequest
}

func (s *answeringServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body struct {
		MaxTokens int `json:"max_tokens"`
		Messages  []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		CachePrompt *bool `json:"cache_prompt"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	seen := seenRequest{At: time.Since(s.start), MaxTokens: body.MaxTokens, CachePrm: body.CachePrompt}
	counted := 0
	last := ""
	for _, m := range body.Messages {
		seen.Messages = append(seen.Messages, Message{Role: m.Role, Content: m.Content})
		counted += int(float64(len(m.Content)) / prompt.CharsPerToken)
		if m.Role == "user" {
			last = m.Content
		}
	}
	s.mu.Lock()
	s.seen = append(s.seen, seen)
	s.mu.Unlock()
	time.Sleep(100 * time.Millisecond)
	if len(last) > 20 {
		last = last[:20]
	}
	answer, _ := json.Marshal("answer to " + last)
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%s}}]}\n\n"+
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":3,\"total_tokens\":%d}}\n\n"+
		"data: [DONE]\n\n", answer, max(counted, 1), max(counted, 1)+3)
}

// session is a Source of two planned requests and a two-turn session
// whose second turn carries the first turn's actual answer.
type session struct {
	answers map[int]string
}

func (s *session) Request(_ context.Context, i int) (Request, error) {
	switch i {
	case 0:
		return Request{PromptTokens: 200, MaxTokens: 7}, nil
	case 1:
		return Request{Messages: []Message{{Role: "user", Content: "hello"}}, MaxTokens: 11,
			Body: map[string]json.RawMessage{"cache_prompt": json.RawMessage("true")}, Session: "s", Turn: 0}, nil
	case 2:
		return Request{Messages: []Message{
			{Role: "user", Content: "hello"}, {Role: "assistant", Content: s.answers[1]}, {Role: "user", Content: "and then?"},
		}, Session: "s", Turn: 1}, nil
	}
	return Request{PromptTokens: 100}, nil
}

func (s *session) Answer(_ context.Context, i int, a Answer) {
	if a.OK && !a.Truncated {
		s.answers[i] = a.Content
	}
}

// TestSourceAndSchedule plugs a Source and a Schedule written here into a
// run against a plain handler: every request is sent at its due time
// (fake time), with its own max_tokens and body fields, and the session's
// second turn carries the answer the server gave to the first.
func TestSourceAndSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &answeringServer{start: time.Now()}
		src := &session{answers: map[int]string{}}
		sched := ScheduleFunc(func(_ context.Context, i int) Due {
			switch i {
			case 0:
				return DueAt(0)
			case 1:
				return DueAt(2 * time.Second)
			case 2:
				return DueAfter(1, 500*time.Millisecond) // think 500 ms after turn 0 ended
			}
			return DueAt(time.Second) // due long before, held back by request 2 (FIFO)
		})
		rep, err := Run(t.Context(), pipeTarget(t, srv), Workload{
			Requests: 4, Concurrency: 2, MaxTokens: 33, Source: src, Schedule: sched,
		})
		require.NoError(t, err)
		require.Equal(t, 4, rep.Completed, "failures: %+v", rep.Failures)

		// Turn 0 ended at 2 s + 100 ms; turn 1 is due 500 ms later.
		want := []seenRequest{
			{At: 0, MaxTokens: 7},
			{At: 2 * time.Second, MaxTokens: 11, Messages: []Message{{Role: "user", Content: "hello"}}, CachePrm: new(true)},
			{At: 2600 * time.Millisecond, MaxTokens: 33, Messages: []Message{
				{Role: "user", Content: "hello"}, {Role: "assistant", Content: "answer to hello"}, {Role: "user", Content: "and then?"},
			}},
			{At: 2600 * time.Millisecond, MaxTokens: 33},
		}
		got := srv.seen
		require.Len(t, got, 4)
		// Requests 2 and 3 arrive at one instant, in either order: the
		// session's turn (three messages) first.
		slices.SortStableFunc(got, func(a, b seenRequest) int {
			return gocmp.Or(gocmp.Compare(a.At, b.At), len(b.Messages)-len(a.Messages))
		})
		for _, i := range []int{0, 3} { // planned prompts: the plan's layout, one user message
			require.Len(t, got[i].Messages, 1)
			require.Equal(t, "user", got[i].Messages[0].Role)
			got[i].Messages = nil
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("what the server saw (-want +got):\n%s", diff)
		}
		// The planned prompts are sized for their tokens.
		require.Equal(t, 200, rep.RequestTimings[0].PlannedContextTokens)
		require.Equal(t, 100, rep.RequestTimings[3].PlannedContextTokens)
		require.Equal(t, 0, rep.RequestTimings[1].PlannedContextTokens, "messages without a plan")
		require.Equal(t, map[int]int{200: 1, 0: 2, 100: 1}, rep.ContextDistribution)

		// Request 3 was due at 1 s and left at 2.6 s: 1.6 s of queue.
		d := rep.AnvilGo.Requests[3]
		require.Equal(t, 1000.0, *d.ScheduledMS)
		require.Equal(t, 1600.0, *d.QueueMS)
		require.Equal(t, 2600.0, *rep.AnvilGo.Requests[2].ScheduledMS)
	})
}

// TestSourceRequestRefused: a request whose Source sets a field the
// engine controls is a runner_error row, never sent; the others go.
func TestSourceRequestRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &answeringServer{start: time.Now()}
		src := SourceFunc(func(_ context.Context, i int) (Request, error) {
			if i == 1 {
				return Request{PromptTokens: 100, Body: map[string]json.RawMessage{"model": json.RawMessage(`"other"`)}}, nil
			}
			return Request{PromptTokens: 100}, nil
		})
		rep, err := Run(t.Context(), pipeTarget(t, srv), Workload{Requests: 3, Concurrency: 1, Source: src})
		require.NoError(t, err)
		require.Equal(t, 2, rep.Completed)
		require.Len(t, rep.Failures, 1)
		f := rep.Failures[0]
		require.Equal(t, artifact.FailureRunnerError, f.FailureClass)
		require.Equal(t, client.ErrorTypeSourceRequest, f.ErrorType)
		require.Contains(t, f.ErrorMessage, `body field "model" is set by Target.Model`)
		require.Len(t, srv.seen, 2)
	})
}

// gateObserver admits the first n measured requests, records when it was
// started and ended, and adds a member to the report.
type gateObserver struct {
	goroutines map[string]bool // the goroutines every call ran on
	n          int
	admitted   []int
	at         time.Time
	inFlight   func() int
	atStart    int
	ended      bool
}

func (g *gateObserver) Start(_ context.Context, at time.Time) func(*artifact.Report) {
	g.goroutines[goroutine()] = true
	g.at, g.atStart = at, g.inFlight()
	return func(rep *artifact.Report) {
		g.goroutines[goroutine()] = true
		g.ended = true
		name := "observed"
		rep.AnvilGo.Run.Benchmark = &name
	}
}

func (g *gateObserver) Admit(i int) bool {
	g.goroutines[goroutine()] = true
	if len(g.admitted) == g.n {
		return false
	}
	g.admitted = append(g.admitted, i)
	return true
}

// TestObserverAndGate: an Observer starts when the measured phase starts
// (before any measured request, at the report's start) and ends with the
// report, which it extends; a Gate admits requests in index order and
// ends dispatch when it says no, the run accounting for what it sent.
func TestObserverAndGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &sleepyStream{d: 10 * time.Millisecond}
		g := &gateObserver{n: 3, inFlight: func() int { return int(h.seen.Load()) }, goroutines: map[string]bool{}}
		plain := false
		obs := ObserverFunc(func(context.Context, time.Time) func(*artifact.Report) {
			return func(*artifact.Report) { plain = true }
		})
		rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 10, Concurrency: 2, ContextTokens: 512, Warmup: 2, Observers: []Observer{obs, g}})
		require.NoError(t, err)
		require.Equal(t, []int{0, 1, 2}, g.admitted)
		require.Equal(t, map[string]bool{goroutine(): true}, g.goroutines, "every observer call on the goroutine that called Run")
		require.Equal(t, 2, g.atStart, "started after the warm-up, before any measured request")
		require.Equal(t, g.at.UnixNano(), rep.StartedAtUnixNS)
		require.True(t, g.ended)
		require.True(t, plain)
		require.Equal(t, "observed", *rep.AnvilGo.Run.Benchmark)
		require.Equal(t, 3, rep.Requests)
		require.Equal(t, 3, rep.Completed)
		require.True(t, rep.PerformanceEligible)
	})
}

// TestScheduleErrors: a request due after a later one is a configuration
// error; a Schedule with a Rate, or a Source with exact sizing, is refused.
func TestScheduleErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &sleepyStream{d: 10 * time.Millisecond}
		bad := ScheduleFunc(func(_ context.Context, i int) Due { return DueAfter(i, 0) })
		rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 2, Concurrency: 1, ContextTokens: 512, Schedule: bad})
		require.ErrorIs(t, err, ErrInvalidConfig)
		require.ErrorContains(t, err, "request 0 is due after request 0")
		require.NotNil(t, rep)
	})
	_, err := Workload{Rate: 5, Schedule: closedLoop()}.Resolved()
	require.ErrorContains(t, err, "Workload.Schedule")
	_, err = Workload{PromptSizing: promptSizingExact, Source: SourceFunc(func(context.Context, int) (Request, error) { return Request{}, nil })}.Resolved()
	require.ErrorContains(t, err, "Workload.Source")
}

// TestPrefixBlocks: planned prompts that open with prefix blocks (a
// trace's hash_ids) share the text of equal ids byte for byte at the same
// place, a block of another id differs from its first character on, and
// every prompt has its planned size.
func TestPrefixBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &answeringServer{start: time.Now()}
		ids := [][]int{{7, 8, 9}, {7, 8, 60}, {7, 8}}
		const blockTokens, promptTokens = 16, 100
		src := SourceFunc(func(_ context.Context, i int) (Request, error) {
			return Request{PromptTokens: promptTokens, PrefixBlocks: ids[i], BlockTokens: blockTokens}, nil
		})
		rep, err := Run(t.Context(), pipeTarget(t, srv), Workload{Requests: 3, Concurrency: 1, Source: src})
		require.NoError(t, err)
		require.Equal(t, 3, rep.Completed, "failures: %+v", rep.Failures)
		block := prompt.Chars(blockTokens)
		var prompts []string
		for _, s := range srv.seen {
			require.Len(t, s.Messages, 1)
			prompts = append(prompts, s.Messages[0].Content)
			require.Len(t, s.Messages[0].Content, prompt.Chars(promptTokens))
		}
		require.Equal(t, prompts[0][:2*block], prompts[1][:2*block], "blocks 7 and 8 are one text")
		require.Equal(t, prompts[0][:2*block], prompts[2][:2*block])
		require.NotEqual(t, prompts[0][2*block], prompts[1][2*block], "block 60 differs from block 9 from its first character")
		require.Equal(t, "J9000000000000000000\n", prompts[0][2*block:2*block+21], "the block text of package internal/blocktext")
		require.NotEqual(t, prompts[0][2*block:3*block], prompts[2][2*block:3*block], "request 2 goes on with its own filler")
		require.Contains(t, prompts[2], "# request 2: summarize the above in one line.")
	})
}

// TestSourceWithWarmup: the warm-up requests of a run with a Source follow
// the synthetic plan's fields and stay out of the report; the measured
// ones are the source's.
func TestSourceWithWarmup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &answeringServer{start: time.Now()}
		src := SourceFunc(func(_ context.Context, i int) (Request, error) {
			return Request{Messages: []Message{{Role: "user", Content: fmt.Sprintf("question %d", i)}}}, nil
		})
		rep, err := Run(t.Context(), pipeTarget(t, srv), Workload{Requests: 2, Concurrency: 1, ContextTokens: 256, Warmup: 2, Source: src})
		require.NoError(t, err)
		require.Equal(t, 2, rep.Completed, "failures: %+v", rep.Failures)
		require.Len(t, srv.seen, 4)
		for _, s := range srv.seen[:2] {
			require.Contains(t, s.Messages[0].Content, "# warmup request")
		}
		require.Equal(t, "question 0", srv.seen[2].Messages[0].Content)
		require.Equal(t, "question 1", srv.seen[3].Messages[0].Content)
	})
}

// goroutine names the calling goroutine ("goroutine 42").
func goroutine() string {
	var buf [64]byte
	s := string(buf[:runtime.Stack(buf[:], false)])
	id, _, _ := strings.Cut(s, " [")
	return id
}
