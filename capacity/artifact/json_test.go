package artifact

import (
	"bufio"
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/anvilbench/anvil/capacity/internal/jsonstr"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// corpusFiles lists every artifact under testdata/corpus.
func corpusFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(filepath.Join("..", "..", "testdata", "corpus"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(path) == ".json" {
			files = append(files, path)
		}
		return err
	})
	require.NoError(t, err)
	require.Len(t, files, 252)
	return files
}

// generic decodes JSON keeping number literals, for key-set and value
// comparisons independent of the codec under test.
func generic(t testing.TB, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}

// TestCorpusBytesRoundTrip: the Python tool wrote every corpus artifact
// with json.dump(indent=2, sort_keys=True); reading and writing one back
// reproduces its bytes exactly, whatever its generation. One corpus file
// was saved with its newlines stripped: it must round-trip in value.
func TestCorpusBytesRoundTrip(t *testing.T) {
	for _, f := range append(corpusFiles(t), seedPath) {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var r Report
		require.NoError(t, r.UnmarshalJSON(data), f)
		out, err := r.MarshalJSON()
		require.NoError(t, err)
		if bytes.Count(data, []byte("\n")) <= 1 {
			require.Equal(t, generic(t, data), generic(t, out), f)
			continue
		}
		require.Equal(t, string(bytes.TrimSuffix(data, []byte("\n"))), string(out), f)
	}
}

func TestFloatFormatMatchesPython(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "python-float-repr.txt"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		bitsHex, repr, ok := strings.Cut(line, " ")
		require.True(t, ok, line)
		bits, err := strconv.ParseUint(bitsHex, 16, 64)
		require.NoError(t, err)
		v := math.Float64frombits(bits)
		require.Equal(t, repr, string(appendPyFloat(nil, v)), "bits %s", bitsHex)
		back, err := strconv.ParseFloat(repr, 64)
		require.NoError(t, err)
		require.Equal(t, bits, math.Float64bits(back), "%s does not read back", repr)
		n++
	}
	require.NoError(t, sc.Err())
	require.Greater(t, n, 800)
}

func TestStringEscaping(t *testing.T) {
	tests := []struct {
		in, want string
		lossy    bool // invalid UTF-8 reads back as U+FFFD
	}{
		{`plain`, `"plain"`, false},
		{`a "quoted" \ path`, `"a \"quoted\" \\ path"`, false},
		{"line\nfeed\r\ttab\b\f", `"line\nfeed\r\ttab\b\f"`, false},
		{"\x00\x01\x1f\x7f", `"\u0000\u0001\u001f` + "\x7f\"", false},
		{"<html> & </html>", `"<html> & </html>"`, false},
		{"héllo, 世界 😀 \u2028", "\"héllo, 世界 😀 \u2028\"", false},
		{"bad \xff byte", "\"bad \ufffd byte\"", true},
	}
	for _, tc := range tests {
		var e artEncoder
		e.string(tc.in)
		require.Equal(t, tc.want, string(e.buf))
		var back string
		require.NoError(t, json.Unmarshal(e.buf, &back))
		if !tc.lossy {
			require.Equal(t, tc.in, back)
		}
	}
}

// sortedKeys returns the sorted keys of a generic JSON object.
func sortedKeys(v any) []string { return slices.Sorted(maps.Keys(v.(map[string]any))) }

