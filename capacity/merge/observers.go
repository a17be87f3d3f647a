package merge

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// The members the run's observers write, merged (PROTOCOL.md#merging-shards):
// anvil_go.server_metrics, anvil_go.audit and anvil_go.workload.

// workloadLabel is anvil_go.workload as compact JSON without send_lag_ms
// (each shard's own measurement), for the shards' agreement; "null" when
// absent.
func workloadLabel(r *artifact.Report) string {
	w := r.AnvilGo.Workload
	if w == nil {
		return "null"
	}
	b, err := json.Marshal(commonWorkload(w))
	if err != nil { // a non-finite number: show it as Go does
		return fmt.Sprintf("%+v", *w)
	}
	return string(b)
}

// commonWorkload is w without send_lag_ms, in the current shape (its
// unknown keys dropped): what the shards of one workload share.
func commonWorkload(w *artifact.Workload) *artifact.Workload {
	return &artifact.Workload{Kind: w.Kind, Trace: w.Trace, Sessions: w.Sessions}
}

// mergeWorkload is anvil_go.workload of the merge: the shards' (equal,
// checkOneWorkload) workload; its send_lag_ms is one shard's own, and
// percentiles of several shards' do not merge from their summaries, so it
// is dropped for more than one shard.
func mergeWorkload(in []shardIn) *artifact.Workload {
	w := in[0].r.AnvilGo.Workload
	switch {
	case w == nil:
		return nil
	case len(in) > 1:
		return commonWorkload(w)
	}
	c := *w
	return &c
}

// mergeAudit is anvil_go.audit of the merge: suspect if any shard's is,
// each shard's reasons prefixed "shard <index>: " in shard order (an
// unaudited shard is a reason too, and so is a verdict its reasons do not
// give); the counts added up, and every other measurement the largest of
// the shards' (each process audits itself; the merged quantile of several
// processes lies between the shards' own, so the largest is its bound).
// Nil when no shard has an audit.
func mergeAudit(in []shardIn) *artifact.Audit {
	var audited []*artifact.Audit
	for _, s := range in {
		if a := s.r.AnvilGo.Audit; a != nil {
			audited = append(audited, a)
		}
	}
	if len(audited) == 0 {
		return nil
	}
	m := &artifact.Audit{Reasons: []string{}}
	largest := func(dst **float64, v *float64) {
		if v != nil && (*dst == nil || *v > **dst) {
			*dst = new(*v)
		}
	}
	for _, s := range in {
		a, index := s.r.AnvilGo.Audit, s.shard().Index
		if a == nil {
			m.Reasons = append(m.Reasons, fmt.Sprintf("shard %d: not audited (its artifact has no anvil_go.audit)", index))
			continue
		}
		for _, r := range a.Reasons {
			m.Reasons = append(m.Reasons, fmt.Sprintf("shard %d: %s", index, r))
		}
		own := artifact.Audit{Reasons: a.Reasons}
		if own.SetVerdict(); own.Verdict != a.Verdict {
			m.Reasons = append(m.Reasons, fmt.Sprintf("shard %d: verdict %q, which its %d reasons do not give", index, a.Verdict, len(a.Reasons)))
		}
		m.SchedSamples += a.SchedSamples
		m.WakeSamples += a.WakeSamples
		m.GCPauses += a.GCPauses
		m.PoolWaits += a.PoolWaits
		if a.GCPauseTotalMS != nil {
			m.GCPauseTotalMS = new(deref(m.GCPauseTotalMS) + *a.GCPauseTotalMS)
		}
		largest(&m.SchedLatencyP99MS, a.SchedLatencyP99MS)
		largest(&m.SchedLatencyMaxMS, a.SchedLatencyMaxMS)
		largest(&m.WakeLagP50MS, a.WakeLagP50MS)
		largest(&m.WakeLagP99MS, a.WakeLagP99MS)
		largest(&m.WakeLagMaxMS, a.WakeLagMaxMS)
		largest(&m.HeldWakeLagP90MS, a.HeldWakeLagP90MS)
		largest(&m.HeldWakeLagMaxMS, a.HeldWakeLagMaxMS)
		largest(&m.GCPauseMaxMS, a.GCPauseMaxMS)
		largest(&m.CPUShare, a.CPUShare)
		largest(&m.SendLagP99MS, a.SendLagP99MS)
		largest(&m.SendLagMaxMS, a.SendLagMaxMS)
		largest(&m.PoolWaitMaxMS, a.PoolWaitMaxMS)
		m.GOMAXPROCS = max(m.GOMAXPROCS, a.GOMAXPROCS)
	}
	m.SetVerdict() // suspect when a reason is listed
	return m
}

