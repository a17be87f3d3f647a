package arrival

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/anvilbench/anvil/capacity/internal/field"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"
)

func TestParseName(t *testing.T) {
	for _, n := range []Name{Constant, Poisson, Gamma} {
		got, err := ParseName(string(n))
		require.NoError(t, err)
		require.Equal(t, n, got)
	}
	for _, s := range []string{"", "Poisson", " poisson", "uniform", "gamma\n"} {
		_, err := ParseName(s)
		var se *field.Error
		require.ErrorAs(t, err, &se, "ParseName(%q)", s)
		want := &field.Error{Pkg: "arrival", Field: "Spec.Process", Value: s, Rule: `must be one of "constant", "poisson", "gamma"`, Kind: ErrInvalidSpec}
		require.Equal(t, want, se, "ParseName(%q)", s)
		require.ErrorIs(t, err, ErrInvalidSpec)
		require.Equal(t, fmt.Sprintf("arrival: Spec.Process = %q: must be one of \"constant\", \"poisson\", \"gamma\"", s), err.Error())
	}
}

func TestValidate(t *testing.T) {
	valid := []Spec{
		{Process: Constant, Rate: 1},
		{Process: Poisson, Rate: MinRate, Seed: -1},
		{Process: Poisson, Rate: MaxRate, Seed: math.MinInt64},
		{Process: Gamma, Rate: 10},
		{Process: Gamma, Rate: 10, Burstiness: MinBurstiness},
		{Process: Gamma, Rate: 10, Burstiness: MaxBurstiness},
		{Process: Gamma, Rate: 10, Burstiness: 1},
	}
	for _, s := range valid {
		require.NoError(t, s.Validate(), "%+v", s)
	}

	tests := []struct {
		name  string
		spec  Spec
		field string
		value any
		msg   string
	}{
		{"zero spec", Spec{}, "Spec.Process", Name(""),
			`arrival: Spec.Process = "": must be one of "constant", "poisson", "gamma"`},
		{"unknown process", Spec{Process: "bursty", Rate: 1}, "Spec.Process", Name("bursty"),
			`arrival: Spec.Process = "bursty": must be one of "constant", "poisson", "gamma"`},
		{"zero rate", Spec{Process: Poisson}, "Spec.Rate", 0.0,
			"arrival: Spec.Rate = 0: must be in [0.001, 1e+06] requests per second"},
		{"negative rate", Spec{Process: Constant, Rate: -5}, "Spec.Rate", -5.0,
			"arrival: Spec.Rate = -5: must be in [0.001, 1e+06] requests per second"},
		{"rate below min", Spec{Process: Constant, Rate: 0.0009}, "Spec.Rate", 0.0009,
			"arrival: Spec.Rate = 0.0009: must be in [0.001, 1e+06] requests per second"},
		{"rate above max", Spec{Process: Gamma, Rate: 1e6 + 1}, "Spec.Rate", 1e6 + 1,
			"arrival: Spec.Rate = 1.000001e+06: must be in [0.001, 1e+06] requests per second"},
		{"NaN rate", Spec{Process: Poisson, Rate: math.NaN()}, "Spec.Rate", math.NaN(),
			"arrival: Spec.Rate = NaN: must be in [0.001, 1e+06] requests per second"},
		{"infinite rate", Spec{Process: Poisson, Rate: math.Inf(1)}, "Spec.Rate", math.Inf(1),
			"arrival: Spec.Rate = +Inf: must be in [0.001, 1e+06] requests per second"},
		{"burstiness with poisson", Spec{Process: Poisson, Rate: 1, Burstiness: 1}, "Spec.Burstiness", 1.0,
			`arrival: Spec.Burstiness = 1: must be 0 unless Spec.Process is "gamma"`},
		{"burstiness with constant", Spec{Process: Constant, Rate: 1, Burstiness: 0.5}, "Spec.Burstiness", 0.5,
			`arrival: Spec.Burstiness = 0.5: must be 0 unless Spec.Process is "gamma"`},
		{"negative burstiness", Spec{Process: Gamma, Rate: 1, Burstiness: -1}, "Spec.Burstiness", -1.0,
			"arrival: Spec.Burstiness = -1: must be 0 (meaning 1) or in [0.01, 100]"},
		{"burstiness below min", Spec{Process: Gamma, Rate: 1, Burstiness: 0.005}, "Spec.Burstiness", 0.005,
			"arrival: Spec.Burstiness = 0.005: must be 0 (meaning 1) or in [0.01, 100]"},
		{"burstiness above max", Spec{Process: Gamma, Rate: 1, Burstiness: 101}, "Spec.Burstiness", 101.0,
			"arrival: Spec.Burstiness = 101: must be 0 (meaning 1) or in [0.01, 100]"},
		{"NaN burstiness", Spec{Process: Gamma, Rate: 1, Burstiness: math.NaN()}, "Spec.Burstiness", math.NaN(),
			"arrival: Spec.Burstiness = NaN: must be 0 (meaning 1) or in [0.01, 100]"},
		{"first invalid field wins", Spec{Process: "x", Rate: -1, Burstiness: -1}, "Spec.Process", Name("x"),
			`arrival: Spec.Process = "x": must be one of "constant", "poisson", "gamma"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.spec.Validate()
			var se *field.Error
			require.ErrorAs(t, err, &se)
			require.ErrorIs(t, err, ErrInvalidSpec)
			require.Equal(t, tt.field, se.Field)
			require.Empty(t, cmp.Diff(tt.value, se.Value, cmp.Comparer(sameFloat)))
			require.Equal(t, tt.msg, err.Error())

			// Schedule reports the same error, for any n.
			_, serr := Schedule(tt.spec, 10)
			require.ErrorIs(t, serr, ErrInvalidSpec)
			require.Empty(t, cmp.Diff(err, serr, cmp.Comparer(sameFloat), cmpopts.IgnoreFields(field.Error{}, "Kind")))
		})
	}
}

// sameFloat is float equality with NaN equal to NaN.
func sameFloat(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// TestWantStrings checks the allowed ranges that error messages print
// against the constants they describe.
func TestWantStrings(t *testing.T) {
	require.Equal(t, fmt.Sprintf("in [%g, %g] requests per second", MinRate, MaxRate), wantRate)
	require.Equal(t, fmt.Sprintf("0 (meaning 1) or in [%g, %g]", MinBurstiness, MaxBurstiness), wantBurstiness)
	require.Equal(t, fmt.Sprintf("in [0, %d]", MaxN), wantN)
	for _, n := range []Name{Constant, Poisson, Gamma} {
		require.True(t, strings.Contains(wantName, fmt.Sprintf("%q", n)), "wantName lists %q", n)
	}
}

func TestOffsetsArgumentErrors(t *testing.T) {
	r := NewRand(1)
	tests := []struct {
		name  string
		err   func() error
		field string
		msg   string
	}{
		{"negative n", func() error { _, err := Offsets(PoissonProcess{}, 1, r, -1); return err },
			"n", "arrival: n = -1: must be in [0, 1000000]"},
		{"n above max", func() error { _, err := Offsets(PoissonProcess{}, 1, r, MaxN+1); return err },
			"n", "arrival: n = 1000001: must be in [0, 1000000]"},
		{"schedule n above max", func() error { _, err := Schedule(Spec{Process: Constant, Rate: 1}, MaxN+1); return err },
			"n", "arrival: n = 1000001: must be in [0, 1000000]"},
		{"zero rate", func() error { _, err := Offsets(PoissonProcess{}, 0, r, 1); return err },
			"rate", "arrival: rate = 0: must be in [0.001, 1e+06] requests per second"},
		{"nil process", func() error { _, err := Offsets(nil, 1, r, 1); return err },
			"p", "arrival: p: must be a non-nil Process"},
		{"nil rand", func() error { _, err := Offsets(ConstantProcess{}, 1, nil, 1); return err },
			"r", "arrival: r = <nil>: must be a non-nil *rand.Rand"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err()
			var se *field.Error
			require.ErrorAs(t, err, &se)
			require.ErrorIs(t, err, ErrInvalidSpec)
			require.Equal(t, tt.field, se.Field)
			require.Equal(t, tt.msg, err.Error())
		})
	}
}

func TestIntervalErrors(t *testing.T) {
	tests := []struct {
		name  string
		draw  float64
		index int
		msg   string
	}{
		{"negative", -1, 2, "arrival: interval 2 = -1: must be a finite number >= 0"},
		{"NaN", math.NaN(), 2, "arrival: interval 2 = NaN: must be a finite number >= 0"},
		{"infinite", math.Inf(1), 2, "arrival: interval 2 = +Inf: must be a finite number >= 0"},
		{"beyond time.Duration", 1e10, 2, "arrival: interval 2 = 1e+10: must be small enough that offset 3 fits in a time.Duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			p := ProcessFunc(func(r *rand.Rand) float64 {
				calls++
				if calls == 3 {
					return tt.draw
				}
				return 1
			})
			// At 1 request per second a draw of 1e10 is 1e10 s, beyond the
			// 9.2e9 s of the longest time.Duration.
			got, err := Offsets(p, 1, NewRand(1), 10)
			require.Nil(t, got)
			var ie *field.Error
			require.ErrorAs(t, err, &ie)
			require.Equal(t, fmt.Sprintf("interval %d", tt.index), ie.Field)
			require.ErrorIs(t, err, ErrInvalidInterval)
			require.Equal(t, tt.msg, err.Error())
			require.False(t, errors.Is(err, ErrInvalidSpec), "a bad draw is not a bad spec")
		})
	}
}
