package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// rawControl reports the first character of out a terminal would act on:
// a C0 control other than newline (tab too for text meant for people),
// DEL, a C1 control or a bidi override; -1 when there is none.
func rawControl(out string, allowTab bool) rune {
	if !utf8.ValidString(out) {
		return utf8.RuneError
	}
	for _, r := range out {
		switch {
		case r == '\n', allowTab && r == '\t':
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return r
		}
	}
	return -1
}

// TestHostileTextNeverReachesTheTerminal: an artifact written here (not by
// anvil) whose strings carry ESC[2J, NUL, a C1 CSI and a bidi override,
// under a file name that does too, goes through summary, bench and the
// error path; nothing printed holds a raw control.
func TestHostileTextNeverReachesTheTerminal(t *testing.T) {
	const evil = "\x1b[2J\x00\u009b1m\u202e\r"
	data, err := os.ReadFile("../../../testdata/seed-capacity-v4-reasoning.json")
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	doc["model"] = "m" + evil
	doc["engine"] = "e" + evil
	doc["run_id"] = "r" + evil
	doc["measurement_protocol"] = "p" + evil
	hostile, err := json.Marshal(doc)
	require.NoError(t, err)
	dir := t.TempDir()
	const evilName = "\x1b[2J\u009b1m\u202e\r" // a file name holds no NUL
	path := filepath.Join(dir, "run"+evilName+".json")
	require.NoError(t, os.WriteFile(path, hostile, 0o644))
	broken := filepath.Join(dir, "bad"+evilName+".json")
	require.NoError(t, os.WriteFile(broken, []byte(`{"schema": "`+evil+`"`), 0o644))

	var stdout, stderr bytes.Buffer
	require.Equal(t, 1, run([]string{"summary", path, broken}, &stdout, &stderr))
	require.Equal(t, rune(-1), rawControl(stdout.String(), false), "summary:\n%q", stdout.String())
	require.Equal(t, rune(-1), rawControl(stderr.String(), false), "stderr:\n%q", stderr.String())
	require.Contains(t, stdout.String(), `model m\x1b[2J\x00\u009b1m\u202e\x0d  engine e\x1b[2J`)
	require.Contains(t, stdout.String(), `== `+dir+`/run\x1b[2J`)
	require.Contains(t, stderr.String(), `bad\x1b[2J`)

	stdout.Reset()
	stderr.Reset()
	require.Equal(t, 0, run([]string{"bench", path}, &stdout, &stderr), stderr.String())
	require.Equal(t, rune(-1), rawControl(stdout.String(), true), "bench:\n%q", stdout.String())
	rs := benchResults(t, stdout.Bytes(), "hostile.bench")
	require.Len(t, rs, 1)
	require.Equal(t, `m\x1b[2J\x00\u009b1m\u202e`, string(rs[0].GetConfig("model")),
		"still valid benchfmt: the trailing CR was whitespace, trimmed")
}
