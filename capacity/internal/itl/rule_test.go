package itl

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/field"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

func TestStallRuleValidate(t *testing.T) {
	tests := []struct {
		name string
		rule StallRule
		want *field.Error // nil: valid
	}{
		{"default", DefaultStallRule(), nil},
		{"relative one, no floor", StallRule{Relative: 1}, nil},
		{"override", StallRule{Relative: 10, Floor: time.Millisecond, Override: time.Second}, nil},
		{"zero rule", StallRule{}, &field.Error{Pkg: "itl", Field: "StallRule.Relative", Value: 0.0, Rule: "must be a finite number >= 1", Kind: ErrInvalidInput}},
		{"relative below one", StallRule{Relative: 0.5}, &field.Error{Pkg: "itl", Field: "StallRule.Relative", Value: 0.5, Rule: "must be a finite number >= 1", Kind: ErrInvalidInput}},
		{"relative NaN", StallRule{Relative: math.NaN()}, &field.Error{Pkg: "itl", Field: "StallRule.Relative", Value: math.NaN(), Rule: "must be a finite number >= 1", Kind: ErrInvalidInput}},
		{"relative +Inf", StallRule{Relative: math.Inf(1)}, &field.Error{Pkg: "itl", Field: "StallRule.Relative", Value: math.Inf(1), Rule: "must be a finite number >= 1", Kind: ErrInvalidInput}},
		{"negative floor", StallRule{Relative: 10, Floor: -time.Millisecond}, &field.Error{Pkg: "itl", Field: "StallRule.Floor", Value: -time.Millisecond, Rule: "must be >= 0s", Kind: ErrInvalidInput}},
		{"negative override", StallRule{Relative: 10, Override: -1}, &field.Error{Pkg: "itl", Field: "StallRule.Override", Value: time.Duration(-1), Rule: "must be >= 0s (0: no override)", Kind: ErrInvalidInput}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.rule.Validate()
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			var ie *field.Error
			require.True(t, errors.As(err, &ie), "error %v is not a *field.Error", err)
			require.ErrorIs(t, err, ErrInvalidInput)
			// NaN never equals itself; compare it by its printed form.
			if diff := cmp.Diff(tt.want.Error(), ie.Error()); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want.Field, ie.Field); diff != "" {
				t.Errorf("field (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInputErrorMessage(t *testing.T) {
	err := StallRule{Relative: 0.5}.Validate()
	require.EqualError(t, err, "itl: StallRule.Relative = 0.5: must be a finite number >= 1")
}

func TestStallRuleThreshold(t *testing.T) {
	tests := []struct {
		name   string
		rule   StallRule
		median time.Duration
		want   time.Duration
	}{
		{"relative above floor", DefaultStallRule(), 10 * time.Millisecond, 100 * time.Millisecond},
		{"floor above relative", DefaultStallRule(), 4 * time.Millisecond, 50 * time.Millisecond},
		{"no median: floor", DefaultStallRule(), 0, 50 * time.Millisecond},
		{"override below relative", StallRule{Relative: 10, Floor: 50 * time.Millisecond, Override: 30 * time.Millisecond}, 10 * time.Millisecond, 30 * time.Millisecond},
		{"override above relative", StallRule{Relative: 10, Floor: 50 * time.Millisecond, Override: time.Second}, 10 * time.Millisecond, time.Second},
		{"no floor", StallRule{Relative: 3}, 7 * time.Millisecond, 21 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, float64(tt.want), tt.rule.threshold(float64(tt.median)))
		})
	}
}

func TestStallRuleResult(t *testing.T) {
	tests := []struct {
		rule StallRule
		want RuleResult
	}{
		{DefaultStallRule(), RuleResult{Relative: 10, FloorMS: 50}},
		{StallRule{Relative: 2.5, Floor: 1500 * time.Microsecond, Override: 250 * time.Millisecond},
			RuleResult{Relative: 2.5, FloorMS: 1.5, OverrideMS: new(250.0)}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.rule.Result()); diff != "" {
			t.Errorf("%+v: Result (-want +got):\n%s", tt.rule, diff)
		}
	}
}
