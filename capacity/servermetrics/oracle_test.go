package servermetrics

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// expfmtSamples reads body with github.com/prometheus/common/expfmt, the
// format's own parser, and returns what the scanner should keep of it:
// the families with a sample (*_created excluded) and, of the kept ones,
// their samples by key (a histogram's or summary's _sum and _count, with
// the count as written when it is not an integer).
func expfmtSamples(body string, sel selection) (map[string]metricSample, int, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	out, families := map[string]metricSample{}, 0
	for name, f := range fams {
		if strings.HasSuffix(name, createdSuffix) {
			continue
		}
		families++
		if !sel.keeps(name) {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			add := func(suffix, typ string, v float64) {
				s := metricSample{Name: name + suffix, Family: name, Type: typ, Labels: labels, Value: v}
				out[s.key()] = s
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				add("", typeCounter, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add("", typeGauge, m.GetGauge().GetValue())
			case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
				h := m.GetHistogram()
				n := float64(h.GetSampleCount())
				if h.SampleCountFloat != nil {
					n = h.GetSampleCountFloat()
				}
				add("_count", typeCounter, n)
				add("_sum", typeCounter, h.GetSampleSum())
			case dto.MetricType_SUMMARY:
				s := m.GetSummary()
				add("_count", typeCounter, float64(s.GetSampleCount()))
				add("_sum", typeCounter, s.GetSampleSum())
			default:
				add("", typeGauge, m.GetUntyped().GetValue())
			}
		}
	}
	return out, families, nil
}

// agreeWithExpfmt checks the scanner against expfmt on body: whatever
// expfmt accepts, the scanner accepts, with the same families and the
// same kept samples, except the _sum or _count expfmt makes up as 0 for
// a histogram or summary whose line the body lacks, and a summary's count,
// which expfmt truncates to an integer.
func agreeWithExpfmt(t *testing.T, body string) {
	t.Helper()
	const named = "user_named"
	sel := newSelection([]string{named})
	want, families, err := expfmtSamples(body, sel)
	if err != nil {
		return // the scanner may be laxer
	}
	got, err := parse(strings.NewReader(body), []string{named})
	require.NoError(t, err, "expfmt accepts it")
	require.Equal(t, families, got.Families)
	have := map[string]bool{}
	for _, s := range got.Samples {
		k := s.key()
		have[k] = true
		w, ok := want[k]
		require.True(t, ok, "kept %q, which expfmt does not have", k)
		require.Equal(t, w.Type, s.Type, k)
		v := s.Value
		if strings.HasSuffix(s.Name, "_count") && v != w.Value && v >= 0 {
			v = float64(uint64(v)) // a summary's count, which expfmt truncates
		}
		require.True(t, v == w.Value || math.IsNaN(v) && math.IsNaN(w.Value), "%q: %v, expfmt %v", k, s.Value, w.Value)
	}
	for k, w := range want {
		if !have[k] {
			require.True(t, w.Value == 0 && (strings.HasSuffix(w.Name, "_sum") || strings.HasSuffix(w.Name, "_count")),
				"expfmt has %q = %v, the scanner does not", k, w.Value)
		}
	}
}

// seeds are bodies for the scanner's fuzz targets: the real captures and
// the corners of the grammar.
func seeds(tb testing.TB) []string {
	names, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	var out []string
	for _, n := range names {
		b, err := os.ReadFile(n)
		require.NoError(tb, err)
		out = append(out, string(b))
	}
	return append(out,
		string(highCardinalityBody(20, false)), string(highCardinalityBody(20, true)),
		"# TYPE vllm:x_created gauge\nvllm:x_created 1\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\"} NaN\n",
		"# TYPE vllm:e2e_request_latency_seconds histogram\nvllm:e2e_request_latency_seconds_bucket{le=\"+Inf\"} 3\nvllm:e2e_request_latency_seconds_sum 1.5\nvllm:e2e_request_latency_seconds_count 3\n",
		"# TYPE user_named summary\nuser_named{quantile=\"0.5\",a=\"x\"} 1\nuser_named_sum{a=\"x\"} 2.5\nuser_named_count{a=\"x\"} 7\n",
		"{\"user_named\",a=\"1\"} 3 1700000000000\n",
		"user_named{a=\"\\\\\\\"\\n\",b=\"é\",} +Inf\nuser_named{b=\"é\",a=\"\\\\\\\"\\n\"} -3e-2\n",
		"# HELP user_named x\n# TYPE user_named counter\nuser_named\t{ a = \"1\" }\t9\n",
		"vllm:num_requests_waiting 1\nother 2\nvllm:num_requests_waiting 3\n",
	)
}

// TestScanAgreesWithExpfmt: on the captures and the grammar's corners,
// every one of which expfmt accepts, the scanner keeps what expfmt reads.
func TestScanAgreesWithExpfmt(t *testing.T) {
	for _, body := range seeds(t) {
		_, _, err := expfmtSamples(body, selection{})
		require.NoError(t, err, body)
		agreeWithExpfmt(t, body)
	}
}

// FuzzScanAgreesWithExpfmt: on any body expfmt accepts, the scanner keeps
// the same samples.
func FuzzScanAgreesWithExpfmt(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if len(body) > 4<<10 {
			return // expfmt checks a line's label names in quadratic time
		}
		agreeWithExpfmt(t, body)
	})
}