func deref(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

// mergeServerMetrics keeps each shard's anvil_go.server_metrics under its
// shard (anvil_go.shards.artifacts[i].server_metrics, offsets re-based onto
// the common start) and returns the merged anvil_go.server_metrics: when
// every shard sampled the same endpoint, the member of the shard that
// sampled last (the lowest index on a tie), with its checks computed over
// all shards (unionChecks); else nil.
func mergeServerMetrics(in []shardIn, m *artifact.Report, x *artifact.Extension) *artifact.ServerMetrics {
	sent := x.Run.SentRequests
	common := x.Shards.StartAtUnixNS
	same := true
	var chosen *artifact.ServerMetrics
	chosenLast := 0.0
	for i, s := range in {
		sm := s.r.AnvilGo.ServerMetrics
		if sm == nil {
			same = false
			continue
		}
		shift := float64(s.r.StartedAtUnixNS-common) / 1e6
		last := 0.0
		for k := range sm.Series {
			se := &sm.Series[k]
			for j := range se.OffsetsMS {
				se.OffsetsMS[j] += shift
				last = max(last, se.OffsetsMS[j])
			}
		}
		x.Shards.Artifacts[i].ServerMetrics = sm
		if chosen != nil && sm.Endpoint != chosen.Endpoint {
			same = false
		}
		if chosen == nil || last > chosenLast {
			chosen, chosenLast = sm, last
		}
	}
	if !same || chosen == nil {
		return nil
	}
	c := *chosen
	c.Checks = unionChecks(in, m, sent)
	return &c
}

// unionChecks are the cross-checks of all shards together, with the
// counters' increase over the merged window: every shard's sampler read
// the same counters, each first just before the common start (after its
// own warm-up) and last after its own phase. Per label set, the counter
// stood at (last point - increase) at a shard's first sample and at its
// last point at its last (a counter's point is the largest, so the
// latest, of its samples); over all shards it rose from the largest first
// value (the latest first sample: every shard's warm-up done, no measured
// request sent) to the largest last value (after every shard's phase).
// The generation tokens are judged against every shard's usage tokens
// (Report.CompletionTokens of the merge; sent is its sent requests), the
// TTFT against the merged
// rows' mean time to first output.
func unionChecks(in []shardIn, m *artifact.Report, sent int) *artifact.ServerChecks {
	var counter, hist string
	for _, s := range in {
		if c := s.r.AnvilGo.ServerMetrics.Checks; c != nil {
			if c.GenerationTokens != nil {
				counter = cmp.Or(counter, c.GenerationTokens.Counter)
			}
			if c.TTFT != nil {
				hist = cmp.Or(hist, c.TTFT.Histogram)
			}
		}
	}
	var out artifact.ServerChecks
	firstMS := 0.0
	for _, s := range in {
		firstMS = max(firstMS, float64(s.r.StartedAtUnixNS-in[0].r.AnvilGo.Shard.StartAtUnixNS)/1e6)
	}
	if counter != "" {
		if inc, resets, ok := unionIncrease(in, counter); ok {
			tokens, reported := m.CompletionTokens()
			tc := &artifact.TokenCheck{Counter: counter, ServerIncrease: inc, ClientTokens: tokens}
			tc.Allow(firstMS, m.WallClockMS, max(sent-reported, 0), m.MaxTokens)
			tc.Judge(resets)
			out.GenerationTokens = tc
		}
	}
	ttfo, timed := 0.0, 0
	for i := range m.RequestTimings {
		if row := &m.RequestTimings[i]; row.TokenTimed() { // not an embeddings answer's
			ttfo += row.TimeToFirstOutputMS
			timed++
		}
	}
	if hist != "" && timed > 0 {
		sum, _, okS := unionIncrease(in, hist+"_sum")
		n, _, okN := unionIncrease(in, hist+"_count")
		if okS && okN && n > 0 {
			client, server := ttfo/float64(timed), sum/n*1000
			out.TTFT = &artifact.TTFTCheck{Histogram: hist, ServerRequests: n, ServerMeanMS: server, ClientMeanMS: client,
				NetworkAndClientMS: client - server}
		}
	}
	if out.GenerationTokens == nil && out.TTFT == nil {
		return nil
	}
	return &out
}

// unionIncrease is the rise of the counter series named name over all
// shards (unionChecks), summed over its label sets, and the shards'
// resets; ok is false when no shard has it.
func unionIncrease(in []shardIn, name string) (inc float64, resets int, ok bool) {
	first, last := map[string]float64{}, map[string]float64{}
	for _, s := range in {
		for i := range s.r.AnvilGo.ServerMetrics.Series {
			se := &s.r.AnvilGo.ServerMetrics.Series[i]
			if se.Name != name || se.Increase == nil || len(se.Values) == 0 {
				continue
			}
			ok = true
			if se.Resets != nil {
				resets += *se.Resets
			}
			k := labelKey(se.Labels)
			end := se.Values[len(se.Values)-1]
			start := end - *se.Increase
			if v, seen := first[k]; !seen || start > v {
				first[k] = start
			}
			if v, seen := last[k]; !seen || end > v {
				last[k] = end
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(last)) {
		inc += last[k] - first[k]
	}
	return inc, resets, ok
}

// labelKey is a label set as one string, its names sorted.
func labelKey(labels map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		fmt.Fprintf(&b, "%q=%q,", k, labels[k])
	}
	return b.String()
}
