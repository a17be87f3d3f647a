package field

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

type name string

func TestErrorMessage(t *testing.T) {
	kind := errors.New("capacity: invalid configuration")
	f := 2.5
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"int", &Error{Pkg: "capacity", Field: "Workload.Concurrency", Value: 0, Rule: "must be in 1..256"}, "capacity: Workload.Concurrency = 0: must be in 1..256"},
		{"string quoted", &Error{Pkg: "capacity", Field: "Target.BaseURL", Value: "ftp://x", Rule: "must be http or https"}, `capacity: Target.BaseURL = "ftp://x": must be http or https`},
		{"named string quoted", &Error{Field: "Spec.Process", Value: name("zipf"), Rule: "must be constant, poisson or gamma"}, `Spec.Process = "zipf": must be constant, poisson or gamma`},
		{"float pointer", &Error{Field: "SLO.TTFT", Value: &f, Rule: "must be > 0"}, "SLO.TTFT = 2.5: must be > 0"},
		{"where and cause", &Error{Pkg: "trace", Where: "conv.jsonl:17", Field: "input_length", Value: "x", Rule: "must be an integer", Err: io.ErrUnexpectedEOF}, `trace: conv.jsonl:17: input_length = "x": must be an integer: unexpected EOF`},
		{"no value", &Error{Pkg: "trace", Field: "timestamp", Rule: "is required"}, "trace: timestamp: is required"},
		{"long value cut", &Error{Field: "f", Value: strings.Repeat("é", 100), Rule: "r"}, `f = "` + strings.Repeat("é", 40) + `…": r`},
		{"kind not in message", &Error{Field: "f", Value: 1, Rule: "r", Kind: kind}, "f = 1: r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.err.Error())
		})
	}
}

func TestErrorUnwrap(t *testing.T) {
	kind := errors.New("kind")
	err := error(&Error{Field: "f", Kind: kind, Err: io.EOF})
	require.ErrorIs(t, err, kind)
	require.ErrorIs(t, err, io.EOF)
	require.NotErrorIs(t, &Error{Field: "f"}, kind)
	var fe *Error
	require.ErrorAs(t, errors.Join(errors.New("other"), err), &fe)
	require.Equal(t, "f", fe.Field)
}

func ExampleError() {
	err := &Error{Pkg: "capacity", Field: "Workload.Concurrency", Value: 0, Rule: "must be in 1..256"}
	fmt.Println(err)
	// Output: capacity: Workload.Concurrency = 0: must be in 1..256
}

// convertible is a type errors.As converts an *Error from and to, as
// capacity.FieldError is.
type convertible Error

func (e *convertible) Error() string      { return (*Error)(e).Error() }
func (e *convertible) As(target any) bool { return (*Error)(e).As(target) }

// TestEach: every *Error of a tree is visited, behind fmt wrapping, in a
// join, and as a type that converts to one.
func TestEach(t *testing.T) {
	a, b, c := &Error{Field: "a"}, &Error{Field: "b"}, &Error{Field: "c"}
	err := fmt.Errorf("run: %w", errors.Join(a, fmt.Errorf("x: %w", b), (*convertible)(c), io.EOF))
	var got []string
	Each(err, func(e *Error) { got = append(got, e.Field) })
	require.Equal(t, []string{"a", "b", "c"}, got)
	Each(nil, func(*Error) { t.Fatal("nil has none") })
}
