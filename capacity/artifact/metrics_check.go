package artifact

import (
	"errors"
	"fmt"
)

// errMetricsContradictRows is wrapped by CheckMetrics' error: a stored
// metric is not what the artifact's own rows give.
var errMetricsContradictRows = errors.New("the stored metrics contradict the request rows")

// CheckMetrics reports whether the stored metrics are those the report's
// own rows give: it recomputes a copy (Recompute) and compares every key
// of metrics, written as JSON (the shortest literal of a float is unique,
// so equal literals are equal bits). The error names the first metric that
// differs, in key order, and both values. An artifact whose metrics cannot
// be derived (no request_timings or wall_clock_ms: older than capacity-v3)
// has nothing to check; rows that break a row invariant are the error
// Recompute gives. One documented difference is allowed: generations that
// predate throughput_performance_eligible wrote throughput_tok_s for runs
// with failures, which the protocol now writes as null.
//
// The merge (package capacity/merge) checks every shard so, and the
// reports of anvilreport check what they read, so that no summary prints
// numbers its rows contradict.
func (r *Report) CheckMetrics() error {
	if !r.shape.has("request_timings") || !r.shape.has("wall_clock_ms") {
		return nil
	}
	c := *r
	if err := c.Recompute(); err != nil {
		return fmt.Errorf("%w: %w", errMetricsContradictRows, err)
	}
	stored, derived := metricMembers(&r.Metrics), metricMembers(&c.Metrics)
	legacyThroughput := len(r.Failures) > 0 && !r.Metrics.shape.has("throughput_performance_eligible")
	for _, f := range metricsTable.fields {
		s, d := stored[f.key], derived[f.key]
		if s == d || (legacyThroughput && f.key == "throughput_tok_s") {
			continue
		}
		if s == "" {
			s = "absent"
		}
		return fmt.Errorf("%w: metrics.%s is %s, the rows give %s", errMetricsContradictRows, f.key, s, d)
	}
	return nil
}

// metricMembers is each key of m as written, its value as its JSON text.
func metricMembers(m *Metrics) map[string]string {
	e := &artEncoder{}
	metricsTable.encode(e, m)
	out := make(map[string]string)
	for _, mb := range splitObject(e.buf) {
		out[mb.key] = string(mb.val)
	}
	return out
}
