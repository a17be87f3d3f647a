package field_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/internal/field"
)

// TestAsBothWays: errors.As finds a wrapped *field.Error as a
// *capacity.FieldError and the other way round, as the same error (one
// value, seen through both types), and errors.Is its Kind and Err either
// way; a target of another struct type, or no pointer, is not matched.
func TestAsBothWays(t *testing.T) {
	kind := errors.New("invalid")
	inner := &field.Error{Pkg: "trace", Where: "t.jsonl:3", Field: "input_length", Value: "-3", Rule: "must be an integer", Kind: kind, Err: io.ErrUnexpectedEOF}
	err := fmt.Errorf("replay: %w", errors.Join(errors.New("other"), inner))

	fe, ok := errors.AsType[*capacity.FieldError](err)
	require.True(t, ok)
	require.Equal(t, capacity.FieldError{Pkg: "trace", Where: "t.jsonl:3", Field: "input_length", Value: "-3",
		Rule: "must be an integer", Kind: kind, Err: io.ErrUnexpectedEOF}, *fe)
	require.Equal(t, inner.Error(), fe.Error())
	fe.Rule = "changed"
	require.Equal(t, "changed", inner.Rule, "one error, two names")
	require.ErrorIs(t, fe, kind)
	require.ErrorIs(t, fe, io.ErrUnexpectedEOF)

	outer := fmt.Errorf("run: %w", &capacity.FieldError{Pkg: "capacity", Field: "Workload.Requests", Value: -1, Kind: capacity.ErrInvalidConfig})
	back, ok := errors.AsType[*field.Error](outer)
	require.True(t, ok)
	require.Equal(t, "Workload.Requests", back.Field)
	require.ErrorIs(t, outer, capacity.ErrInvalidConfig)

	_, ok = errors.AsType[*otherError](err)
	require.False(t, ok, "another struct")
	require.False(t, inner.As(nil))
	require.False(t, inner.As(new(capacity.FieldError)), "a pointer to a struct, not to a pointer")
	var u interface{ Unwrap() []error }
	require.True(t, errors.As(err, &u), "an interface target is errors.As's own")
}

// otherError has some of Error's fields, not all.
type otherError struct{ Pkg, Field string }

func (e *otherError) Error() string { return e.Pkg + ": " + e.Field }
