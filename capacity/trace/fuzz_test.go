package trace_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/field"
	"github.com/anvilbench/anvil/capacity/trace"
)

// seedLines adds the first lines of a real trace to the corpus, as one
// input and line by line.
func seedLines(f *testing.F, file string, n int) {
	data, err := os.ReadFile(filepath.Join(tracesDir, file))
	if err != nil {
		f.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	var head []byte
	for i := 0; i < n && sc.Scan(); i++ {
		f.Add(append([]byte(nil), sc.Bytes()...))
		head = append(append(head, sc.Bytes()...), '\n')
	}
	f.Add(head)
}

// checkTrace holds any input to the reader's contract: it never panics;
// it ends either with a *field.Error naming the file and a line within
// the input, or at the end with a Description whose SHA-256 and size are
// the input's; every record it yields is inside the bounds, in time
// order, with its blocks of a positive size.
func checkTrace(t *testing.T, data []byte, name string, format trace.Format) {
	r := trace.NewReader(bytes.NewReader(data), name, format)
	lines := bytes.Count(data, []byte("\n")) + 1
	prev := trace.Record{}
	n := 0
	for r.Scan() {
		rec := r.Record()
		n++
		if rec.Line < 1 || rec.Line > lines || rec.Line <= prev.Line {
			t.Fatalf("record %d: line %d after line %d (input has %d lines)", n, rec.Line, prev.Line, lines)
		}
		if rec.TraceOffset < prev.TraceOffset || rec.TraceOffset > 1_000_000*time.Hour || rec.Offset != rec.TraceOffset {
			t.Fatalf("line %d: offset %v (%v) after %v", rec.Line, rec.TraceOffset, rec.Offset, prev.TraceOffset)
		}
		if rec.PromptTokens < 1 || rec.PromptTokens > trace.MaxTokens || rec.OutputTokens < 1 || rec.OutputTokens > trace.MaxTokens {
			t.Fatalf("line %d: tokens %d, %d out of bounds", rec.Line, rec.PromptTokens, rec.OutputTokens)
		}
		if (len(rec.Blocks) > 0) != (rec.BlockTokens > 0) {
			t.Fatalf("line %d: %d blocks of %d tokens", rec.Line, len(rec.Blocks), rec.BlockTokens)
		}
		if (rec.Session != "") != (rec.Turn > 0) {
			t.Fatalf("line %d: session %q turn %d", rec.Line, rec.Session, rec.Turn)
		}
		prev = rec
	}
	if err := r.Err(); err != nil {
		fe, ok := errors.AsType[*field.Error](err)
		if !ok {
			t.Fatalf("error %v is a %T, not a *field.Error", err, err)
		}
		file, lineText, _ := strings.Cut(fe.Where, ":")
		line, _ := strconv.Atoi(lineText)
		if file != name || fe.Field == "" || line < 1 || line > lines+1 {
			t.Fatalf("error %q: file %q, line %d of %d, field %q", err, file, line, lines, fe.Field)
		}
		return
	}
	d, err := r.Description()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if d.SHA256 != hex.EncodeToString(sum[:]) || d.Bytes != int64(len(data)) || d.Rows != n {
		t.Fatalf("description %+v of %d bytes, %d rows", d, len(data), n)
	}
}

func FuzzMooncake(f *testing.F) {
	seedLines(f, realTraces[0].file, 4)
	seedLines(f, realTraces[1].file, 2)
	f.Add([]byte(`{"timestamp": 1.5e3, "input_length": 1, "output_length": 1, "hash_ids": []}` + "\r\n\n"))
	f.Add([]byte(`{"timestamp": 5, "input_length": 1, "output_length": 1}` + "\n" + `{"timestamp": 4, "input_length": 1, "output_length": 1}`))
	f.Add([]byte("\ufeff" + `{"timestamp": 0, "input_length": 1, "output_length": 1}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkTrace(t, data, "f.jsonl", trace.Format("mooncake"))
	})
}

func FuzzAzure(f *testing.F) {
	seedLines(f, realTraces[2].file, 4)
	seedLines(f, realTraces[3].file, 3)
	f.Add([]byte("GeneratedTokens,x,TIMESTAMP,ContextTokens\r\n5,\"a,b\",2024-05-12 00:00:00.001163+00:00,7\r\n"))
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:40,1,1\n"))
	f.Add([]byte("\ufeffTIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,\"374,44\n2023-11-16 18:15:47,1,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkTrace(t, data, "f.csv", trace.Format("azure"))
	})
}

func FuzzJSONL(f *testing.F) {
	f.Add([]byte(`{"offset_ms": 0, "prompt_tokens": 1200, "output_tokens": 64, "blocks": [7, 8], "block_tokens": 600}` + "\n" +
		`{"offset_ms": 10.25, "prompt_tokens": 900, "output_tokens": 32, "session": "u1", "turn": 1}` + "\n" +
		`{"offset_ms": 4000, "prompt_tokens": 1100, "output_tokens": 16, "session": "u1", "turn": 2, "user_tokens": 150, "think_ms": 2000}`))
	f.Add([]byte(`{"offset_ms": 0, "prompt_tokens": 1, "output_tokens": 1, "blocks": [1], "block_tokens": 2}` + "\n" +
		`{"offset_ms": 0, "prompt_tokens": 1, "output_tokens": 1, "blocks": [1], "block_tokens": 3}`))
	f.Add([]byte(`{"offset_ms": 0, "prompt_tokens": 1, "output_tokens": 1, "turn": 1}`))
	f.Add([]byte("\ufeff" + `{"offset_ms": 0, "prompt_tokens": 1, "output_tokens": 1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkTrace(t, data, "f.jsonl", trace.Format("jsonl"))
	})
}
