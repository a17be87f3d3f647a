package traffic_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/trace"
	"github.com/anvilbench/anvil/capacity/traffic"
)

// readTrace reads the rows of a shipped trace.
func readTrace(t *testing.T, file string, opts ...trace.Option) []trace.Record {
	recs, _ := readDescribed(t, file, opts...)
	return recs
}

var traceLine = regexp.MustCompile(`^#trace line (\d+)\n`)

var requestIndex = regexp.MustCompile(`\n# request (\d+): summarize the above in one line\.$`)

// TestReplayMooncake replays the 500 shipped rows of the real Mooncake
// conversation trace against a plain httptest server and checks on the
// server's side: every row arrives once, at its offset divided by the
// speed-up (exactly, on the bubble's clock), with max_tokens its
// output_length, ignore_eos and min_tokens, a prompt of 3 characters per
// input token, and the bytes of the blocks it shares with any other row.
func TestReplayMooncake(t *testing.T) {
	recs := readTrace(t, "mooncake-conversation_trace-first500.jsonl", trace.SpeedUp(4))
	synctest.Test(t, func(t *testing.T) {
		srv := newChatServer(t, 50*time.Millisecond)
		replay := traffic.Replay{Records: recs, Salt: "run-1", IgnoreEOS: true}
		rep, err := capacity.Run(t.Context(), srv.target(), replay.Workload(capacity.Workload{Concurrency: 64}))
		require.NoError(t, err)
		require.Equal(t, len(recs), rep.Completed)

		got := srv.requests()
		require.Len(t, got, len(recs))
		byIndex := make([]string, len(recs))
		first := got[0].at
		for _, s := range got {
			require.Len(t, s.messages, 1)
			text := s.messages[0].Content
			m := requestIndex.FindStringSubmatch(text)
			require.NotNil(t, m, "no request index in %q", text[len(text)-80:])
			i, _ := strconv.Atoi(m[1])
			require.Empty(t, byIndex[i], "request %d arrived twice", i)
			byIndex[i] = text
			rec := recs[i]
			require.Equal(t, rec.Offset, s.at-first, "request %d (line %d) arrived off its offset", i, rec.Line)
			require.Len(t, text, 3*rec.PromptTokens)
			var maxTokens, minTokens int
			require.NoError(t, json.Unmarshal(s.body["max_tokens"], &maxTokens))
			require.NoError(t, json.Unmarshal(s.body["min_tokens"], &minTokens))
			require.Equal(t, rec.OutputTokens, maxTokens)
			require.Equal(t, rec.OutputTokens, minTokens)
			require.JSONEq(t, "true", string(s.body["ignore_eos"]))
		}

		require.Equal(t, 512, recs[0].BlockTokens, "Mooncake's blocks")
		L := 3 * recs[0].BlockTokens
		shared := 0
		for i := range recs {
			for j := range i {
				k := 0
				for k < len(recs[i].Blocks) && k < len(recs[j].Blocks) && recs[i].Blocks[k] == recs[j].Blocks[k] {
					k++
				}
				full := min(k, len(byIndex[i])/L-1, len(byIndex[j])/L-1)
				if full > 0 {
					shared++
					require.Equal(t, byIndex[i][:full*L], byIndex[j][:full*L], "rows %d and %d share %d blocks", i, j, k)
				}
				if k < len(recs[i].Blocks) && k < len(recs[j].Blocks) && (k+1)*L < len(byIndex[i]) && (k+1)*L < len(byIndex[j]) {
					require.NotEqual(t, byIndex[i][k*L:(k+1)*L], byIndex[j][k*L:(k+1)*L], "rows %d and %d: block %d", i, j, k)
				}
			}
		}
		require.Positive(t, shared)
	})
}

// TestReplayAzure replays the Azure conversation trace's first rows: no
// blocks, so every prompt is its row's own text.
func TestReplayAzure(t *testing.T) {
	recs := readTrace(t, "azure-AzureLLMInferenceTrace_conv-first500.csv", trace.SpeedUp(10), trace.First(40))
	synctest.Test(t, func(t *testing.T) {
		srv := newChatServer(t, 20*time.Millisecond)
		replay := traffic.Replay{Records: recs}
		rep, err := capacity.Run(t.Context(), srv.target(), replay.Workload(capacity.Workload{Concurrency: 64}))
		require.NoError(t, err)
		require.Equal(t, len(recs), rep.Completed)
		got := srv.requests()
		require.Len(t, got, len(recs))
		lines := map[int]bool{}
		for _, s := range got {
			text := s.messages[0].Content
			m := traceLine.FindStringSubmatch(text)
			require.NotNil(t, m, "no trace line in %q", text)
			line, _ := strconv.Atoi(m[1])
			require.False(t, lines[line], "line %d sent twice", line)
			lines[line] = true
			rec := recs[line-2] // the header is line 1
			require.Equal(t, line, rec.Line)
			require.Equal(t, rec.Offset, s.at-got[0].at, "line %d", rec.Line)
			require.Len(t, text, 3*rec.PromptTokens, "line %d", rec.Line)
			require.NotContains(t, s.body, "ignore_eos")
		}
	})
}
