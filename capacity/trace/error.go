package trace

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrInvalid is wrapped by every *FieldError, so callers can test
// errors.Is(err, trace.ErrInvalid) for bad input of any kind.
var ErrInvalid = errors.New("trace: invalid input")

// FieldError is one bad value: a field of a trace row, an option, or a
// session spec. Its message names where the value was, the field, the
// value and what is allowed:
//
//	conv.jsonl:17: input_length = -3: must be an integer in [1, 10000000]
//	SpeedUp = 0: must be in [0.001, 1e+06]
type FieldError struct {
	// File is the trace's name as given to NewReader; empty for an
	// option or a spec.
	File string
	// Line is the 1-based line of the row in File; 0 when the value is
	// not in a row.
	Line int
	// Field is the key (JSONL), the column (CSV), or the option or spec
	// field name.
	Field string
	// Value is the offending value as written (a JSON or CSV text), or
	// the option's value.
	Value any
	// Want says what is allowed.
	Want string
	// Err is the underlying error (a syntax or I/O error), or nil.
	Err error
}

var _ error = (*FieldError)(nil)

// Error implements error.
func (e *FieldError) Error() string {
	var where string
	switch {
	case e.File != "" && e.Line > 0:
		where = e.File + ":" + strconv.Itoa(e.Line) + ": "
	case e.File != "":
		where = e.File + ": "
	case e.Line > 0:
		where = "line " + strconv.Itoa(e.Line) + ": "
	}
	value := ""
	switch v := e.Value.(type) {
	case nil:
	case string:
		value = " = " + strconv.Quote(cut(v, 80))
	default:
		value = fmt.Sprintf(" = %v", v)
	}
	msg := where + e.Field + value
	if e.Want != "" {
		msg += ": must be " + e.Want
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns ErrInvalid and the underlying error, if any.
func (e *FieldError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalid, e.Err}
	}
	return []error{ErrInvalid}
}

// cut shortens s to at most n bytes for a message, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
