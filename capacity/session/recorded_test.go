package session_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/session"
	"github.com/anvilbench/anvil/capacity/trace"
)

func read(text string) ([]session.Recorded, error) {
	return session.Read(trace.NewReader(strings.NewReader(text), "logs.jsonl", trace.Format("jsonl")))
}

// TestRead groups interleaved rows by session, in the order of their
// first turns, and derives each turn's new user message.
func TestRead(t *testing.T) {
	got, err := read(strings.Join([]string{
		`{"offset_ms": 0, "prompt_tokens": 300, "output_tokens": 50, "session": "a", "turn": 1}`,
		`{"offset_ms": 10, "prompt_tokens": 40, "output_tokens": 5}`,
		`{"offset_ms": 20, "prompt_tokens": 100, "output_tokens": 20, "session": "b", "turn": 1, "user_tokens": 80}`,
		`{"offset_ms": 900, "prompt_tokens": 420, "output_tokens": 60, "session": "a", "turn": 2, "think_ms": 500}`,
		`{"offset_ms": 950, "prompt_tokens": 700, "output_tokens": 10, "session": "a", "turn": 3, "user_tokens": 30}`,
	}, "\n"))
	require.NoError(t, err)
	at := func(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }
	want := []session.Recorded{
		{ID: "a", Turns: []trace.Record{
			{Line: 1, PromptTokens: 300, OutputTokens: 50, Session: "a", Turn: 1, UserTokens: 300},
			{Line: 4, TraceOffset: at(900), Offset: at(900), PromptTokens: 420, OutputTokens: 60, Session: "a", Turn: 2, UserTokens: 70, Think: at(500)},
			{Line: 5, TraceOffset: at(950), Offset: at(950), PromptTokens: 700, OutputTokens: 10, Session: "a", Turn: 3, UserTokens: 30},
		}},
		{Turns: []trace.Record{{Line: 2, TraceOffset: at(10), Offset: at(10), PromptTokens: 40, OutputTokens: 5, UserTokens: 40}}},
		{ID: "b", Turns: []trace.Record{
			{Line: 3, TraceOffset: at(20), Offset: at(20), PromptTokens: 100, OutputTokens: 20, Session: "b", Turn: 1, UserTokens: 80},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sessions (-want +got):\n%s", diff)
	}
}

func TestReadErrors(t *testing.T) {
	tests := []struct{ text, want string }{
		{`{"offset_ms": 0, "prompt_tokens": 3, "output_tokens": 1, "session": "a", "turn": 2}`,
			`session: logs.jsonl:1: turn = 2: must be 1, the next turn of session "a"`},
		{`{"offset_ms": 0, "prompt_tokens": 3, "output_tokens": 1, "session": "a", "turn": 1}` + "\n" +
			`{"offset_ms": 0, "prompt_tokens": 3, "output_tokens": 1, "session": "a", "turn": 1}`,
			`session: logs.jsonl:2: turn = 1: must be 2, the next turn of session "a"`},
		{`{"offset_ms": 0, "prompt_tokens": 300, "output_tokens": 50, "session": "a", "turn": 1}` + "\n" +
			`{"offset_ms": 5, "prompt_tokens": 350, "output_tokens": 1, "session": "a", "turn": 2}`,
			`session: logs.jsonl:2: prompt_tokens = 350: must be above 350, the previous turn's prompt_tokens + output_tokens (line 1), or give user_tokens`},
		{`{"offset_ms": 0, "prompt_tokens": 0, "output_tokens": 1}`,
			`trace: logs.jsonl:1: prompt_tokens = "0": must be an integer in [1, 10000000]`},
	}
	for _, tc := range tests {
		_, err := read(tc.text)
		require.EqualError(t, err, tc.want)
	}
}
