package traffic_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/session"
	"github.com/anvilbench/anvil/capacity/trace"
	"github.com/anvilbench/anvil/capacity/traffic"
)

// sessionOf returns the session and turn of a chat request from its last
// user message, which opens with "#session {s} turn {k}" (zero-padded).
func sessionOf(t *testing.T, msgs []message) (string, int) {
	last := msgs[len(msgs)-1].Content
	var s, k int
	line, _, _ := strings.Cut(last, "\n")
	_, err := fmt.Sscanf(line, "#session %d turn %d", &s, &k)
	require.NoError(t, err, "%q", line)
	return strconv.Itoa(s), k
}

// TestSessionsClosedLoop: 2 users run 3 sessions of 3 turns against a
// plain httptest server. The server sees turn k+1 carry every earlier
// user message and the answer it actually gave to it, 2 s (the fixed
// think time) after turn k ended, on the bubble's clock; the run's cache
// share is the server's cached_tokens.
func TestSessionsClosedLoop(t *testing.T) {
	spec, err := session.ParseSpec("turns=3,user=200,output=32,think=2s")
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		srv := newChatServer(t, 100*time.Millisecond)
		s, err := traffic.Synthetic(spec, 3, traffic.SessionOptions{Users: 2, Salt: "run-1"})
		require.NoError(t, err)
		rep, err := capacity.Run(t.Context(), srv.target(), s.Workload(capacity.Workload{}))
		require.NoError(t, err)
		require.Equal(t, 9, rep.Completed)

		got := srv.requests()
		require.Len(t, got, 9)
		type turnSeen struct {
			seen
			n int // the server's request number: its answer is answer(n)
		}
		turns := map[string][]turnSeen{}
		for n, r := range got {
			id, k := sessionOf(t, r.messages)
			require.Len(t, turns[id], k-1, "session %s turn %d out of order", id, k)
			turns[id] = append(turns[id], turnSeen{r, n})
		}
		require.Len(t, turns, 3)
		var cachedShare []float64
		for id, ts := range turns {
			require.Len(t, ts, 3, "session %s", id)
			for k, tr := range ts {
				require.Len(t, tr.messages, 2*k+1)
				for j := 0; j < k; j++ {
					require.Equal(t, ts[j].messages[2*j], tr.messages[2*j], "session %s turn %d: user message %d", id, k+1, j+1)
					require.Equal(t, message{Role: "assistant", Content: answer(ts[j].n)}, tr.messages[2*j+1],
						"session %s turn %d carries the answer the server gave to turn %d", id, k+1, j+1)
				}
				require.Len(t, tr.messages[2*k].Content, 600, "200 tokens at 3 characters each")
				if k > 0 {
					require.Equal(t, ts[k-1].at+100*time.Millisecond+2*time.Second, tr.at,
						"session %s turn %d is sent the think time after turn %d ended", id, k+1, k)
				}
				prompt, cached := 0, 0
				for j, m := range tr.messages {
					prompt += len(m.Content) / 3
					if j < len(tr.messages)-1 {
						cached += len(m.Content) / 3
					}
				}
				cachedShare = append(cachedShare, float64(cached)/float64(prompt))
			}
		}
		// Two users: the third session starts when the first one ends.
		require.Equal(t, 2*(100*time.Millisecond+2*time.Second)+100*time.Millisecond, got[len(got)-3].at-got[0].at)
		mean := 0.0
		for _, c := range cachedShare {
			mean += c / float64(len(cachedShare))
		}
		require.NotNil(t, rep.Metrics.PrefixCacheHitAvg)
		require.InDelta(t, mean, *rep.Metrics.PrefixCacheHitAvg, 1e-9)
	})
}

// TestSessionsFailedTurn: a failed turn ends its session (the turns
// after it are never sent) and the others run to their end, each turn
// its seeded exponential think time after the previous one ended.
func TestSessionsFailedTurn(t *testing.T) {
	spec := session.Spec{Turns: 3, UserTokens: 50, OutputTokens: 8, Think: time.Second, ThinkExp: true, Seed: 3}
	synctest.Test(t, func(t *testing.T) {
		srv := newChatServer(t, 10*time.Millisecond)
		srv.fail = func(msgs []message) bool {
			return strings.HasPrefix(msgs[len(msgs)-1].Content, "#session 000001 turn 000002\n")
		}
		s, err := traffic.Synthetic(spec, 3, traffic.SessionOptions{Starts: []time.Duration{0, 0, 500 * time.Millisecond}})
		require.NoError(t, err)
		rep, err := capacity.Run(t.Context(), srv.target(), s.Workload(capacity.Workload{Concurrency: 8}))
		require.NoError(t, err)
		require.Equal(t, 8, rep.Requests, "3 + 2 + 3 turns sent")
		require.Equal(t, 7, rep.Completed)
		require.Equal(t, 1, rep.Failed)

		perSession := map[string]int{}
		last := map[string]time.Duration{}
		for _, r := range srv.requests() {
			id, k := sessionOf(t, r.messages)
			perSession[id]++
			require.Equal(t, perSession[id], k)
			if k > 1 {
				n, _ := strconv.Atoi(id)
				require.Equal(t, last[id]+10*time.Millisecond+spec.ThinkTime(n, k), r.at,
					"session %s turn %d: the seeded exponential think time", id, k)
			}
			last[id] = r.at
		}
		require.Equal(t, map[string]int{"0": 3, "1": 2, "2": 3}, perSession)
	})
}

