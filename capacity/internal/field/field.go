// Package field holds the module's one error type for a bad input value: a
// Workload or Target field, a trace row's column, an arrival spec, a stall
// rule. Users name it as capacity.FieldError, a type declared with the same
// fields, which errors.As converts an *Error to (Error.As); the fake
// server, which shares no code with the client it checks, has its own.
package field

import (
	"fmt"
	"reflect"
	"strconv"
	"unicode/utf8"
)

// maxValueBytes bounds a string value quoted in a message, so a megabyte
// of bad input gives a readable error.
const maxValueBytes = 80

// Error is one bad value. Its message names the package, where the value
// was, the field, the value and what is allowed (ExampleError, whose
// output these lines are):
//
//	capacity: Workload.Concurrency = 20000: must be in 1..16384
//	trace: conv_mooncake.jsonl:2: input_length = "-3": must be an integer in [1, 10000000]
type Error struct {
	// Pkg is the package reporting the error, the message's prefix
	// ("capacity", "trace"); empty for none.
	Pkg string
	// Where locates the value when it sits in a file ("conv.jsonl:17");
	// empty otherwise.
	Where string
	// Field names the value: "Workload.Concurrency", "input_length",
	// "Spec.Rate".
	Field string
	// Value is the offending value (never a secret); nil shows none.
	Value any
	// Rule says what is allowed, as a phrase: "must be in 1..16384".
	Rule string
	// Kind is the sentinel the error matches with errors.Is (for example
	// capacity.ErrInvalidConfig), or nil.
	Kind error
	// Err is the underlying cause (a syntax or I/O error), or nil.
	Err error
}

var _ error = (*Error)(nil)

// Error implements error.
func (e *Error) Error() string {
	msg := ""
	if e.Pkg != "" {
		msg = e.Pkg + ": "
	}
	if e.Where != "" {
		msg += e.Where + ": "
	}
	msg += e.Field
	if v, ok := show(e.Value); ok {
		msg += " = " + v
	}
	if e.Rule != "" {
		msg += ": " + e.Rule
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// As lets errors.As find e as a pointer to any struct type declared with
// exactly Error's fields, capacity.FieldError being the one users name:
// when target points to such a pointer, it is set to e, converted (the
// same value, so both see one error), and As reports true.
func (e *Error) As(target any) bool {
	t := reflect.ValueOf(target)
	if t.Kind() != reflect.Pointer || t.IsNil() {
		return false
	}
	dst, v := t.Elem(), reflect.ValueOf(e)
	if dst.Kind() != reflect.Pointer || dst.Type().Elem().Kind() != reflect.Struct || !v.CanConvert(dst.Type()) {
		return false
	}
	dst.Set(v.Convert(dst.Type()))
	return true
}

// Unwrap returns Kind and Err, those that are set.
func (e *Error) Unwrap() []error {
	var errs []error
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// Each calls f with every *Error in err's tree (errors.Is order: err,
// then what it wraps, depth first), an error of a type that errors.As
// converts to one (capacity.FieldError) included, so a caller can act on
// the values before the message is built (a scrubber removing credentials
// from a value before Error cuts it).
func Each(err error, f func(*Error)) {
	if err == nil {
		return
	}
	if e, ok := err.(*Error); ok {
		f(e)
	} else if a, ok := err.(interface{ As(any) bool }); ok {
		var e *Error
		if a.As(&e) && e != nil {
			f(e)
		}
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		Each(u.Unwrap(), f)
	case interface{ Unwrap() []error }:
		for _, w := range u.Unwrap() {
			Each(w, f)
		}
	}
}

// show formats a value for a message: strings (and named string types)
// quoted and cut to maxValueBytes, a *float64 by its value, nil not at all.
func show(v any) (string, bool) {
	if v == nil {
		return "", false
	}
	if x, ok := v.(*float64); ok {
		if x == nil {
			return "nil", true
		}
		v = *x
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.String {
		return strconv.Quote(cut(rv.String(), maxValueBytes)), true
	}
	return fmt.Sprintf("%v", v), true
}

// cut shortens s to at most n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