// TestCurrentShape: a Report built in Go writes every appendix-A key, at
// every level exactly the seed's key sets.
func TestCurrentShape(t *testing.T) {
	seedData, err := os.ReadFile(seedPath)
	require.NoError(t, err)
	seed := generic(t, seedData).(map[string]any)

	r := syntheticReport()
	require.NoError(t, r.Recompute())
	r.Failures[0].RequestCanary = &CanaryCheck{Marker: "ANVIL_REQ_7_00003"}
	r.Failures[0].ResponseMetadata = &ResponseMetadata{OutputTokenSource: SourceUsage, Usage: &Usage{PromptTokens: new(3)}}
	r.Failures = append(r.Failures, Failure{RequestIndex: 4, FailureClass: FailureRequestError})
	out, err := r.MarshalJSON()
	require.NoError(t, err)
	doc := generic(t, out).(map[string]any)

	require.Len(t, doc, 41)
	require.Equal(t, sortedKeys(seed), sortedKeys(doc))
	// timing_methodology is a map: TestTimingMethodology checks its keys.
	for _, k := range []string{"metrics", "metric_population", "serve_flags", "sampling"} {
		require.Equal(t, sortedKeys(seed[k]), sortedKeys(doc[k]), k)
	}
	require.Len(t, doc["metrics"], 159)
	require.Equal(t, sortedKeys(seed["sampling"].(map[string]any)["top_p"]), sortedKeys(doc["sampling"].(map[string]any)["top_p"]))
	seedRow := seed["request_timings"].([]any)[0]
	for _, row := range doc["request_timings"].([]any) {
		require.Equal(t, sortedKeys(seedRow), sortedKeys(row))
	}
	require.Len(t, seedRow, 20)

	failures := doc["failures"].([]any)
	wantFailure := []string{"elapsed_ms", "error_message", "error_message_truncated", "error_type", "failure_class",
		"http_status", "performance_eligible", "planned_context_tokens", "request_index", "response_metadata",
		"response_received", "response_timing"}
	withCanary := append(slices.Clone(wantFailure), "request_canary")
	slices.Sort(withCanary)
	require.Equal(t, withCanary, sortedKeys(failures[0]))
	require.Equal(t, wantFailure, sortedKeys(failures[1]))
	meta := failures[0].(map[string]any)["response_metadata"]
	require.Equal(t, []string{"content_chunks", "finish_reasons", "output_token_source", "reasoning_chunks",
		"stream_terminal_observed", "usage", "visible_content_truncated"}, sortedKeys(meta))
	require.Equal(t, map[string]any{"completion_tokens": nil, "prompt_tokens": json.Number("3"), "total_tokens": nil},
		meta.(map[string]any)["usage"])
	require.Nil(t, failures[1].(map[string]any)["response_metadata"])
	require.Equal(t, []any{}, meta.(map[string]any)["finish_reasons"])

	// Unset sampling fields are {requested: null, sent: false, effective_request: null}.
	require.Equal(t, map[string]any{"requested": nil, "sent": false, "effective_request": nil},
		doc["sampling"].(map[string]any)["temperature"])
}

// TestUnknownKeysSurvive: keys this version does not know, at any level,
// are written back verbatim (number literals included), in key order.
func TestUnknownKeysSurvive(t *testing.T) {
	in := `{
  "base_url": "http://h/v1",
  "completed": 1,
  "concurrency": 1,
  "context_tokens": 8192,
  "future": {
    "big": 123456789012345678901234567890,
    "list": [
      1.50,
      {}
    ]
  },
  "max_context_tokens": null,
  "max_tokens": 64,
  "metrics": {
    "new_metric_p50": 1e400,
    "ttft_p50_ms": 12.5
  },
  "model": "m",
  "request_timings": [
    {
      "e2e_ms": 3.0,
      "zz_extra": "kept"
    }
  ],
  "requests": 1,
  "run_id": "r",
  "schema": "anvil-serving.benchmark/v1",
  "serve_flags": {
    "a_flag": [],
    "thinking_mode": "default"
  },
  "started_at_unix_ns": 9007199254740993
}`
	var r Report
	require.NoError(t, r.UnmarshalJSON([]byte(in)))
	require.Equal(t, int64(9007199254740993), r.StartedAtUnixNS)
	out, err := r.MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, in, string(out))
}

