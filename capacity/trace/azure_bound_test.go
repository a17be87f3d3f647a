package trace_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/trace"
)

// repeatReader reads n bytes of a repeated pattern, never holding more
// than the pattern.
type repeatReader struct {
	pattern string
	n       int64
	i       int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && int64(k) < r.n {
		p[k] = r.pattern[r.i%len(r.pattern)]
		r.i++
		k++
	}
	r.n -= int64(k)
	return k, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

const azureHeader = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n"

// hugeRecord is an Azure trace whose third line starts a 64 MiB record:
// a bare field, a quoted one, or a quoted one of a million short lines.
func hugeRecord(kind string) io.Reader {
	const n = 64 << 20
	switch kind {
	case "bare":
		return io.MultiReader(strings.NewReader(azureHeader+"2023-11-16 18:15:47,"), &repeatReader{pattern: "x", n: n})
	case "quoted":
		return io.MultiReader(strings.NewReader(azureHeader+"2023-11-16 18:15:47,\""), &repeatReader{pattern: "x,y", n: n})
	default: // quoted over many lines
		return io.MultiReader(strings.NewReader(azureHeader+"2023-11-16 18:15:47,\""), &repeatReader{pattern: "abcdefgh\n", n: n})
	}
}

// TestAzureRecordBound: a CSV record over 1 MiB, a bare field, a quoted
// one or a quoted one over a million lines, is refused at the line it
// starts on, having read no more than the bound of it: encoding/csv alone
// reads a 64 MiB field whole.
func TestAzureRecordBound(t *testing.T) {
	for _, kind := range []string{"bare", "quoted", "lines"} {
		t.Run(kind, func(t *testing.T) {
			src := &countingReader{r: hugeRecord(kind)}
			r := trace.NewReader(src, "a.csv")
			n := 0
			for r.Scan() {
				n++
			}
			require.Equal(t, 1, n, "the row before")
			require.EqualError(t, r.Err(), "trace: a.csv:3: row: must be at most 1048576 bytes, its fields and quoted newlines included")
			require.Less(t, src.n, int64(1<<20+64<<10), "read %d bytes of the input", src.n)
		})
	}
}

// TestAzureRecordAtTheBound: a record of exactly 1 MiB is read.
func TestAzureRecordAtTheBound(t *testing.T) {
	row := "2023-11-16 18:15:47,1,2,"
	body := azureHeader + row + strings.Repeat("z", 1<<20-len(row)) + "\n2023-11-16 18:15:48,3,4\n"
	recs, err := scan(body, "a.csv")
	require.NoError(t, err)
	require.Len(t, recs, 3)
	require.Equal(t, 4, recs[2].Line)
}

// TestAzureOpenQuoteLine: a quote left open is reported at the line it
// opened on, not where the file ended.
func TestAzureOpenQuoteLine(t *testing.T) {
	body := azureHeader + "2023-11-16 18:15:47,\"374,44\n2023-11-16 18:15:48,1,1\n2023-11-16 18:15:49,1,1\n"
	_, err := scan(body, "a.csv")
	require.EqualError(t, err, `trace: a.csv:3: row: extraneous or missing " in quoted-field`)
}

// TestJSONLByteOrderMark: a JSONL trace (Mooncake's or anvil's own)
// starting with a UTF-8 byte order mark is read as without it, as the
// Azure reader reads a CSV's; its description is of the file as it is.
func TestJSONLByteOrderMark(t *testing.T) {
	for _, tc := range []struct{ name, text string }{
		{"m.mooncake.jsonl", `{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [0]}` + "\n" + `{"timestamp": 5, "input_length": 3, "output_length": 1}` + "\n"},
		{"u.jsonl", `{"offset_ms": 0, "prompt_tokens": 3, "output_tokens": 1}` + "\n" + `{"offset_ms": 7, "prompt_tokens": 4, "output_tokens": 2}` + "\n"},
		{"a.csv", azureHeader},
	} {
		plain, err := scan(tc.text, tc.name)
		require.NoError(t, err, tc.name)
		text := "\ufeff" + tc.text
		r := trace.NewReader(strings.NewReader(text), tc.name)
		var got []trace.Record
		for r.Scan() {
			got = append(got, r.Record())
		}
		require.NoError(t, r.Err(), tc.name)
		require.Equal(t, plain, got, tc.name)
		d, err := r.Description()
		require.NoError(t, err)
		sum := sha256.Sum256([]byte(text))
		require.Equal(t, hex.EncodeToString(sum[:]), d.SHA256, "the description is of the bytes read")
	}
	_, err := scan(`{"offset_ms": 0, "prompt_tokens": 3, "output_tokens": 1}`+"\n\ufeff{}\n", "u.jsonl")
	require.ErrorContains(t, err, "u.jsonl:2: row", "a mark inside the file is data")
}

// BenchmarkAzure64MiBField reads an Azure trace whose second row holds a
// 64 MiB field, to its error: the memory it costs (B/op) is bounded by
// the 1 MiB record bound, not the field.
func BenchmarkAzure64MiBField(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		r := trace.NewReader(hugeRecord("quoted"), "a.csv")
		for r.Scan() {
		}
		if r.Err() == nil {
			b.Fatal("no error")
		}
	}
}
