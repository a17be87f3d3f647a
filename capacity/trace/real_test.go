package trace_test

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// tracesDir holds the heads of the real traces (see its README.md).
const tracesDir = "../../testdata/traces"

// realTraces are the shipped heads, with the SHA-256 their README gives.
var realTraces = []struct {
	file   string
	format trace.Format
	sha256 string
}{
	{"mooncake-conversation_trace-first500.jsonl", trace.Format("mooncake"), "7f0f42025c3a7065a7672d854fa88ce778d061ea0a7df327221f05aeda8439dd"},
	{"mooncake-synthetic_trace-first500.jsonl", trace.Format("mooncake"), "c076d3be073346e9551a6ebc1d11bb31ee3bbf86b2299403e53634cf8915693a"},
	{"azure-AzureLLMInferenceTrace_code-first500.csv", trace.Format("azure"), "04a092ccf83d38c081454fe3efdc2b48eabb2b0c0684c89580f81660c73b5752"},
	{"azure-AzureLLMInferenceTrace_conv-first500.csv", trace.Format("azure"), "ccfff590d4714fb1c091d39fd618b0303c1e43976a75e0f97ad2f4b8de8d78e0"},
}

// readAll reads a whole trace file, failing the test on any error.
func readAll(t testing.TB, path string, opts ...trace.Option) ([]trace.Record, trace.Description) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r := trace.NewReader(f, path, opts...)
	var recs []trace.Record
	for r.Scan() {
		recs = append(recs, r.Record())
	}
	require.NoError(t, r.Err())
	d, err := r.Description()
	require.NoError(t, err)
	return recs, d
}

// referenceMooncake decodes a Mooncake file with encoding/json, row by
// row, as the format's README describes it.
func referenceMooncake(t *testing.T, data []byte) []trace.Record {
	var recs []trace.Record
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var row struct {
			Timestamp    int64   `json:"timestamp"`
			InputLength  int     `json:"input_length"`
			OutputLength int     `json:"output_length"`
			HashIDs      []int64 `json:"hash_ids"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &row))
		d := time.Duration(row.Timestamp) * time.Millisecond
		recs = append(recs, trace.Record{Line: i + 1, TraceOffset: d, Offset: d,
			PromptTokens: row.InputLength, OutputTokens: row.OutputLength,
			Blocks: row.HashIDs, BlockTokens: 512})
	}
	return recs
}

// referenceAzure decodes an Azure file with encoding/csv and the
// timestamp's fixed layout.
func referenceAzure(t *testing.T, data []byte) []trace.Record {
	rows, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	require.NoError(t, err)
	require.Equal(t, []string{"TIMESTAMP", "ContextTokens", "GeneratedTokens"}, rows[0])
	var recs []trace.Record
	var first time.Time
	for i, row := range rows[1:] {
		ts, err := time.Parse("2006-01-02 15:04:05.0000000", row[0])
		require.NoError(t, err)
		if i == 0 {
			first = ts
		}
		in, err := strconv.Atoi(row[1])
		require.NoError(t, err)
		out, err := strconv.Atoi(row[2])
		require.NoError(t, err)
		d := ts.Sub(first)
		recs = append(recs, trace.Record{Line: i + 2, TraceOffset: d, Offset: d,
			PromptTokens: in, OutputTokens: out})
	}
	return recs
}

// TestRealTraces pins each reader against the real rows: every field of
// every record equals an independent decoding, the format is told from
// the file name, and the Description carries the file's SHA-256.
func TestRealTraces(t *testing.T) {
	for _, tc := range realTraces {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(tracesDir, tc.file)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			got, desc := readAll(t, path)
			var want []trace.Record
			if tc.format == trace.Format("mooncake") {
				want = referenceMooncake(t, data)
			} else {
				want = referenceAzure(t, data)
			}
			require.Len(t, want, 500)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("records (-reference +reader):\n%s", diff)
			}
			wantDesc := trace.Description{File: tc.file, Format: tc.format, SHA256: tc.sha256,
				Bytes: int64(len(data)), Rows: 500, FirstLine: want[0].Line, LastLine: want[499].Line, SpeedUp: 1}
			if diff := cmp.Diff(wantDesc, desc); diff != "" {
				t.Errorf("description (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRealTracesGolden pins a summary of each real trace (its first and
// last rows, totals and shared blocks) in testdata/real.golden.
func TestRealTracesGolden(t *testing.T) {
	var b strings.Builder
	for _, tc := range realTraces {
		recs, desc := readAll(t, filepath.Join(tracesDir, tc.file), tc.format)
		var prompt, output, blocks int
		seen := map[int64]bool{}
		shared := 0
		for _, r := range recs {
			prompt += r.PromptTokens
			output += r.OutputTokens
			for _, id := range r.Blocks {
				blocks++
				if seen[id] {
					shared++
				}
				seen[id] = true
			}
		}
		fmt.Fprintf(&b, "%s %s rows=%d sha256=%s\n", desc.File, desc.Format, desc.Rows, desc.SHA256)
		fmt.Fprintf(&b, "  prompt_tokens=%d output_tokens=%d blocks=%d repeated_blocks=%d span=%v\n",
			prompt, output, blocks, shared, recs[len(recs)-1].TraceOffset)
		for _, r := range []trace.Record{recs[0], recs[1], recs[len(recs)-1]} {
			fmt.Fprintf(&b, "  line %d at %v: prompt %d output %d, %d blocks\n",
				r.Line, r.TraceOffset, r.PromptTokens, r.OutputTokens, len(r.Blocks))
		}
	}
	golden := filepath.Join("testdata", "real.golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("summary (-golden +got):\n%s", diff)
	}
}