// TestSessionsRecorded runs the sessions of an anvil JSONL log: each
// starts at its first turn's offset, each later turn is its think_ms
// after the previous one ended, with a new user message of the turn's
// user_tokens (derived when absent) and max_tokens its output_tokens.
func TestSessionsRecorded(t *testing.T) {
	log := strings.Join([]string{
		`{"offset_ms": 0, "prompt_tokens": 300, "output_tokens": 40, "session": "a", "turn": 1}`,
		`{"offset_ms": 250, "prompt_tokens": 90, "output_tokens": 12, "session": "b", "turn": 1}`,
		`{"offset_ms": 3000, "prompt_tokens": 440, "output_tokens": 20, "session": "a", "turn": 2, "think_ms": 1500}`,
		`{"offset_ms": 3100, "prompt_tokens": 700, "output_tokens": 16, "session": "b", "turn": 2, "user_tokens": 60, "think_ms": 700}`,
	}, "\n")
	recorded, err := session.Read(trace.NewReader(strings.NewReader(log), "users.jsonl"))
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		srv := newChatServer(t, 40*time.Millisecond)
		s, err := traffic.Recorded(recorded, traffic.SessionOptions{})
		require.NoError(t, err)
		rep, err := capacity.Run(t.Context(), srv.target(), s.Workload(capacity.Workload{Concurrency: 4}))
		require.NoError(t, err)
		require.Equal(t, 4, rep.Completed)
		got := srv.requests()
		require.Len(t, got, 4)
		type want struct {
			session   string
			turn      int
			at        time.Duration
			userChars int
			maxTokens string
		}
		first := got[0].at
		wants := []want{
			{"0", 1, 0, 900, "40"},
			{"1", 1, 250 * time.Millisecond, 270, "12"},
			{"1", 2, 250*time.Millisecond + 40*time.Millisecond + 700*time.Millisecond, 180, "16"},
			{"0", 2, 40*time.Millisecond + 1500*time.Millisecond, 3 * (440 - 340), "20"},
		}
		for n, w := range wants {
			id, k := sessionOf(t, got[n].messages)
			require.Equal(t, w.session, id, "request %d", n)
			require.Equal(t, w.turn, k, "request %d", n)
			require.Equal(t, w.at, got[n].at-first, "request %d", n)
			require.Len(t, got[n].messages[len(got[n].messages)-1].Content, w.userChars, "request %d", n)
			require.Equal(t, w.maxTokens, string(got[n].body["max_tokens"]), "request %d", n)
		}
		// The artifact names each turn's session, turn and trace line.
		lines := map[[2]string]int{{"a", "1"}: 1, {"b", "1"}: 2, {"a", "2"}: 3, {"b", "2"}: 4}
		require.Len(t, rep.AnvilGo.Requests, 4)
		for _, d := range rep.AnvilGo.Requests {
			require.Equal(t, lines[[2]string{*d.Session, strconv.Itoa(*d.Turn)}], *d.TraceLine, "session %s turn %d", *d.Session, *d.Turn)
		}
	})
}

// TestSessionsTwoRuns: one Sessions value serves two runs in a row, each
// sending every turn.
func TestSessionsTwoRuns(t *testing.T) {
	spec := session.Spec{Turns: 2, UserTokens: 20, OutputTokens: 4, Think: 100 * time.Millisecond}
	synctest.Test(t, func(t *testing.T) {
		srv := newChatServer(t, 10*time.Millisecond)
		s, err := traffic.Synthetic(spec, 3, traffic.SessionOptions{Users: 2})
		require.NoError(t, err)
		for run := range 2 {
			rep, err := capacity.Run(t.Context(), srv.target(), s.Workload(capacity.Workload{}))
			require.NoError(t, err)
			require.Equal(t, 6, rep.Completed, "run %d", run)
		}
		require.Len(t, srv.requests(), 12)
	})
}

