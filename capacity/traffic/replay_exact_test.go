package traffic_test

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/internal/blocktext"
	"github.com/anvilbench/anvil/capacity/session"
	"github.com/anvilbench/anvil/capacity/trace"
	"github.com/anvilbench/anvil/capacity/traffic"
)

// tinyTokens counts as the tiny model of the llama.cpp b10573 captures
// does: 10 tokens for every 11 characters, far from the reference's 3.0
// characters per token.
func tinyTokens(s string) int { return len(s) - len(s)/11 }

// TestReplayMooncakeExactSizing replays the 500 shipped rows of the real
// Mooncake conversation trace with exact sizing against a plain httptest
// server whose tokenizer counts about 1.1 characters per token, with and
// without its /tokenize: on the server's side every prompt counts within
// 1 % of its row's input_length, rows that share hash_ids send the shared
// blocks byte for byte, and the first block where two rows' ids differ
// differs.
func TestReplayMooncakeExactSizing(t *testing.T) {
	recs := readTrace(t, "mooncake-conversation_trace-first500.jsonl", trace.SpeedUp(4))
	for _, tokenize := range []bool{true, false} {
		t.Run(fmt.Sprintf("tokenize=%t", tokenize), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newChatServer(t, 50*time.Millisecond)
				srv.tokens, srv.tokenize = tinyTokens, tokenize
				replay := traffic.Replay{Records: recs, Salt: "run-1"}
				rep, err := capacity.Run(t.Context(), srv.target(), replay.Workload(capacity.Workload{Concurrency: 64, PromptSizing: "exact"}))
				require.NoError(t, err)
				require.Equal(t, len(recs), rep.Completed)
				ps := rep.AnvilGo.PromptSizing
				require.Equal(t, string("exact"), ps.Method)
				want := map[bool]string{true: "tokenize", false: "calibration"}[tokenize]
				require.Equal(t, want, *ps.Source)
				require.InDelta(t, 1.1, ps.CharsPerToken, 0.02)
				require.NotNil(t, ps.MaxRelativeError)
				require.LessOrEqual(t, *ps.MaxRelativeError, 0.01)

				byIndex := make([]string, len(recs))
				worst := 0.0
				for _, s := range srv.requests() {
					text := s.messages[len(s.messages)-1].Content
					m := requestIndex.FindStringSubmatch(text)
					if !strings.Contains(text, replay.Salt) {
						continue // a calibration request, of the synthetic plan
					}
					require.NotNil(t, m, "no request index in %q", text[max(len(text)-80, 0):])
					i, _ := strconv.Atoi(m[1])
					require.Empty(t, byIndex[i], "request %d arrived twice", i)
					byIndex[i] = text
					planned := recs[i].PromptTokens
					e := math.Abs(float64(tinyTokens(text)-planned)) / float64(planned)
					require.LessOrEqual(t, e, 0.01, "request %d (line %d): %d tokens for input_length %d", i, recs[i].Line, tinyTokens(text), planned)
					worst = max(worst, e)
				}
				t.Logf("largest relative error %.5f at %.4f characters per token", worst, ps.CharsPerToken)

				L := blocktext.CharsPerToken(ps.CharsPerToken).Chars(recs[0].BlockTokens)
				shared, differ := 0, 0
				for i := range recs {
					require.NotEmpty(t, byIndex[i], "request %d never arrived", i)
					for j := range i {
						k := 0
						for k < len(recs[i].Blocks) && k < len(recs[j].Blocks) && recs[i].Blocks[k] == recs[j].Blocks[k] {
							k++
						}
						if full := min(k, len(byIndex[i])/L-1, len(byIndex[j])/L-1); full > 0 {
							shared++
							require.Equal(t, byIndex[i][:full*L], byIndex[j][:full*L], "rows %d and %d share %d blocks", i, j, k)
						}
						if k < len(recs[i].Blocks) && k < len(recs[j].Blocks) && (k+1)*L < len(byIndex[i]) && (k+1)*L < len(byIndex[j]) {
							differ++
							require.NotEqual(t, byIndex[i][k*L:k*L+1+len(strconv.FormatInt(recs[i].Blocks[k], 10))],
								byIndex[j][k*L:k*L+1+len(strconv.FormatInt(recs[j].Blocks[k], 10))], "rows %d and %d: block %d", i, j, k)
						}
					}
				}
				require.Positive(t, shared)
				require.Positive(t, differ)
			})
		})
	}
}

// TestSessionsExactSizing runs 3-turn sessions with exact sizing against
// the server of 1.1 characters per token: every new user message counts
// within 1 % of the spec's user tokens, and every turn's whole prompt
// (history and the actual answers included) within 1 % of its plan.
func TestSessionsExactSizing(t *testing.T) {
	spec, err := session.ParseSpec("turns=3,user=2000,output=32")
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		srv := newChatServer(t, 20*time.Millisecond)
		srv.tokens = tinyTokens
		s, err := traffic.Synthetic(spec, 4, traffic.SessionOptions{Users: 2, Salt: "run-1"})
		require.NoError(t, err)
		rep, err := capacity.Run(t.Context(), srv.target(), s.Workload(capacity.Workload{PromptSizing: "exact"}))
		require.NoError(t, err)
		require.Equal(t, 12, rep.Completed)
		ps := rep.AnvilGo.PromptSizing
		require.Equal(t, "calibration", *ps.Source)
		require.InDelta(t, 1.1, ps.CharsPerToken, 0.02)
		require.Equal(t, 12, ps.CountedRequests)
		require.LessOrEqual(t, *ps.MaxRelativeError, 0.01)
		turns := 0
		for _, r := range srv.requests() {
			user := r.messages[len(r.messages)-1].Content
			if !strings.Contains(user, "run-1") {
				continue // a calibration request
			}
			turns++
			require.InDelta(t, 2000, tinyTokens(user), 20, "%d messages", len(r.messages))
		}
		require.Equal(t, 12, turns)
	})
}
