package fakeserver

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scrape GETs the fake's /metrics and parses it with the Prometheus text
// parser, which also checks that the fake writes the format.
func scrape(t *testing.T, srv *Server) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + metricsPath)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/plain; version=0.0.4; charset=utf-8", resp.Header.Get("Content-Type"))
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// value is the value of a gauge or counter family's one sample, checking
// vLLM's labels.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	f := fams[name]
	require.NotNil(t, f, name)
	require.Len(t, f.GetMetric(), 1, name)
	m := f.GetMetric()[0]
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	require.Equal(t, metricsEngineLabel, labels["engine"], name)
	require.NotEmpty(t, labels["model_name"], name)
	if f.GetType() == dto.MetricType_COUNTER {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

// drive runs workers closed-loop clients of n streamed requests each and
// returns the sum of the usage completion tokens they were served.
func drive(t *testing.T, srv *Server, workers, n int) int {
	t.Helper()
	body := `{"stream":true,"stream_options":{"include_usage":true},"max_tokens":64,"messages":[{"role":"user","content":"hello there"}]}`
	var mu sync.Mutex
	total := 0
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range n {
				resp, err := srv.Client().Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
				if !assert.NoError(t, err) {
					return
				}
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					data, ok := strings.CutPrefix(sc.Text(), "data: ")
					if !ok || data == "[DONE]" {
						continue
					}
					var d streamDelta
					assert.NoError(t, json.Unmarshal([]byte(data), &d))
					if d.Usage != nil {
						mu.Lock()
						total += d.Usage.CompletionTokens
						mu.Unlock()
					}
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	return total
}

// TestMetricsSlotsExact: 4 slots at concurrency 8: while every client still
// has requests to send, 4 run and 4 wait; at the end the counters equal
// what was served and what the traces record.
func TestMetricsSlotsExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const slots, workers, perWorker, service = 4, 8, 6, 100 * time.Millisecond
		cfg, err := Slots(slots, service)
		require.NoError(t, err)
		srv := NewInMemory(cfg)
		defer srv.Close()
		idle := scrape(t, srv)
		require.Zero(t, value(t, idle, "vllm:num_requests_running"))
		require.Zero(t, value(t, idle, "vllm:generation_tokens_total"))

		start := time.Now()
		type reading struct {
			at               time.Duration
			running, waiting float64
			kv               float64
		}
		var readings []reading
		stop := make(chan struct{})
		scraped := make(chan struct{})
		go func() {
			defer close(scraped)
			for {
				select {
				case <-stop:
					return
				case <-time.After(37 * time.Millisecond): // never on a service boundary before 3.7 s
				}
				f := scrape(t, srv)
				readings = append(readings, reading{time.Since(start), value(t, f, "vllm:num_requests_running"),
					value(t, f, "vllm:num_requests_waiting"), value(t, f, "vllm:kv_cache_usage_perc")})
			}
		}()
		served := drive(t, srv, workers, perWorker)
		close(stop)
		<-scraped
		synctest.Wait()
		prompt := srv.Traces()[0].PromptTokens // every request's prompt is the same

		// Workers 0-3's last requests end at (2*perWorker-1)*service; until
		// then every freed slot's client sends again at once.
		steady := time.Duration(2*perWorker-1) * service
		n := 0
		for _, r := range readings {
			if r.at < steady {
				n++
				require.Equal(t, reading{r.at, 4, 4, r.kv}, r, "at %v", r.at)
				// 4 sequences hold their prompts and up to a whole answer each.
				capacity := float64(cfg.KVCacheTokens())
				require.GreaterOrEqual(t, r.kv, float64(4*prompt)/capacity, "at %v", r.at)
				require.LessOrEqual(t, r.kv, float64(4*(prompt+slotsAnswerTokens))/capacity, "at %v", r.at)
			}
		}
		require.Equal(t, int(steady/(37*time.Millisecond)), n)

		end := scrape(t, srv)
		require.Equal(t, float64(served), value(t, end, "vllm:generation_tokens_total"))
		require.Equal(t, float64(workers*perWorker*slotsAnswerTokens), float64(served))
		require.Equal(t, float64(workers*perWorker), value(t, end, "vllm:request_success_total"))
		require.Zero(t, value(t, end, "vllm:num_requests_running"))
		require.Zero(t, value(t, end, "vllm:num_requests_waiting"))
		require.Zero(t, value(t, end, "vllm:kv_cache_usage_perc"))
		require.Zero(t, value(t, end, "vllm:num_preemptions_total"))
		require.Equal(t, value(t, end, "vllm:kv_cache_usage_perc"), value(t, end, "vllm:gpu_cache_usage_perc"))
		prompts, ttftSum := 0, 0.0
		for _, tr := range srv.Traces() {
			prompts += tr.PromptTokens
			ttftSum += tr.PrefillDone.Seconds()
		}
		require.Equal(t, float64(prompts), value(t, end, "vllm:prompt_tokens_total"))
		h := end["vllm:time_to_first_token_seconds"].GetMetric()[0].GetHistogram()
		require.Equal(t, uint64(workers*perWorker), h.GetSampleCount())
		require.InDelta(t, ttftSum, h.GetSampleSum(), 1e-9)
		require.Equal(t, uint64(workers*perWorker), end["vllm:e2e_request_latency_seconds"].GetMetric()[0].GetHistogram().GetSampleCount())
		for _, name := range []string{"vllm:generation_tokens_created", "vllm:time_to_first_token_seconds_created"} {
			require.Equal(t, dto.MetricType_GAUGE, end[name].GetType(), name)
		}
	})
}

// TestMetricsPrefixCache: the prefix-cache counters are the lookups the
// traces record: every prompt token queried, the cached ones hit.
func TestMetricsPrefixCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := NewInMemory(Fast())
		defer srv.Close()
		prompt := strings.Repeat("the same long prompt ", 100)
		for range 2 {
			_, _, err := post(t, srv, streamBody(prompt, 16), nil)
			require.NoError(t, err)
		}
		synctest.Wait()
		f := scrape(t, srv)
		trs := srv.Traces()
		require.Len(t, trs, 2)
		require.Positive(t, trs[1].CachedTokens)
		require.Equal(t, float64(trs[0].PromptTokens+trs[1].PromptTokens), value(t, f, "vllm:prefix_cache_queries_total"))
		require.Equal(t, float64(trs[0].CachedTokens+trs[1].CachedTokens), value(t, f, "vllm:prefix_cache_hits_total"))
		require.Equal(t, float64(trs[0].CompletionTokens+trs[1].CompletionTokens), value(t, f, "vllm:generation_tokens_total"))
	})
}
