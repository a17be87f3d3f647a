package servermetrics

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// highCardinalityBody returns a vLLM V1-shaped body (the curated families,
// engine="0", histograms with buckets, *_created families) followed by n
// series of one family: an uncurated one (a server exposing, say, a
// series per request path) or, when curated, of vllm:num_requests_running
// (a server whose curated gauge has a label per request).
func highCardinalityBody(n int, curated bool) []byte {
	var b bytes.Buffer
	b.WriteString("# HELP python_gc_objects_collected_total Objects collected during gc\n# TYPE python_gc_objects_collected_total counter\n")
	for g := range 3 {
		fmt.Fprintf(&b, "python_gc_objects_collected_total{generation=\"%d\"} 1234.0\n", g)
	}
	const l = `engine="0",model_name="Qwen/Qwen3-8B"`
	for _, g := range []string{"vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"} {
		fmt.Fprintf(&b, "# HELP %s A gauge.\n# TYPE %s gauge\n%s{%s} 0.25\n", g, g, g, l)
	}
	for _, c := range []string{"vllm:prompt_tokens", "vllm:generation_tokens", "vllm:num_preemptions"} {
		fmt.Fprintf(&b, "# HELP %s_total A counter.\n# TYPE %s_total counter\n%s_total{%s} 4096.0\n", c, c, c, l)
		fmt.Fprintf(&b, "# HELP %s_created A counter.\n# TYPE %s_created gauge\n%s_created{%s} 1.764e+09\n", c, c, c, l)
	}
	for _, h := range []string{"vllm:time_to_first_token_seconds", "vllm:e2e_request_latency_seconds"} {
		fmt.Fprintf(&b, "# HELP %s A histogram.\n# TYPE %s histogram\n", h, h)
		for _, le := range []string{"0.001", "0.005", "0.01", "0.02", "0.04", "0.06", "0.08", "0.1", "0.25", "0.5", "0.75", "1.0", "2.5", "5.0", "7.5", "10.0", "+Inf"} {
			fmt.Fprintf(&b, "%s_bucket{%s,le=\"%s\"} 4.0\n", h, l, le)
		}
		fmt.Fprintf(&b, "%s_count{%s} 4.0\n%s_sum{%s} 0.5\n", h, l, h, l)
	}
	fam, typ := "http_request_last_seconds", "gauge"
	if curated {
		fam = "vllm:num_requests_running"
	}
	fmt.Fprintf(&b, "# HELP %s Per-request series.\n# TYPE %s %s\n", fam, fam, typ)
	for i := range n {
		fmt.Fprintf(&b, "%s{engine=\"0\",request_id=\"cmpl-%06d\"} %d.0\n", fam, i, i%97)
	}
	return b.Bytes()
}

// BenchmarkScrape100kSeries: one sample of a /metrics of 100,000 series,
// as the sampler's goroutine takes it (a GET answered in memory with the
// body as it is, the body read, the kept samples recorded), the series all of one uncurated family or all of a curated one.
// The cost a run pays per interval whatever the server exposes.
func BenchmarkScrape100kSeries(b *testing.B) {
	for _, curated := range []bool{false, true} {
		name := "uncurated"
		if curated {
			name = "curated"
		}
		b.Run(name, func(b *testing.B) {
			body := highCardinalityBody(100_000, curated)
			client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
			})}
			s, err := Discover(context.Background(), Config{URL: "http://h/metrics", Client: client, Interval: time.Minute})
			if err != nil || s == nil {
				b.Fatal(err, len(body))
			}
			s.start, s.st = time.Now(), newStore()
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				s.sampleAt(context.Background(), time.Duration(i)*time.Second)
			}
			b.StopTimer()
			if s.failed > 0 {
				b.Fatal(s.last)
			}
			b.ReportMetric(float64(len(s.st.byKey)), "series")
		})
	}
}

// TestScrapeCostBoundedByWhatItKeeps: a sample's allocations do not grow
// with the series a server exposes beside the kept ones, nor with the
// series of a kept family beyond the 64 kept: a page of 100,000 series,
// over a plain httptest server, allocates what a page of 1,000 does. It
// counts allocations, not time: its samples may take the longest timeout
// (the race detector parses 100,000 series slowly on a loaded machine).
func TestScrapeCostBoundedByWhatItKeeps(t *testing.T) {
	skipUnderRace(t, "it counts the allocations of parsing pages of 100,000 series")
	for _, curated := range []bool{false, true} {
		allocs := map[int]float64{}
		for _, n := range []int{1_000, 100_000} {
			body := highCardinalityBody(n, curated)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(body) }))
			// newSampler, not Discover: Discover's GET is bounded by
			// maxRunWait, which the race detector's parse of 100,000
			// series can exceed on a loaded machine.
			cfg, err := Config{URL: srv.URL + "/metrics", Interval: time.Minute, Timeout: 30 * time.Second}.resolved()
			require.NoError(t, err)
			s := newSampler(cfg)
			s.start = time.Now()
			s.sampleAt(t.Context(), 0) // the first sample adds the series
			allocs[n] = testing.AllocsPerRun(5, func() { s.sampleAt(t.Context(), time.Second) })
			require.Zero(t, s.failed, s.last)
			srv.Close()
		}
		t.Logf("curated=%v: allocations per sample: %v", curated, allocs)
		require.LessOrEqual(t, allocs[100_000], allocs[1_000]+20, "curated=%v: %v", curated, allocs)
	}
}