func TestUnmarshalErrors(t *testing.T) {
	base := func(extra string) string {
		return `{"schema": "anvil-serving.benchmark/v1", "base_url": "", "completed": 1, "concurrency": 1,
			"context_tokens": 8192, "max_context_tokens": null, "max_tokens": 64, "metrics": {}, "model": "m",
			"requests": 1, "run_id": "r", "serve_flags": {}` + extra + `}`
	}
	tests := []struct{ name, in, want string }{
		{"valid", base(""), ""},
		{"wrong type top", base(`, "wall_clock_ms": "slow"`), `wall_clock_ms: want a number, got a string "slow"`},
		{"wrong type row", base(`, "request_timings": [{"ttft_ms": 1}, {"ttft_ms": true}]`), "request_timings[1].ttft_ms: want a number, got a boolean true"},
		{"float for int", base(`, "failed": 1.5`), "failed: want an integer in the int64 range, got 1.5"},
		{"int64 overflow", base(`, "started_at_unix_ns": 99999999999999999999`), "started_at_unix_ns: want an integer in the int64 range"},
		{"float overflow", base(`, "wall_clock_ms": 1e999`), "wall_clock_ms: 1e999 is outside the float64 range"},
		{"metric type", strings.Replace(base(""), `"metrics": {}`, `"metrics": {"ttft_samples": "6"}`, 1), `metrics.ttft_samples: want an integer, got a string "6"`},
		{"context key", base(`, "context_distribution": {"big": 1}`), `context_distribution: key "big": want a decimal integer key`},
		{"negative requests", strings.Replace(base(""), `"requests": 1`, `"requests": -5`, 1), "requests: -5 is negative"},
		{"negative failed", base(`, "failed": -1`), "failed: -1 is negative; want a count >= 0"},
		{"negative completed", strings.Replace(base(""), `"completed": 1`, `"completed": -2`, 1), "completed: -2 is negative"},
		{"negative concurrency", strings.Replace(base(""), `"concurrency": 1`, `"concurrency": -4`, 1), "concurrency: -4 is negative"},
		{"negative max tokens", strings.Replace(base(""), `"max_tokens": 64`, `"max_tokens": -64`, 1), "max_tokens: -64 is negative"},
		{"negative responses received", base(`, "responses_received": -1`), "responses_received: -1 is negative"},
		{"missing schema", `{"requests": 1}`, "schema: missing"},
		{"wrong schema", `{"schema": "anvil-serving.benchmark/v2"}`, `schema: "anvil-serving.benchmark/v2", want "anvil-serving.benchmark/v1"`},
		{"schema type", `{"schema": 1}`, "schema: want a string, got a number 1"},
		{"missing key", `{"schema": "anvil-serving.benchmark/v1", "metrics": {}}`, "base_url: missing"},
		{"array", `[{"schema": "anvil-serving.benchmark/v1"}]`, "want a JSON object at top level, got an array"},
		{"null", `null`, "want a JSON object at top level, got null"},
		{"truncated", `{"schema": "anvil-serving.benchmark/v1", "requests": `, "truncated JSON at byte offset 53"},
		{"empty", ``, "empty input"},
		{"nan", `{"schema": "anvil-serving.benchmark/v1", "x": NaN}`, "bare NaN at byte offset 46"},
		{"infinity", `{"x": [1, Infinity]}`, "bare Infinity at byte offset 10"},
		{"minus infinity", `{"x": -Infinity}`, "bare -Infinity at byte offset 6"},
		{"garbage", `{"x": 1,, }`, "invalid JSON at byte offset 8"},
		{"byte order mark", "\xef\xbb\xbf" + base(""), ""},
		{"byte order mark twice", "\xef\xbb\xbf\xef\xbb\xbf" + base(""), "invalid JSON at byte offset 0"},
		{"duplicate completed", base(`, "completed": 0`), `completed: duplicate key "completed"`},
		{"duplicate escaped", base(`, "c\u006fmpleted": 0`), `completed: duplicate key "completed"`},
		{"duplicate nested", base(`, "anvil_go": {"requests": [{"outcome": "success"}, {"outcome": "a", "outcome": "b"}]}`),
			`anvil_go.requests[1].outcome: duplicate key "outcome"`},
		{"duplicate map key", base(`, "context_distribution": {"8192": 1, "8192": 2}`), `context_distribution.8192: duplicate key "8192"`},
		{"same key in two objects", base(`, "x": [{"a": 1}, {"a": 2}], "y": {"a": {"a": 1}}`), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r Report
			err := r.UnmarshalJSON([]byte(tc.in))
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestMarshalRejectsNonFinite(t *testing.T) {
	r := syntheticReport()
	r.WallClockMS = math.NaN()
	_, err := r.MarshalJSON()
	require.ErrorContains(t, err, "non-finite number NaN")
}

func TestFamilyKeys(t *testing.T) {
	got := map[string]string{}
	for _, fam := range families {
		got[fam.Name] = fam.Key(statP50) + " " + fam.Key(statSamples) + " " + fam.Key(statMeanCI95Low)
	}
	want := map[string]string{
		"completion_tokens":           "completion_tokens_p50 completion_tokens_samples completion_tokens_mean_ci95_low",
		"prompt_tokens":               "prompt_tokens_p50 prompt_tokens_samples prompt_tokens_mean_ci95_low",
		"decode_tok_s":                "decode_tok_s_p50 decode_tok_s_samples decode_tok_s_mean_ci95_low",
		"effective_prefill_tok_s":     "effective_prefill_tok_s_p50 effective_prefill_tok_s_samples effective_prefill_tok_s_mean_ci95_low",
		"mean_inter_token_latency_ms": "mean_inter_token_latency_ms_p50 mean_inter_token_latency_ms_samples mean_inter_token_latency_ms_mean_ci95_low",
		"e2e":                         "e2e_p50_ms e2e_samples e2e_mean_ci95_low_ms",
		"generation":                  "generation_p50_ms generation_samples generation_mean_ci95_low_ms",
		"mean_time_per_output_token":  "mean_time_per_output_token_p50_ms mean_time_per_output_token_samples mean_time_per_output_token_mean_ci95_low_ms",
		"time_to_first_output":        "time_to_first_output_p50_ms time_to_first_output_samples time_to_first_output_mean_ci95_low_ms",
		"tpot":                        "tpot_p50_ms tpot_samples tpot_mean_ci95_low_ms",
		"ttft":                        "ttft_p50_ms ttft_samples ttft_mean_ci95_low_ms",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}

func TestSetErrorMessage(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		wantRunes int
		truncated bool
	}{
		{"short", "connection refused", 18, false},
		{"exactly at the cap", strings.Repeat("a", maxErrorMessageRunes), maxErrorMessageRunes, false},
		{"one over", strings.Repeat("a", maxErrorMessageRunes+1), maxErrorMessageRunes, true},
		{"two-byte escapes fit whole", strings.Repeat("\"\\\n\t\r", maxErrorMessageRunes/5) + "\"\\\n", maxErrorMessageRunes, false},
		{"four-byte runes cut by size", strings.Repeat("😀", maxErrorMessageRunes), maxErrorMessageJSONBytes / 4, true},
		{"three-byte runes", strings.Repeat("世", maxErrorMessageRunes), maxErrorMessageJSONBytes / 3, true},
		{"control escapes", strings.Repeat("\x01", maxErrorMessageRunes), maxErrorMessageJSONBytes / 6, true},
		{"invalid bytes", strings.Repeat("\xff", maxErrorMessageRunes), maxErrorMessageJSONBytes / 3, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var f Failure
			f.SetErrorMessage(tc.in)
			got, truncated := f.ErrorMessage, f.ErrorMessageTruncated
			require.Equal(t, tc.truncated, truncated)
			require.True(t, strings.HasPrefix(tc.in, got))
			require.Equal(t, tc.wantRunes, len([]rune(got)))
			var e artEncoder
			e.string(got)
			require.LessOrEqual(t, len(e.buf)-2, maxErrorMessageJSONBytes, "escaped size")
		})
	}
}

// FuzzEscapedLen: the size SetErrorMessage budgets is the size the encoder
// writes, and a cut message always fits both limits.
func FuzzEscapedLen(f *testing.F) {
	f.Add("plain")
	f.Add("\"\\\n\x01\xff😀世é\u2028")
	f.Fuzz(func(t *testing.T, s string) {
		n := 0
		for _, r := range s {
			n += jsonstr.EscapedLen(r)
		}
		var e artEncoder
		e.string(s)
		require.Equal(t, len(e.buf)-2, n)
		cut, _ := cutErrorMessage(strings.Repeat(s, 1+maxErrorMessageRunes/max(len(s), 1)))
		e = artEncoder{}
		e.string(cut)
		require.LessOrEqual(t, len(e.buf)-2, maxErrorMessageJSONBytes)
		require.LessOrEqual(t, len([]rune(cut)), maxErrorMessageRunes)
	})
}

// TestEncodingJSONEmbedding: through encoding/json a Report (value or
// pointer) still marshals as the artifact, compacted.
func TestEncodingJSONEmbedding(t *testing.T) {
	data, err := os.ReadFile(seedPath)
	require.NoError(t, err)
	var r Report
	require.NoError(t, json.Unmarshal(data, &r))
	for _, v := range []any{r, &r, map[string]any{"run": r}} {
		out, err := json.Marshal(v)
		require.NoError(t, err)
		got := generic(t, out)
		if m, ok := got.(map[string]any); ok && m["run"] != nil {
			got = m["run"]
		}
		require.Equal(t, generic(t, data), got)
	}
}

func TestFieldErrorPath(t *testing.T) {
	data, err := os.ReadFile(seedPath)
	require.NoError(t, err)
	bad := strings.Replace(string(data), `"observed_marker_count": 1`, `"observed_marker_count": "one"`, 1)
	var r Report
	err = r.UnmarshalJSON([]byte(bad))
	var fe *pathError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "request_timings[0].request_canary.observed_marker_count", fe.Path)
	require.EqualError(t, fe.Err, `want an integer, got a string "one"`)
}

// TestHas: a report built in Go has every key; one read from a legacy
// artifact has exactly the keys its document had, at the top level and in
// metrics.
func TestHas(t *testing.T) {
	var built Report
	require.True(t, built.Has("performance_eligible"))
	require.True(t, built.Metrics.Has("ttft_p50_ms"))

	var legacy Report
	raw, err := os.ReadFile("../../testdata/corpus/docs/findings/2026-07-10-blackwell-local-model-bakeoff-evidence/candidate-gemma4-e4b-llamacpp-throughput-8k.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &legacy))
	require.True(t, legacy.Has("requests"))
	require.False(t, legacy.Has("performance_eligible"))
	require.True(t, legacy.Metrics.Has("ttft_p50_ms"))
	require.False(t, legacy.Metrics.Has("ttft_p99_ms"))
}
