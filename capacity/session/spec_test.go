package session_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/field"
	"github.com/anvilbench/anvil/capacity/session"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in   string
		want session.Spec
	}{
		{"turns=3,user=200,output=128,think=2s,think_dist=exp",
			session.Spec{Turns: 3, UserTokens: 200, OutputTokens: 128, Think: 2 * time.Second, ThinkExp: true}},
		{" output = 64 , user=10,turns=1 ", session.Spec{Turns: 1, UserTokens: 10, OutputTokens: 64}},
		{"turns=2,user=1,output=1,think=1m30s,think_dist=fixed,seed=18446744073709551615",
			session.Spec{Turns: 2, UserTokens: 1, OutputTokens: 1, Think: 90 * time.Second, Seed: 1<<64 - 1}},
	}
	for _, tc := range tests {
		got, err := session.ParseSpec(tc.in)
		require.NoError(t, err, tc.in)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseSpec(%q) (-want +got):\n%s", tc.in, diff)
		}
		back, err := session.ParseSpec(got.String())
		require.NoError(t, err)
		require.Equal(t, got, back, got.String())
	}
	require.Equal(t, "turns=3,user=200,output=128,think=2s,think_dist=exp,seed=0", tests[0].want.String())
}

func TestParseSpecErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `session: spec = "": must be comma-separated key=value pairs with the keys turns, user, output, think, think_dist, seed`},
		{"turns=3,user=200", "session: output: must be given"},
		{"turns=3,user=200,output=128,turns=4", `session: turns = "4": must be given once`},
		{"turns=3,user=200,output=128,rate=4", `session: key = "rate": must be one of turns, user, output, think, think_dist, seed`},
		{"turns=three,user=200,output=128", `session: turns = "three": must be an integer`},
		{"turns=0,user=200,output=128", "session: turns = 0: must be in [1, 1000]"},
		{"turns=3,user=0,output=128", "session: user = 0: must be in [1, 1000000] tokens"},
		{"turns=3,user=2,output=1000001", "session: output = 1000001: must be in [1, 1000000] tokens"},
		{"turns=3,user=2,output=1,think=2", `session: think = "2": must be a duration such as "2s"`},
		{"turns=3,user=2,output=1,think=-1s", "session: think = -1s: must be in [0s, 1h0m0s]"},
		{"turns=3,user=2,output=1,think=2h", "session: think = 2h0m0s: must be in [0s, 1h0m0s]"},
		{"turns=3,user=2,output=1,think_dist=gamma", `session: think_dist = "gamma": must be "fixed" or "exp"`},
		{"turns=3,user=2,output=1,think_dist=exp", "session: think = 0s: must be above 0s with think_dist=exp (it is the mean)"},
		{"turns=3,user=2,output=1,seed=-1", `session: seed = "-1": must be an unsigned integer`},
		{"turns=1000,user=1000000,output=1", "session: turns = 1000: must be at most 9 with user=1000000 and output=1 (the last turn's prompt would be 1000000999 tokens, over 10000000)"},
	}
	for _, tc := range tests {
		_, err := session.ParseSpec(tc.in)
		require.EqualError(t, err, tc.want, tc.in)
		fe, ok := errors.AsType[*field.Error](err)
		require.True(t, ok)
		require.Equal(t, "session", fe.Pkg)
		require.ErrorIs(t, err, fe.Kind)
	}
}

// TestThinkTime: a fixed think time is the spec's; exponential ones are
// pinned per (seed, session, turn), whatever order they are drawn in,
// and their mean over many sessions is the spec's mean.
func TestThinkTime(t *testing.T) {
	fixed := session.Spec{Turns: 3, UserTokens: 1, OutputTokens: 1, Think: 2 * time.Second}
	require.Equal(t, time.Duration(0), fixed.ThinkTime(0, 1))
	require.Equal(t, 2*time.Second, fixed.ThinkTime(5, 3))

	exp := fixed
	exp.ThinkExp, exp.Seed = true, 7
	got := []time.Duration{exp.ThinkTime(0, 2), exp.ThinkTime(0, 3), exp.ThinkTime(1, 2), exp.ThinkTime(1, 3)}
	want := []time.Duration{pinned[0], pinned[1], pinned[2], pinned[3]}
	require.Equal(t, want, got)
	require.Equal(t, pinned[3], exp.ThinkTime(1, 3), "drawn again, in another order")
	require.Equal(t, time.Duration(0), exp.ThinkTime(1, 1))
	other := exp
	other.Seed = 8
	require.NotEqual(t, got[0], other.ThinkTime(0, 2))

	var sum time.Duration
	const n = 200_000
	for i := range n {
		sum += exp.ThinkTime(i, 2)
	}
	mean := float64(sum) / n / float64(exp.Think)
	require.InDelta(t, 1, mean, 0.01, "mean think time / Think")
}

// pinned are the Exp think times of seed 7 with a 2 s mean: session 0
// turns 2 and 3, session 1 turns 2 and 3.
var pinned = []time.Duration{4737858231, 185877439, 117715020, 3613266194}

func FuzzParseSpec(f *testing.F) {
	f.Add("turns=3,user=200,output=128,think=2s,think_dist=exp")
	f.Add("turns=1,user=1,output=1,seed=3,think=0")
	f.Add("turns=3,,user=2")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := session.ParseSpec(in)
		if err != nil {
			fe, ok := errors.AsType[*field.Error](err)
			if !ok || fe.Field == "" || !strings.Contains(err.Error(), "must be") {
				t.Fatalf("ParseSpec(%q) = %v (%T)", in, err, err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("ParseSpec(%q) = %+v, which fails Validate: %v", in, s, err)
		}
		back, err := session.ParseSpec(s.String())
		if err != nil || back != s {
			t.Fatalf("ParseSpec(%q) = %+v; its String %q reads back as %+v, %v", in, s, s.String(), back, err)
		}
	})
}
