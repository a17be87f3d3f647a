package fakeserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// benchRequest streams one request over a real loopback socket and returns
// its error, if any.
func benchRequest(client *http.Client, url string, body []byte) error {
	resp, err := client.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// streamAll streams n copies of body at once and waits for all of them.
func streamAll(b *testing.B, client *http.Client, url string, body []byte, n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if err := benchRequest(client, url, body); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
}

func benchBody(b *testing.B, maxTokens int) []byte {
	body, err := json.Marshal(streamBody("summarize the code above in one line", maxTokens))
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// BenchmarkTimingAccuracy measures, on the real clock and a real loopback
// socket, how late the server writes token chunks relative to its own
// schedule (written - scheduled), reported as mean and p99 in µs per chunk.
// Four streams run at once with 2 ms decode steps.
func BenchmarkTimingAccuracy(b *testing.B) {
	cfg := Fast()
	cfg.DecodeStep = 2 * time.Millisecond
	srv := New(cfg)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	defer client.CloseIdleConnections()
	body := benchBody(b, 32)
	const streams = 4
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		streamAll(b, client, srv.URL, body, streams)
	}
	b.StopTimer()
	srv.Close()
	var lags []float64
	for _, tr := range srv.Traces() {
		for _, c := range tr.Chunks {
			if c.Kind == chunkReasoning || c.Kind == chunkContent {
				lags = append(lags, float64(c.Written-c.Scheduled)/float64(time.Microsecond))
			}
		}
	}
	if len(lags) == 0 {
		b.Fatal("no chunks traced")
	}
	slices.Sort(lags)
	sum := 0.0
	for _, l := range lags {
		sum += l
	}
	b.ReportMetric(sum/float64(len(lags)), "lag-mean-µs/chunk")
	b.ReportMetric(lags[len(lags)/2], "lag-p50-µs/chunk")
	b.ReportMetric(lags[(len(lags)*99+99)/100-1], "lag-p99-µs/chunk")
}

// BenchmarkConcurrency runs the reasoning profile (ten times faster) with
// 1 to 16 concurrent streams over loopback and reports, in the profile's own
// time, the aggregate output tok/s (rising with concurrency) and the mean
// per-stream decode tok/s (falling), as a real engine's batch behaves.
func BenchmarkConcurrency(b *testing.B) {
	for _, c := range []int{1, 2, 4, 8, 16} {
		b.Run(fmt.Sprintf("streams=%d", c), func(b *testing.B) {
			cfg := reasoningProfile()
			cfg.TimeScale = 0.1
			cfg.ReasoningTokens = Range{Min: 40, Max: 60}
			srv := New(cfg)
			defer srv.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
			defer client.CloseIdleConnections()
			body := benchBody(b, 96)
			var wall time.Duration
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				streamAll(b, client, srv.URL, body, c)
				wall += time.Since(start)
			}
			srv.Close()
			tokens, decodeSum, n := 0, 0.0, 0
			for _, tr := range srv.Traces() {
				tokens += tr.CompletionTokens
				gen := tr.Last - tr.FirstReasoning
				if gen > 0 {
					decodeSum += float64(tr.CompletionTokens-1) / (gen.Seconds() / cfg.TimeScale)
					n++
				}
			}
			b.ReportMetric(float64(tokens)/(wall.Seconds()/cfg.TimeScale), "agg-tok/s")
			b.ReportMetric(decodeSum/float64(n), "stream-decode-tok/s")
		})
	}
}
