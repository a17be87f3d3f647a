package anviltest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

func TestParseBenchtime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want benchtime
		err  bool
	}{
		{"1s", benchtime{d: time.Second}, false},
		{"250ms", benchtime{d: 250 * time.Millisecond}, false},
		{"20x", benchtime{n: 20}, false},
		{"1x", benchtime{n: 1}, false},
		{"0x", benchtime{}, true},
		{"-3x", benchtime{}, true},
		{"x", benchtime{}, true},
		{"0s", benchtime{}, true},
		{"fast", benchtime{}, true},
	} {
		got, err := parseBenchtime(tc.in)
		if tc.err {
			require.Error(t, err, tc.in)
			require.Contains(t, err.Error(), tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
		require.Equal(t, tc.in, got.String())
	}
}

func TestCurrentBenchtimeReadsTheFlag(t *testing.T) {
	// In a test binary the testing package registered -test.benchtime; its
	// default is 1s unless the run set it.
	bt, err := currentBenchtime()
	require.NoError(t, err)
	require.True(t, bt.n > 0 || bt.d > 0, "%+v", bt)
}

func TestPlanWorkload(t *testing.T) {
	sec := benchtime{d: time.Second}
	x20 := benchtime{n: 20}
	for _, tc := range []struct {
		name string
		in   capacity.Workload
		bt   benchtime
		want capacity.Workload
	}{
		{"duration benchtime is the campaign length", capacity.Workload{Concurrency: 4}, sec,
			capacity.Workload{Concurrency: 4, Duration: time.Second}},
		{"Nx is the request count", capacity.Workload{Concurrency: 4}, x20,
			capacity.Workload{Concurrency: 4, Requests: 20}},
		{"Requests wins over Nx", capacity.Workload{Requests: 6}, x20,
			capacity.Workload{Requests: 6}},
		{"Requests wins over a duration", capacity.Workload{Requests: 6}, sec,
			capacity.Workload{Requests: 6}},
		{"Burst sizes itself", capacity.Workload{Burst: 8}, sec,
			capacity.Workload{Burst: 8}},
		{"Duration wins over Nx", capacity.Workload{Duration: 3 * time.Second}, x20,
			capacity.Workload{Duration: 3 * time.Second}},
		{"Duration wins over a benchtime duration", capacity.Workload{Duration: 3 * time.Second}, sec,
			capacity.Workload{Duration: 3 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := planWorkload(tc.in, tc.bt)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(capacity.Workload{})); diff != "" {
				t.Errorf("planWorkload (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzParseBenchtime: whatever parses formats back to itself, and a count
// and a duration never both hold.
func FuzzParseBenchtime(f *testing.F) {
	for _, s := range []string{"1s", "20x", "1x", "0x", "1.5h", "x", "-1s", "9999999999999999999x", "1e3x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		bt, err := parseBenchtime(s)
		if err != nil {
			return
		}
		if (bt.n > 0) == (bt.d > 0) {
			t.Fatalf("%q: %+v: want exactly one of count and duration", s, bt)
		}
		again, err := parseBenchtime(bt.String())
		if err != nil || again != bt {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, bt, bt.String(), again, err)
		}
	})
}
