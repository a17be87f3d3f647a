package servermetrics

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse: any body either fails to parse or gives kept samples only
// (curated or named, never *_created), sorted, each series once, and
// recording them in a store keeps every bound.
func FuzzParse(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		require.NoError(f, err)
		f.Add(string(b))
	}
	f.Add("# TYPE vllm:x_created gauge\nvllm:x_created 1\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\"} NaN\n")
	f.Add("# TYPE vllm:e2e_request_latency_seconds histogram\nvllm:e2e_request_latency_seconds_bucket{le=\"+Inf\"} 3\nvllm:e2e_request_latency_seconds_sum 1.5\nvllm:e2e_request_latency_seconds_count 3\n")
	f.Fuzz(func(t *testing.T, body string) {
		sc, err := parse(strings.NewReader(body), []string{"user_named"})
		if err != nil {
			return
		}
		sel := newSelection([]string{"user_named"})
		prev := ""
		for i, s := range sc.Samples {
			require.True(t, sel.keeps(s.Family), s.Family)
			require.False(t, strings.HasSuffix(s.Family, createdSuffix))
			require.True(t, s.Name == s.Family || s.Name == s.Family+"_sum" || s.Name == s.Family+"_count", s.Name)
			require.Contains(t, []string{typeGauge, typeCounter}, s.Type)
			require.NotNil(t, s.Labels)
			if i > 0 {
				require.Less(t, prev, s.key(), "sorted, each series once")
			}
			prev = s.key()
		}
		st := newStore()
		for i := range 3 {
			st.add(float64(i)*1000, sc.Samples)
		}
		require.LessOrEqual(t, len(st.byKey), maxSeries)
		for _, m := range st.members() {
			require.LessOrEqual(t, len(m.Labels), maxLabels)
			for k, v := range m.Labels {
				require.LessOrEqual(t, len(k), maxLabelNameBytes)
				require.LessOrEqual(t, len(v), maxLabelValueBytes)
			}
			for _, v := range m.Values {
				require.False(t, math.IsNaN(v) || math.IsInf(v, 0))
			}
		}
	})
}
