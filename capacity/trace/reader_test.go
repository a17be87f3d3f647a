package trace_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/field"
	"github.com/anvilbench/anvil/capacity/trace"
)

// scan reads text as the named trace and returns its records and error.
func scan(text, name string, opts ...trace.Option) ([]trace.Record, error) {
	r := trace.NewReader(strings.NewReader(text), name, opts...)
	var recs []trace.Record
	for r.Scan() {
		recs = append(recs, r.Record())
	}
	return recs, r.Err()
}

// TestMalformed: the first bad row ends the scan with a *capacity.FieldError whose
// message names the file, the line and the field.
func TestMalformed(t *testing.T) {
	const ok = `{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [0]}` + "\n"
	tests := []struct {
		name, file, text, want string
	}{
		{"mooncake not json", "m.mooncake.jsonl", ok + "{\"timestamp\": 1,\n",
			`trace: m.mooncake.jsonl:2: row = "{\"timestamp\": 1,": must be a JSON object: unexpected end of JSON input`},
		{"mooncake array", "m.mooncake.jsonl", "[1]\n",
			`trace: m.mooncake.jsonl:1: row = "[1]": must be a JSON object: json: cannot unmarshal array into Go value of type map[string]json.RawMessage`},
		{"mooncake negative input", "m.mooncake.jsonl", ok + "\n" + `{"timestamp": 5, "input_length": -3, "output_length": 2}`,
			`trace: m.mooncake.jsonl:3: input_length = "-3": must be an integer in [1, 10000000]`},
		{"mooncake missing output", "m.mooncake.jsonl", `{"timestamp": 5, "input_length": 3}`,
			`trace: m.mooncake.jsonl:1: output_length: must be present: an integer in [1, 10000000]`},
		{"mooncake float tokens", "m.mooncake.jsonl", `{"timestamp": 5, "input_length": 3.5, "output_length": 1}`,
			`trace: m.mooncake.jsonl:1: input_length = "3.5": must be an integer in [1, 10000000]`},
		{"mooncake string timestamp", "m.mooncake.jsonl", `{"timestamp": "0", "input_length": 3, "output_length": 1}`,
			`trace: m.mooncake.jsonl:1: timestamp = "\"0\"": must be a number of milliseconds in [0, 3600000000000]`},
		{"mooncake bad hash id", "m.mooncake.jsonl", `{"timestamp": 0, "input_length": 3, "output_length": 1, "hash_ids": [0, -1]}`,
			`trace: m.mooncake.jsonl:1: hash_ids[1] = "-1": must be an array of at most 19532 integers in [0, 9007199254740992]`},
		{"mooncake unknown key", "m.mooncake.jsonl", `{"timestamp": 0, "input_length": 3, "output_length": 1, "text_input": "hi"}`,
			`trace: m.mooncake.jsonl:1: key = "text_input": must be one of timestamp, input_length, output_length, hash_ids`},
		{"mooncake duplicate key", "m.mooncake.jsonl", ok + `{"timestamp": 5, "input_length": 3, "output_length": 1, "input_length": 900}`,
			`trace: m.mooncake.jsonl:2: key = "input_length": must be written once in a row (it is written more than once)`},
		{"mooncake duplicate key escaped", "m.mooncake.jsonl", `{"timestamp": 5, "input_length": 3, "output_length": 1, "timest\u0061mp": 9}`,
			`trace: m.mooncake.jsonl:1: key = "timestamp": must be written once in a row (it is written more than once)`},
		{"mooncake out of order", "m.mooncake.jsonl", ok + `{"timestamp": 100, "input_length": 3, "output_length": 1}` + "\n" + `{"timestamp": 40, "input_length": 3, "output_length": 1}`,
			`trace: m.mooncake.jsonl:3: timestamp = 40ms: must be at or after the previous row's offset 100ms (line 2): rows are in time order`},
		{"azure no header", "a.csv", "2023-11-16 18:15:46.6805900,374,44\n",
			`trace: a.csv:1: header = "2023-11-16 18:15:46.6805900,374,44": must be a header with the columns TIMESTAMP, ContextTokens and GeneratedTokens`},
		{"azure empty", "a.csv", "",
			`trace: a.csv:1: header: must be a header with the columns TIMESTAMP, ContextTokens and GeneratedTokens`},
		{"azure bad time", "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16T25:00,1,1\n",
			`trace: a.csv:3: TIMESTAMP = "2023-11-16T25:00": must be a date-time such as "2023-11-16 18:15:46.6805900"`},
		{"azure zero generated", "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,0\n",
			`trace: a.csv:2: GeneratedTokens = "0": must be an integer in [1, 10000000]`},
		{"azure short row", "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374\n",
			`trace: a.csv:2: row = "2023-11-16 18:15:46.6805900,374": must be at least 3 columns, as the header`},
		{"azure bad quote", "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,\"374,44\n",
			`trace: a.csv:2: row: extraneous or missing " in quoted-field`},
		{"azure earlier", "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:45.0,374,44\n",
			`trace: a.csv:3: TIMESTAMP = -1.68059s: must be at or after the previous row's offset 0s (line 2): rows are in time order`},
		{"jsonl turn without session", "u.jsonl", `{"offset_ms": 0, "prompt_tokens": 3, "output_tokens": 1, "turn": 2}`,
			`trace: u.jsonl:1: turn = "2": must be absent in a row without a session`},
		{"jsonl session without turn", "u.jsonl", `{"offset_ms": 0, "prompt_tokens": 3, "output_tokens": 1, "session": "a"}`,
			`trace: u.jsonl:1: turn: must be present: an integer in [1, 100000]`},
		{"jsonl think on turn 1", "u.jsonl", `{"offset_ms": 0, "prompt_tokens": 3, "output_tokens": 1, "session": "a", "turn": 1, "think_ms": 5}`,
			`trace: u.jsonl:1: think_ms = "5": must be absent on turn 1 (a session's first turn is sent at its offset)`},
		{"jsonl user above prompt", "u.jsonl", `{"offset_ms": 0, "prompt_tokens": 3, "output_tokens": 1, "session": "a", "turn": 1, "user_tokens": 4}`,
			`trace: u.jsonl:1: user_tokens = "4": must be an integer in [1, 3]`},
		{"jsonl block size changes", "u.jsonl", `{"offset_ms": 0, "prompt_tokens": 3, "output_tokens": 1, "blocks": [1], "block_tokens": 16}` + "\n" + `{"offset_ms": 0, "prompt_tokens": 3, "output_tokens": 1, "blocks": [1], "block_tokens": 32}`,
			`trace: u.jsonl:2: block_tokens = "32": must be 16, as on line 1: equal block ids must mean blocks of one size`},
		{"jsonl empty session", "u.jsonl", `{"offset_ms": 0, "prompt_tokens": 3, "output_tokens": 1, "session": "", "turn": 1}`,
			`trace: u.jsonl:1: session = "\"\"": must be a string of 1 to 256 bytes`},
		{"jsonl duplicate key", "u.jsonl", `{"offset_ms": 0, "prompt_tokens": 3, "output_tokens": 1, "output_tokens": 4096}`,
			`trace: u.jsonl:1: key = "output_tokens": must be written once in a row (it is written more than once)`},
		{"jsonl negative offset", "u.jsonl", `{"offset_ms": -1, "prompt_tokens": 3, "output_tokens": 1}`,
			`trace: u.jsonl:1: offset_ms = "-1": must be a number of milliseconds in [0, 3600000000000]`},
		{"no format", "trace.txt", ok,
			`trace: trace.txt: format = "": must be "mooncake", "azure" or "jsonl" (the file name does not tell)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scan(tc.text, tc.file)
			require.Error(t, err)
			require.Equal(t, tc.want, err.Error())
			fe, ok := errors.AsType[*field.Error](err)
			require.True(t, ok, "%T is not a *field.Error", err)
			require.Equal(t, "trace", fe.Pkg)
			require.NotNil(t, fe.Kind)
			require.ErrorIs(t, err, fe.Kind)
			file, _, _ := strings.Cut(fe.Where, ":")
			require.Equal(t, tc.file, file)
		})
	}
}

// TestLongLine: a JSONL line over 16 MiB is named with its line.
func TestLongLine(t *testing.T) {
	text := `{"offset_ms": 0, "prompt_tokens": 3, "output_tokens": 1}` + "\n" + strings.Repeat(" ", 16<<20+1)
	_, err := scan(text, "u.jsonl")
	require.EqualError(t, err, "trace: u.jsonl:2: line: must be at most 16777216 bytes")
}

// TestNative reads every key of the JSONL format.
func TestNative(t *testing.T) {
	text := strings.Join([]string{
		`{"offset_ms": 1000, "prompt_tokens": 1200, "output_tokens": 64, "blocks": [7, 8], "block_tokens": 600}`,
		``,
		`{"offset_ms": 1500.5, "prompt_tokens": 900, "output_tokens": 32, "blocks": [7], "session": "u1", "turn": 1}`,
		`{"offset_ms": 4000, "prompt_tokens": 1100, "output_tokens": 16, "blocks": null, "session": "u1", "turn": 2, "user_tokens": 150, "think_ms": 2000}`,
	}, "\n")
	got, err := scan(text, "logs.jsonl")
	require.NoError(t, err)
	want := []trace.Record{
		{Line: 1, PromptTokens: 1200, OutputTokens: 64, Blocks: []int64{7, 8}, BlockTokens: 600},
		{Line: 3, TraceOffset: 500500 * time.Microsecond, Offset: 500500 * time.Microsecond,
			PromptTokens: 900, OutputTokens: 32, Blocks: []int64{7}, BlockTokens: 600, Session: "u1", Turn: 1},
		{Line: 4, TraceOffset: 3 * time.Second, Offset: 3 * time.Second, PromptTokens: 1100, OutputTokens: 16,
			Session: "u1", Turn: 2, UserTokens: 150, Think: 2 * time.Second},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

// TestOptions: the speed-up divides the offsets, the window selects on
// the recorded time and starts the replay at its Start, First stops
// after n rows, and the SHA-256 still covers the whole file.
func TestOptions(t *testing.T) {
	path := filepath.Join(tracesDir, realTraces[0].file)
	all, _ := readAll(t, path)

	fast, desc := readAll(t, path, trace.SpeedUp(8))
	require.Len(t, fast, len(all))
	for i, r := range fast {
		require.Equal(t, all[i].TraceOffset, r.TraceOffset)
		require.Equal(t, all[i].TraceOffset/8, r.Offset, "line %d", r.Line)
	}
	require.Equal(t, 8.0, desc.SpeedUp)
	require.Equal(t, realTraces[0].sha256, desc.SHA256)

	w := trace.Window{Start: 30 * time.Second, End: 60 * time.Second}
	var want []trace.Record
	for _, r := range all {
		if r.TraceOffset >= w.Start && r.TraceOffset < w.End {
			r.Offset = (r.TraceOffset - w.Start) / 2
			want = append(want, r)
		}
	}
	require.NotEmpty(t, want)
	got, desc := readAll(t, path, w, trace.SpeedUp(2))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("window (-want +got):\n%s", diff)
	}
	require.Equal(t, trace.Description{File: realTraces[0].file, Format: trace.Format("mooncake"),
		SHA256: realTraces[0].sha256, Bytes: desc.Bytes, Rows: len(want),
		FirstLine: want[0].Line, LastLine: want[len(want)-1].Line,
		SpeedUp: 2, WindowStart: w.Start, WindowEnd: w.End}, desc)

	got, desc = readAll(t, path, trace.Format("mooncake"), w, trace.First(5))
	require.Len(t, got, 5)
	require.Equal(t, want[4].Line, got[4].Line)
	require.Equal(t, 5, desc.Rows)
	require.Equal(t, realTraces[0].sha256, desc.SHA256)
}

func TestOptionErrors(t *testing.T) {
	tests := []struct {
		opts []trace.Option
		want string
	}{
		{[]trace.Option{trace.SpeedUp(0)}, "trace: SpeedUp = 0: must be in [0.001, 1e+06]"},
		{[]trace.Option{trace.SpeedUp(2), trace.SpeedUp(3)}, "trace: SpeedUp: must be given at most once"},
		{[]trace.Option{trace.First(0)}, "trace: First = 0: must be in [1, 10000000]"},
		{[]trace.Option{trace.Window{Start: -time.Second}}, "trace: Window.Start = -1s: must be in [0, 1000000h0m0s)"},
		{[]trace.Option{trace.Window{Start: time.Second, End: time.Second}}, "trace: Window.End = 1s: must be 0 (no end) or in (1s, 1000000h0m0s]"},
		{[]trace.Option{nil}, "trace: Option: must be non-nil"},
	}
	for _, tc := range tests {
		_, err := scan("", "x.jsonl", tc.opts...)
		require.EqualError(t, err, tc.want)
	}
}

func TestDescriptionBeforeEnd(t *testing.T) {
	r := trace.NewReader(strings.NewReader(`{"offset_ms": 0, "prompt_tokens": 3, "output_tokens": 1}`), "x.jsonl")
	require.True(t, r.Scan())
	_, err := r.Description()
	require.Error(t, err)
	require.False(t, r.Scan())
	d, err := r.Description()
	require.NoError(t, err)
	require.Equal(t, 1, d.Rows)
}
