package itl

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

func TestStallRuleValidate(t *testing.T) {
	tests := []struct {
		name string
		rule StallRule
		want *InputError // nil: valid
	}{
		{"default", DefaultStallRule(), nil},
		{"relative one, no floor", StallRule{Relative: 1}, nil},
		{"override", StallRule{Relative: 10, Floor: time.Millisecond, Override: time.Second}, nil},
		{"zero rule", StallRule{}, &InputError{"StallRule.Relative", 0.0, "must be a finite number >= 1"}},
		{"relative below one", StallRule{Relative: 0.5}, &InputError{"StallRule.Relative", 0.5, "must be a finite number >= 1"}},
		{"relative NaN", StallRule{Relative: math.NaN()}, &InputError{"StallRule.Relative", math.NaN(), "must be a finite number >= 1"}},
		{"relative +Inf", StallRule{Relative: math.Inf(1)}, &InputError{"StallRule.Relative", math.Inf(1), "must be a finite number >= 1"}},
		{"negative floor", StallRule{Relative: 10, Floor: -time.Millisecond}, &InputError{"StallRule.Floor", -time.Millisecond, "must be >= 0s"}},
		{"negative override", StallRule{Relative: 10, Override: -1}, &InputError{"StallRule.Override", time.Duration(-1), "must be >= 0s (0: no override)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.rule.Validate()
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			var ie *InputError
			require.True(t, errors.As(err, &ie), "error %v is not an *InputError", err)
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
