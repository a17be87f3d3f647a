package reporters

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

func TestWriteSummaryGolden(t *testing.T) {
	for _, tc := range []struct{ in, golden string }{
		{seedPath, "seed.summary"},
		// The oldest generation: 12 keys, 7 metrics, no timings.
		{"../testdata/corpus/docs/findings/2026-07-10-blackwell-local-model-bakeoff-evidence/candidate-gemma4-e4b-llamacpp-throughput-8k.json", "legacy.summary"},
		// A run whose only request failed.
		{"../testdata/corpus/docs/findings/2026-08-02-deepseek-0731-native-kv-offload-evidence/prefix-sequence-256k-70k.json", "failed.summary"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, WriteSummary(&buf, loadReport(t, tc.in)))
			benchGolden(t, tc.golden, buf.Bytes())
		})
	}
}

func TestWriteSummaryShowsFailuresAndChecks(t *testing.T) {
	rate := 0.5
	r := &artifact.Report{
		Requests: 4, Completed: 2, Failed: 2, ControlledOutputPolicy: "strict",
		Failures: []artifact.Failure{
			{FailureClass: artifact.FailureHTTPError}, {FailureClass: artifact.FailureControlledOutput},
		},
		Metrics: artifact.Metrics{
			RequestCanarySamples: 2, RequestCanaryPassed: 1,
			ControlledOutputSamples: 2, ControlledOutputExactAdherence: 1,
			ControlledOutputExactAdherenceRate: &rate,
		},
	}
	var buf bytes.Buffer
	require.NoError(t, WriteSummary(&buf, r))
	out := buf.String()
	require.Contains(t, out, "requests 4  succeeded 2  failed 2  performance eligible false\n")
	require.Contains(t, out, "failures controlled_output_failed=1 http_error=1\n")
	require.Contains(t, out, "request canaries 1/2 passed\n")
	require.Contains(t, out, "controlled output (strict) exact 1/2, unobservable 0, rate 0.500\n")
	require.Error(t, WriteSummary(&buf, nil))
}
