package trace

import (
	"encoding/csv"
	"errors"
	"fmt"
	"github.com/anvilbench/anvil/capacity/internal/field"
	"io"
	"strconv"
	"strings"
	"time"
)

// The columns of an Azure LLM inference trace
// (AzureLLMInferenceDataset2023.md: "TIMESTAMP | Invocation time",
// "ContextTokens | Number of context tokens", "GeneratedTokens | Number
// of generated tokens").
const (
	azureTimestamp = "TIMESTAMP"
	azureContext   = "ContextTokens"
	azureGenerated = "GeneratedTokens"
)

// azureLayouts are the date-time forms of TIMESTAMP, tried in order: the
// 2023 traces' "2023-11-16 18:15:46.6805900" (no zone: UTC), the 2024
// traces' "2024-05-12 00:00:00.001163+00:00", and RFC 3339. A fraction of
// a second of any length is accepted after the seconds.
var azureLayouts = []string{
	"2006-01-02 15:04:05",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02T15:04:05",
}

// azure reads the Azure CSV: a header naming the three columns (in any
// order, other columns ignored), then one request a row.
type azure struct {
	r      *csv.Reader
	in     *recordBound
	name   string
	cols   [3]int // TIMESTAMP, ContextTokens, GeneratedTokens
	header bool
	origin time.Time
	first  bool
}

func newAzure(r io.Reader, name string) *azure {
	in := &recordBound{r: r}
	c := csv.NewReader(in)
	c.FieldsPerRecord = -1
	c.ReuseRecord = true
	return &azure{r: c, in: in, name: name}
}

// errRecordTooLong is the error recordBound reads past its limit.
var errRecordTooLong = errors.New("record too long")

// recordBound feeds a csv.Reader at most maxRecordBytes+1 bytes past the
// start of the record it reads (encoding/csv has no bound of its own: a
// 64 MiB field was read whole), so a record, its quoted newlines and its
// fields included, costs a few times maxRecordBytes at most. The
// csv.Reader's own buffer reads ahead of the record by a few KiB, which
// the bound allows for.
type recordBound struct {
	r     io.Reader
	out   int64 // bytes handed to the csv.Reader
	limit int64 // the most it is handed
}

// start sets the bound of the record beginning at offset off.
func (b *recordBound) start(off int64) { b.limit = off + maxRecordBytes + 1 }

func (b *recordBound) Read(p []byte) (int, error) {
	if b.out >= b.limit {
		return 0, errRecordTooLong
	}
	if rest := b.limit - b.out; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := b.r.Read(p)
	b.out += int64(n)
	return n, err
}

func (*azure) stampField() string { return azureTimestamp }

// read returns the next record. A malformed one is reported at the line
// it starts on (csv.ParseError.StartLine: a quote left open runs to the
// end of the file, and the line where it opened is the one to fix), a
// record over the bound at its first line too.
func (a *azure) read() ([]string, error) {
	a.in.start(a.r.InputOffset())
	row, err := a.r.Read()
	switch pe, parse := errors.AsType[*csv.ParseError](err); {
	case err == nil || errors.Is(err, io.EOF):
		return row, err
	case parse:
		return nil, &field.Error{Pkg: pkg, Kind: errInvalid, Where: at(a.name, pe.StartLine), Field: "row", Err: pe.Err}
	}
	line, _ := a.r.FieldPos(0) // a record cut by a read error still has its first field
	if errors.Is(err, errRecordTooLong) {
		return nil, &field.Error{Pkg: pkg, Kind: errInvalid, Where: at(a.name, line), Field: "row",
			Rule: "must be " + fmt.Sprintf("at most %d bytes, its fields and quoted newlines included", maxRecordBytes)}
	}
	return nil, &field.Error{Pkg: pkg, Kind: errInvalid, Where: at(a.name, line), Field: "file", Err: err}
}

func (a *azure) readHeader() error {
	want := "a header with the columns " + azureTimestamp + ", " + azureContext + " and " + azureGenerated
	row, err := a.read()
	if errors.Is(err, io.EOF) {
		return &field.Error{Pkg: pkg, Kind: errInvalid, Where: at(a.name, 1), Field: "header", Rule: "must be " + want}
	}
	if err != nil {
		return err
	}
	a.cols = [3]int{-1, -1, -1}
	for i, c := range row {
		c = strings.TrimSpace(strings.TrimPrefix(c, utf8BOM))
		for j, name := range []string{azureTimestamp, azureContext, azureGenerated} {
			if c == name && a.cols[j] < 0 {
				a.cols[j] = i
			}
		}
	}
	for _, c := range a.cols {
		if c < 0 {
			return &field.Error{Pkg: pkg, Kind: errInvalid, Where: at(a.name, 1), Field: "header",
				Value: strings.Join(row, ","), Rule: "must be " + want}
		}
	}
	a.header = true
	return nil
}

func (a *azure) next(rec *Record) (time.Duration, error) {
	if !a.header {
		if err := a.readHeader(); err != nil {
			return 0, err
		}
	}
	row, err := a.read()
	if err != nil {
		return 0, err
	}
	line, _ := a.r.FieldPos(0)
	rec.Line = line
	need := max(a.cols[0], a.cols[1], a.cols[2]) + 1
	if len(row) < need {
		return 0, &field.Error{Pkg: pkg, Kind: errInvalid, Where: at(a.name, line), Field: "row", Value: strings.Join(row, ","),
			Rule: "must be " + fmt.Sprintf("at least %d columns, as the header", need)}
	}
	ts := strings.TrimSpace(row[a.cols[0]])
	t, ok := parseAzureTime(ts)
	if !ok {
		return 0, &field.Error{Pkg: pkg, Kind: errInvalid, Where: at(a.name, line), Field: azureTimestamp, Value: ts,
			Rule: "must be " + `a date-time such as "2023-11-16 18:15:46.6805900"`}
	}
	var n [2]int
	for i, col := range []string{azureContext, azureGenerated} {
		s := strings.TrimSpace(row[a.cols[i+1]])
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 || v > MaxTokens {
			return 0, &field.Error{Pkg: pkg, Kind: errInvalid, Where: at(a.name, line), Field: col, Value: s,
				Rule: "must be " + fmt.Sprintf("an integer in [1, %d]", MaxTokens)}
		}
		n[i] = v
	}
	rec.PromptTokens, rec.OutputTokens = n[0], n[1]
	if !a.first {
		a.origin, a.first = t, true
	}
	return t.Sub(a.origin), nil
}

func parseAzureTime(s string) (time.Time, bool) {
	for _, layout := range azureLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