// TestSessionsRecordedIDs: a recorded session's requests carry its id.
func TestSessionsRecordedIDs(t *testing.T) {
	log := `{"offset_ms": 0, "prompt_tokens": 30, "output_tokens": 4, "session": "user-42", "turn": 1}` + "\n" +
		`{"offset_ms": 5, "prompt_tokens": 30, "output_tokens": 4}`
	recorded, err := session.Read(trace.NewReader(strings.NewReader(log), "users.jsonl"))
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		s, err := traffic.Recorded(recorded, traffic.SessionOptions{})
		require.NoError(t, err)
		require.Equal(t, capacity.DueAt(0), s.Due(t.Context(), 0))
		require.True(t, s.Admit(0))
		req, err := s.Request(t.Context(), 0)
		require.NoError(t, err)
		require.Equal(t, "user-42", req.Session)
		require.Equal(t, 0, req.Turn)
		require.Equal(t, 30, req.PromptTokens)
		require.Equal(t, 4, req.MaxTokens)
		// Session 0's turn is in flight: Due waits for the next start (on the
		// bubble's clock) in case that turn ends first.
		start := time.Now()
		require.Equal(t, capacity.DueAt(5*time.Millisecond), s.Due(t.Context(), 1))
		require.Equal(t, 5*time.Millisecond, time.Since(start))
		req, err = s.Request(t.Context(), 1)
		require.NoError(t, err)
		require.Equal(t, "1", req.Session, "a row without a session is named by its index")
	})
}

// TestSessionsDueEndsWithItsContext: a Due that waits for a turn in
// flight (one user, whose first turn has not answered) returns when the
// context it was given ends, with nothing admitted; the answer then makes
// the next Due, under a live context, the session's second turn.
func TestSessionsDueEndsWithItsContext(t *testing.T) {
	spec, err := session.ParseSpec("turns=2,user=20,output=4,think=1s")
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		s, err := traffic.Synthetic(spec, 1, traffic.SessionOptions{Users: 1})
		require.NoError(t, err)
		require.Equal(t, capacity.DueNow(), s.Due(t.Context(), 0))
		require.True(t, s.Admit(0))
		_, err = s.Request(t.Context(), 0)
		require.NoError(t, err)

		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		start := time.Now()
		require.Equal(t, capacity.DueNow(), s.Due(ctx, 1), "gave up")
		require.Equal(t, 3*time.Second, time.Since(start), "waited until the context ended")
		require.False(t, s.Admit(1), "nothing to send")

		s.Answer(t.Context(), 0, capacity.Answer{Content: "four words of answer", OK: true})
		require.Equal(t, capacity.DueAfter(0, time.Second), s.Due(t.Context(), 2))
		require.True(t, s.Admit(2))
		req, err := s.Request(t.Context(), 2)
		require.NoError(t, err)
		require.Equal(t, 1, req.Turn)
		require.Equal(t, "four words of answer", req.Messages[1].Content)
	})
}

// TestSessionsStartErrors: synthetic sessions start one way, closed
// (Users) or open (one non-decreasing Starts offset per session);
// recorded sessions start at their recorded offsets only.
func TestSessionsStartErrors(t *testing.T) {
	spec := session.Spec{Turns: 2, UserTokens: 10, OutputTokens: 4}
	for _, tc := range []struct {
		opts traffic.SessionOptions
		want string
	}{
		{traffic.SessionOptions{}, "traffic: SessionOptions: Users (a closed loop) or Starts (an open loop) must be set"},
		{traffic.SessionOptions{Users: 2, Starts: []time.Duration{0, 0}}, "traffic: SessionOptions: Users = 2 and 2 Starts: must be one or the other"},
		{traffic.SessionOptions{Users: -1}, "traffic: SessionOptions.Users = -1: must be at least 1"},
		{traffic.SessionOptions{Starts: []time.Duration{0}}, "traffic: SessionOptions.Starts: 1 offsets for 2 sessions: must be one per session"},
		{traffic.SessionOptions{Starts: []time.Duration{time.Second, 0}}, "traffic: SessionOptions.Starts[1] = 0s: must not be before Starts[0] = 1s"},
	} {
		_, err := traffic.Synthetic(spec, 2, tc.opts)
		require.EqualError(t, err, tc.want)
	}
	recorded, err := session.Read(trace.NewReader(strings.NewReader(`{"offset_ms": 0, "prompt_tokens": 3, "output_tokens": 1}`+"\n"), "one.jsonl"))
	require.NoError(t, err)
	_, err = traffic.Recorded(recorded, traffic.SessionOptions{Users: 1})
	require.EqualError(t, err, "traffic: SessionOptions: Users = 1 and 0 Starts: must be unset for recorded sessions, which start at their recorded offsets")
	_, err = traffic.Recorded(recorded, traffic.SessionOptions{})
	require.NoError(t, err)
}
