package reporters

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// TestCorpusEligibilityIsDerived: no reference artifact of the corpus
// records performance_eligible. Each converts with an eligible key derived
// from its counts, and a run with a failure (11 of them; the worst lost 11
// of 12 requests) carries no output-tok/s, although the file records one.
func TestCorpusEligibilityIsDerived(t *testing.T) {
	partial := map[string]bool{}
	for _, path := range corpusFiles(t) {
		r := loadReport(t, path)
		require.False(t, r.Has("performance_eligible"), path)
		var buf bytes.Buffer
		require.NoError(t, writeBenchfmt(&buf, r))
		p := parseBench(t, buf.Bytes())
		require.Empty(t, p.errs)
		require.Len(t, p.results, 1)
		complete := r.Requests > 0 && r.Completed == r.Requests && len(r.Failures) == 0
		cfg, vs := benchConfigMap(p.results[0]), benchValueMap(p.results[0])
		_, throughput := vs[unitOutputThroughput]
		if complete {
			require.Equal(t, "true", cfg[configEligible], path)
			require.Equal(t, r.Metrics.ThroughputTokS != nil, throughput, path)
			continue
		}
		partial[filepath.Base(path)] = true
		require.Equal(t, "false", cfg[configEligible], path)
		require.False(t, throughput, "%s: a run with failures reports no throughput", path)
		require.NotNil(t, r.Metrics.ThroughputTokS, "%s records one", path)
		require.Equal(t, float64(r.Requests-r.Completed), vs[unitFailed], path)
	}
	require.Len(t, partial, 11)
	require.True(t, partial["deepseek-v4-flash-0731-capacity-32k-c1.json"], "1 of 12 completed")
}

func TestEligible(t *testing.T) {
	for _, tc := range []struct {
		name               string
		r                  *artifact.Report
		eligible, recorded bool
	}{
		{"legacy complete", &artifact.Report{Requests: 4, Completed: 4}, true, false},
		{"legacy partial", &artifact.Report{Requests: 16, Completed: 4}, false, false},
		{"legacy failures recorded", &artifact.Report{Requests: 4, Completed: 4, Failures: []artifact.Failure{{}}}, false, false},
		{"nothing ran", &artifact.Report{}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A document read without the key.
			var buf bytes.Buffer
			tc.r.Schema = artifact.Schema
			_, err := tc.r.WriteTo(&buf)
			require.NoError(t, err)
			var doc map[string]any
			require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
			delete(doc, "performance_eligible")
			data, err := json.Marshal(doc)
			require.NoError(t, err)
			r, err := artifact.Read(bytes.NewReader(data))
			require.NoError(t, err)
			require.False(t, r.Has("performance_eligible"))
			eligible, recorded := r.Eligible()
			require.Equal(t, tc.eligible, eligible)
			require.Equal(t, tc.recorded, recorded)
		})
	}
	// A recorded true is checked against the counts.
	r := loadReport(t, seedPath)
	ok, recorded := r.Eligible()
	require.True(t, ok)
	require.True(t, recorded)
	r.Failed, r.Failures = 1, []artifact.Failure{{RequestIndex: 6}}
	r.Requests = 7
	ok, _ = r.Eligible()
	require.False(t, ok, "performance_eligible true beside a failure is not believed")
	require.Nil(t, throughputReported(r))
}
