package arrival

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/anvilbench/anvil/capacity/internal/field"
)

// FuzzSchedule checks, for any spec and length, that Schedule either
// returns the *field.Error Validate gives (or one for n) or a schedule of n
// offsets that starts at 0, never decreases and is the same on a second
// call, without panicking.
func FuzzSchedule(f *testing.F) {
	f.Add("poisson", 10.0, 0.0, int64(1), 100)
	f.Add("constant", 3.0, 0.0, int64(0), 20)
	f.Add("gamma", 1000.0, 0.25, int64(-5), 500)
	f.Add("gamma", MaxRate, MinBurstiness, int64(9), 1000)
	f.Add("gamma", MinRate, MaxBurstiness, int64(math.MaxInt64), 50)
	f.Add("gamma", 1.0, math.NaN(), int64(1), 1)
	f.Add("uniform", math.Inf(1), -1.0, int64(2), -3)
	f.Fuzz(func(t *testing.T, process string, rate, burstiness float64, seed int64, n int) {
		n %= 2049 // keep each input fast; the sign is kept, so n < 0 is tried
		s := Spec{Process: Name(process), Rate: rate, Burstiness: burstiness, Seed: seed}
		offsets, err := Schedule(s, n)
		verr := s.Validate()
		if verr != nil || n < 0 {
			var se *field.Error
			if !errors.As(err, &se) || !errors.Is(err, ErrInvalidSpec) {
				t.Fatalf("Schedule(%+v, %d) = %v, want a *field.Error of Kind ErrInvalidSpec", s, n, err)
			}
			if verr != nil && err.Error() != verr.Error() {
				t.Fatalf("Schedule error %q, Validate error %q", err, verr)
			}
			if offsets != nil {
				t.Fatalf("offsets %v with error %v", offsets, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Schedule(%+v, %d): %v for a valid spec", s, n, err)
		}
		if len(offsets) != n {
			t.Fatalf("len = %d, want %d", len(offsets), n)
		}
		checkOffsets(t, offsets)
		again, err := Schedule(s, n)
		if err != nil || !cmp.Equal(offsets, again) {
			t.Fatalf("a second call differs: %v", cmp.Diff(offsets, again))
		}
	})
}
