package fakeserver

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The fake's GET /metrics is vLLM V1's Prometheus text (version 0.0.4)
// under vLLM's names, every family labelled engine="0" and model_name,
// each counter and histogram followed by the *_created gauge family
// prometheus_client writes beside it. Every value is the engine's own
// bookkeeping, so a client's reading of it can be checked exactly:
//
//	vllm:num_requests_running       sequences admitted to the batch (or holding a slot)
//	vllm:num_requests_waiting       sequences submitted and not yet admitted
//	vllm:kv_cache_usage_perc        KV-cache tokens in use / KVCacheTokens(), where a running
//	vllm:gpu_cache_usage_perc       sequence holds its whole prompt from admission (as vLLM
//	                                allocates a prompt's blocks when it schedules it) plus
//	                                the tokens it produced
//	vllm:num_preemptions_total      0: the fake never preempts
//	vllm:prompt_tokens_total        prompt tokens of sequences whose prefill finished
//	vllm:generation_tokens_total    tokens produced (every output token, reasoning included)
//	vllm:prefix_cache_queries_total prompt tokens looked up in the prefix cache at admission
//	vllm:prefix_cache_hits_total    of which found
//	vllm:request_success_total      sequences that produced their whole answer
//	vllm:time_to_first_token_seconds  arrival to the engine's first token, per sequence
//	vllm:e2e_request_latency_seconds  arrival to the engine's last token, per finished sequence
//
// Times are those the engine scheduled (Trace.PrefillDone for the first
// token), on the server's clock, TimeScale applied.

// metricsPath is where the fake serves its Prometheus metrics.
const metricsPath = "/metrics"

// metricsEngineLabel is the engine label of every family, as vLLM V1
// labels the metrics of its engine core 0.
const metricsEngineLabel = "0"

// ttftBuckets and e2eBuckets are vLLM V1's bucket bounds, in seconds.
var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	e2eBuckets  = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
)

// KVCacheTokens is the capacity the fake's KV-cache usage is a share of:
// MaxSeqs sequences of MaxModelLen tokens each.
func (c *Config) KVCacheTokens() int { return c.MaxSeqs * c.MaxModelLen }

// histogram is a Prometheus histogram: counts per bucket (not cumulative;
// the last is +Inf), the sum and the count of observations.
type histogram struct {
	bounds []float64
	counts []uint64
	sum    float64
	n      uint64
}

func newHistogram(bounds []float64) histogram {
	return histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i]++
	h.sum += v
	h.n++
}

func (h *histogram) clone() histogram {
	c := *h
	c.counts = append([]uint64(nil), h.counts...)
	return c
}

// engineStats is the engine's bookkeeping behind /metrics, written by the
// engine goroutine and read by the handler.
type engineStats struct {
	mu sync.Mutex
	statsSnapshot
}

// statsSnapshot is the bookkeeping's values.
type statsSnapshot struct {
	created          time.Time
	running, waiting int
	kvTokens         int
	prompt, gen      int64
	queries, hits    int64
	successes        int64
	ttft, e2e        histogram
	spec             specCounts
}

// specCounts are the speculative-decoding counters (Config.SpecDraftTokens).
type specCounts struct {
	drafts, draftTokens, accepted int64
	perPos                        []int64 // accepted tokens by draft position
}

// speculated counts a decode step that drew k tokens: one draft of
// SpecDraftTokens tokens, of which the k-1 before the target's own are
// accepted, at positions 0..k-2.
func (e *engine) speculated(k int) {
	d := e.cfg.SpecDraftTokens
	if d <= 0 {
		return
	}
	acc := min(max(k-1, 0), d)
	e.stats.mu.Lock()
	sc := &e.stats.spec
	if sc.perPos == nil {
		sc.perPos = make([]int64, d)
	}
	sc.drafts++
	sc.draftTokens += int64(d)
	sc.accepted += int64(acc)
	for j := range acc {
		sc.perPos[j]++
	}
	e.stats.mu.Unlock()
}

func newEngineStats() *engineStats {
	return &engineStats{statsSnapshot: statsSnapshot{created: time.Now(), ttft: newHistogram(ttftBuckets), e2e: newHistogram(e2eBuckets)}}
}

// kvHeld is the KV-cache tokens running sequence s holds: its prompt and
// its output.
func kvHeld(s *seq) int { return s.prompt + s.emitted }

// publish records the gauges: running sequences, waiting ones, KV tokens.
func (e *engine) publish(running, waiting, kv int) {
	e.stats.mu.Lock()
	e.stats.running, e.stats.waiting, e.stats.kvTokens = running, waiting, kv
	e.stats.mu.Unlock()
}

// admitted counts the prefix-cache lookup of a sequence being admitted.
func (e *engine) admitted(prompt, cached int) {
	if e.cache.capacity == 0 {
		return
	}
	e.stats.mu.Lock()
	e.stats.queries += int64(prompt)
	e.stats.hits += int64(cached)
	e.stats.mu.Unlock()
}

