package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/anvilbench/anvil/capacity/internal/field"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// lines reads the non-blank lines of a JSONL file, counting every line.
type lines struct {
	sc   *bufio.Scanner
	name string
	line int
}

func newLines(r io.Reader, name string) *lines {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	return &lines{sc: sc, name: name}
}

// next returns the next non-blank line and its number; io.EOF at the end.
// A UTF-8 byte order mark starting the file is not part of its first line
// (an editor may write one; the Azure reader skips it too).
func (l *lines) next() ([]byte, int, error) {
	for l.sc.Scan() {
		l.line++
		b := l.sc.Bytes()
		if l.line == 1 {
			b = bytes.TrimPrefix(b, []byte(utf8BOM))
		}
		b = bytes.TrimSpace(b)
		if len(b) > 0 {
			return b, l.line, nil
		}
	}
	if err := l.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, l.line + 1, &field.Error{Pkg: pkg, Kind: errInvalid, Where: at(l.name, l.line+1), Field: "line",
				Rule: "must be " + fmt.Sprintf("at most %d bytes", maxLineBytes)}
		}
		return nil, l.line + 1, &field.Error{Pkg: pkg, Kind: errInvalid, Where: at(l.name, l.line+1), Field: "file", Err: err}
	}
	return nil, l.line, io.EOF
}

// object is one JSONL row: its keys and their JSON values, with where it
// came from for messages.
type object struct {
	name   string
	line   int
	fields map[string]json.RawMessage
}

// decodeObject parses one line as a JSON object whose keys are all in
// known, each written once.
func decodeObject(b []byte, name string, line int, known []string) (object, error) {
	o := object{name: name, line: line}
	if err := json.Unmarshal(b, &o.fields); err != nil || o.fields == nil {
		if err == nil {
			err = errors.New("null")
		}
		return o, &field.Error{Pkg: pkg, Kind: errInvalid, Where: at(name, line), Field: "row", Value: string(b),
			Rule: "must be a JSON object", Err: err}
	}
	if k, dup := duplicateKey(b); dup {
		return o, &field.Error{Pkg: pkg, Kind: errInvalid, Where: at(name, line), Field: "key", Value: k,
			Rule: "must be written once in a row (it is written more than once)"}
	}
	keys := make([]string, 0, len(o.fields))
	for k := range o.fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(known, k) {
			return o, &field.Error{Pkg: pkg, Kind: errInvalid, Where: at(name, line), Field: "key", Value: k,
				Rule: "must be one of " + strings.Join(known, ", ")}
		}
	}
	return o, nil
}

// raw returns key's value, and whether it is present and not null.
func (o object) raw(key string) (json.RawMessage, bool) {
	v, ok := o.fields[key]
	if !ok || string(v) == "null" {
		return nil, false
	}
	return v, true
}

func (o object) fail(key string, v json.RawMessage, want string) error {
	return &field.Error{Pkg: pkg, Kind: errInvalid, Where: at(o.name, o.line), Field: key, Value: string(v), Rule: "must be " + want}
}

func (o object) missing(key, want string) error {
	return &field.Error{Pkg: pkg, Kind: errInvalid, Where: at(o.name, o.line), Field: key, Rule: "must be present: " + want}
}

// int returns key's value as an integer in [lo, hi]; ok is false when the
// key is absent (or null) and not required.
func (o object) int(key string, lo, hi int64, required bool) (n int64, ok bool, err error) {
	want := fmt.Sprintf("an integer in [%d, %d]", lo, hi)
	v, present := o.raw(key)
	if !present {
		if required {
			return 0, false, o.missing(key, want)
		}
		return 0, false, nil
	}
	n, perr := strconv.ParseInt(string(v), 10, 64)
	if perr != nil || n < lo || n > hi {
		return 0, false, o.fail(key, v, want)
	}
	return n, true, nil
}

// millis returns key's value, a number of milliseconds in [0, maxOffset],
// as a duration rounded to the nanosecond.
func (o object) millis(key string, required bool) (time.Duration, bool, error) {
	max := float64(maxOffset / time.Millisecond)
	want := fmt.Sprintf("a number of milliseconds in [0, %.0f]", max)
	v, present := o.raw(key)
	if !present {
		if required {
			return 0, false, o.missing(key, want)
		}
		return 0, false, nil
	}
	f, perr := strconv.ParseFloat(string(v), 64)
	if perr != nil || !(f >= 0 && f <= max) {
		return 0, false, o.fail(key, v, want)
	}
	return time.Duration(math.Round(f * float64(time.Millisecond))), true, nil
}

// ids returns key's value, an array of block ids in [0, maxBlockID], at
// most maxN of them; nil when absent, null or empty.
func (o object) ids(key string, maxN int) ([]int64, error) {
	want := fmt.Sprintf("an array of at most %d integers in [0, %d]", maxN, int64(maxBlockID))
	v, present := o.raw(key)
	if !present {
		return nil, nil
	}
	var nums []json.Number
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if err := dec.Decode(&nums); err != nil || len(nums) > maxN {
		return nil, o.fail(key, v, want)
	}
	if len(nums) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(nums))
	for i, s := range nums {
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil || n < 0 || n > maxBlockID {
			return nil, o.fail(fmt.Sprintf("%s[%d]", key, i), json.RawMessage(s), want)
		}
		ids[i] = n
	}
	return ids, nil
}

// str returns key's value, a string of 1 to maxLen bytes.
func (o object) str(key string, maxLen int) (string, bool, error) {
	v, present := o.raw(key)
	if !present {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil || s == "" || len(s) > maxLen {
		return "", false, o.fail(key, v, fmt.Sprintf("a string of 1 to %d bytes", maxLen))
	}
	return s, true, nil
}