// output emits n tokens of s at t and counts them: the first token ends
// the prefill (prompt tokens, TTFT), the last one the request (E2E, and s
// no longer runs nor holds KV). The counts change before the handler is
// told, so a client that read its whole answer and then asks /metrics
// finds its tokens counted and its request gone.
func (e *engine) output(s *seq, t time.Time, n int) {
	first := s.emitted == 0
	done := !s.plan.endless && s.emitted+n >= len(s.plan.tokens)
	e.stats.mu.Lock()
	e.stats.gen += int64(n)
	e.stats.kvTokens += n
	if first {
		e.stats.prompt += int64(s.prompt)
		e.stats.ttft.observe(t.Sub(s.arrived).Seconds())
	}
	if done {
		e.stats.successes++
		e.stats.e2e.observe(t.Sub(s.arrived).Seconds())
		e.stats.running--
		e.stats.kvTokens -= s.prompt + s.emitted + n
	}
	e.stats.mu.Unlock()
	s.emit(t, n)
}

// serveMetrics answers GET /metrics.
func (s *Server) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	e := s.engine
	e.mu.Lock()
	incoming := len(e.incoming)
	e.mu.Unlock()
	st := e.stats
	st.mu.Lock()
	v := statsSnapshot{created: st.created, running: st.running, waiting: st.waiting, kvTokens: st.kvTokens,
		prompt: st.prompt, gen: st.gen, queries: st.queries, hits: st.hits, successes: st.successes,
		ttft: st.ttft.clone(), e2e: st.e2e.clone(),
		spec: specCounts{drafts: st.spec.drafts, draftTokens: st.spec.draftTokens, accepted: st.spec.accepted, perPos: append([]int64(nil), st.spec.perPos...)}}
	st.mu.Unlock()
	v.waiting += incoming // submitted, not yet seen by the engine

	kv := 0.0
	if c := s.cfg.KVCacheTokens(); c > 0 {
		kv = float64(v.kvTokens) / float64(c)
	}
	created := float64(v.created.UnixNano()) / 1e9
	var b strings.Builder
	m := metricsWriter{b: &b, labels: fmt.Sprintf(`engine="%s",model_name="%s"`, metricsEngineLabel, escapeLabel(s.cfg.Model))}
	m.family("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", float64(v.running))
	m.family("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", float64(v.waiting))
	m.family("vllm:gpu_cache_usage_perc", "gauge", "GPU KV-cache usage. 1 means 100 percent usage.DEPRECATED: Use vllm:kv_cache_usage_perc instead.", kv)
	m.family("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", kv)
	m.counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.", 0, created)
	m.counter("vllm:prompt_tokens", "Number of prefill tokens processed.", float64(v.prompt), created)
	m.counter("vllm:generation_tokens", "Number of generation tokens processed.", float64(v.gen), created)
	m.counter("vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.", float64(v.queries), created)
	m.counter("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.", float64(v.hits), created)
	m.counter("vllm:request_success", "Count of successfully processed requests.", float64(v.successes), created)
	m.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", &v.ttft, created)
	m.histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", &v.e2e, created)
	if d := s.cfg.SpecDraftTokens; d > 0 {
		m.counter("vllm:spec_decode_num_drafts", "Number of spec decoding drafts.", float64(v.spec.drafts), created)
		m.counter("vllm:spec_decode_num_draft_tokens", "Number of draft tokens.", float64(v.spec.draftTokens), created)
		m.counter("vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.", float64(v.spec.accepted), created)
		m.head("vllm:spec_decode_num_accepted_tokens_per_pos_total", "counter", "Accepted tokens per draft position.")
		for j := range d {
			n := int64(0)
			if j < len(v.spec.perPos) {
				n = v.spec.perPos[j]
			}
			m.sample("vllm:spec_decode_num_accepted_tokens_per_pos_total", fmt.Sprintf(`,position="%d"`, j), float64(n))
		}
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = io.WriteString(w, b.String())
}

// metricsWriter writes families in the text format, as prometheus_client
// does.
type metricsWriter struct {
	b      *strings.Builder
	labels string
}

func (m metricsWriter) head(name, typ, help string) {
	fmt.Fprintf(m.b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

func (m metricsWriter) sample(name, extra string, v float64) {
	fmt.Fprintf(m.b, "%s{%s%s} %s\n", name, m.labels, extra, promFloat(v))
}

func (m metricsWriter) family(name, typ, help string, v float64) {
	m.head(name, typ, help)
	m.sample(name, "", v)
}

// counter writes name_total and its name_created family.
func (m metricsWriter) counter(name, help string, v, created float64) {
	m.family(name+"_total", "counter", help, v)
	m.family(name+"_created", "gauge", help, created)
}

func (m metricsWriter) histogram(name, help string, h *histogram, created float64) {
	m.head(name, "histogram", help)
	var cum uint64
	for i, c := range h.counts {
		cum += c
		le := "+Inf"
		if i < len(h.bounds) {
			le = promFloat(h.bounds[i])
		}
		m.sample(name+"_bucket", `,le="`+le+`"`, float64(cum))
	}
	m.sample(name+"_count", "", float64(h.n))
	m.sample(name+"_sum", "", h.sum)
	m.family(name+"_created", "gauge", help, created)
}

// promFloat formats v as Python's repr does ("4.0", "0.25", "1.7e+09").
func promFloat(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEIN") {
		s += ".0"
	}
	return s
}

// escapeLabel escapes a label value for the text format.
func escapeLabel(v string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}
