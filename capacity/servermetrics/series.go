package servermetrics

import (
	"math"
	"slices"
	"unicode/utf8"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// The bounds of anvil_go.server_metrics, so that a run of any length and a
// server with any labels writes a member under maxMemberBytes.
const (
	// maxPointsPerSeries bounds the points of one series. A series that
	// reaches it is downsampled: adjacent points are merged pairwise into
	// the larger of the two (a queue's peak survives), and from then on
	// each point stands for twice as many samples (samples_per_point). At
	// the default interval a run keeps every sample for 4 minutes, one
	// point per 2 s up to 8, and so on.
	maxPointsPerSeries = 240
	// maxSeries bounds the series kept; further series are counted in
	// dropped_series.
	maxSeries = 64
	// maxLabels, maxLabelNameBytes and maxLabelValueBytes bound a kept
	// series' labels: a series with more labels or a longer label name is
	// dropped (counted in dropped_series); a longer value is cut to
	// maxLabelValueBytes on a character boundary, with labelCut appended.
	maxLabels          = 8
	maxLabelNameBytes  = 64
	maxLabelValueBytes = 128
	// maxMemberBytes bounds anvil_go.server_metrics as the artifact writes
	// it (indented), series, labels, escaping and cross-checks included:
	// maxSeries series of maxPointsPerSeries points of the longest numbers
	// with maxLabels labels of control characters (6 bytes each once
	// escaped) stay under it (TestMemberSizeBound).
	maxMemberBytes = 2 << 20
	// maxDropped bounds the dropped series remembered (and counted), so a
	// server whose labels change at every sample cannot grow the sampler.
	maxDropped = 4096
	// maxErrorBytes bounds last_error; a longer message is cut.
	maxErrorBytes = 1024
)

// labelCut ends a label value cut to maxLabelValueBytes.
const labelCut = "..."

// offsetResolutionMS rounds offsets to the microsecond: the clock's
// resolution in the artifact, and fewer digits to write.
const offsetResolutionMS = 1e-3

// series accumulates one sample name and label set.
type series struct {
	name, typ string
	labels    map[string]string

	// points kept, and the group of samples not yet a point: up to stride
	// samples, of which the largest (the latest on a tie) is kept.
	offsets, values []float64
	stride          int
	groupN          int
	groupAt, groupV float64

	// counter bookkeeping over every sample, not only the kept points.
	n        int
	last     float64
	increase float64
	resets   int
}

// add records value v sampled at offset at (ms).
func (s *series) add(at, v float64) {
	if s.stride == 0 {
		s.stride = 1
	}
	if s.n > 0 {
		if v >= s.last {
			s.increase += v - s.last
		} else { // the counter restarted from zero
			s.increase += v
			s.resets++
		}
	}
	s.n++
	s.last = v
	if s.groupN == 0 || v >= s.groupV {
		s.groupAt, s.groupV = at, v
	}
	s.groupN++
	if s.groupN == s.stride {
		s.flush()
	}
}

// flush turns the group into a point, downsampling when the series is full.
func (s *series) flush() {
	if s.groupN == 0 {
		return
	}
	s.offsets = append(s.offsets, s.groupAt)
	s.values = append(s.values, s.groupV)
	s.groupN = 0
	if len(s.values) < maxPointsPerSeries {
		return
	}
	// Halve: each pair becomes the larger of the two (the later on a tie).
	n := 0
	for i := 0; i < len(s.values); i += 2 {
		j := i
		if i+1 < len(s.values) && s.values[i+1] >= s.values[i] {
			j = i + 1
		}
		s.offsets[n], s.values[n] = s.offsets[j], s.values[j]
		n++
	}
	s.offsets, s.values = s.offsets[:n], s.values[:n]
	s.stride *= 2
}

// member returns the series as the artifact records it; the group still
// open becomes the last point.
func (s *series) member() artifact.MetricSeries {
	s.flush()
	m := artifact.MetricSeries{Name: s.name, Type: s.typ, Labels: s.labels, SamplesPerPoint: max(s.stride, 1),
		OffsetsMS: slices.Clone(s.offsets), Values: slices.Clone(s.values)}
	if m.OffsetsMS == nil {
		m.OffsetsMS, m.Values = []float64{}, []float64{}
	}
	if s.typ == typeCounter {
		m.Increase, m.Resets = new(s.increase), new(s.resets)
	}
	return m
}

// store is the series of one sampler, bounded by maxSeries.
type store struct {
	byKey   map[string]*series
	dropped map[string]bool // keys of series dropped, counted once
	skipped int             // non-finite values left out
}

func newStore() *store { return &store{byKey: map[string]*series{}, dropped: map[string]bool{}} }

// add records the samples of one scrape taken at offset at (ms).
func (st *store) add(at float64, samples []metricSample) {
	at = math.Round(at/offsetResolutionMS) * offsetResolutionMS
	for i := range samples {
		smp := &samples[i]
		if math.IsNaN(smp.Value) || math.IsInf(smp.Value, 0) {
			st.skipped++
			continue
		}
		k := smp.key()
		s, ok := st.byKey[k]
		if !ok {
			if st.dropped[k] {
				continue
			}
			labels, fits := boundLabels(smp.Labels)
			if !fits || len(st.byKey) >= maxSeries {
				if len(st.dropped) < maxDropped {
					st.dropped[k] = true
				}
				continue
			}
			s = &series{name: smp.Name, typ: smp.Type, labels: labels}
			st.byKey[k] = s
		}
		s.add(at, smp.Value)
	}
}

// members returns the series sorted by name then labels.
func (st *store) members() []artifact.MetricSeries {
	keys := make([]string, 0, len(st.byKey))
	for k := range st.byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]artifact.MetricSeries, 0, len(keys))
	for _, k := range keys {
		out = append(out, st.byKey[k].member())
	}
	return out
}

// increase returns the summed increase of every counter series named name
// (one per label set: vLLM labels each engine core of a data-parallel
// server), and how many there are.
func (st *store) increase(name string) (float64, int) {
	sum, n := 0.0, 0
	for _, s := range st.byKey {
		if s.name == name && s.typ == typeCounter && s.n > 0 {
			sum += s.increase
			n++
		}
	}
	return sum, n
}

// boundLabels returns labels within the bounds (values cut), or false when
// they cannot be kept.
func boundLabels(in map[string]string) (map[string]string, bool) {
	if len(in) > maxLabels {
		return nil, false
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		if len(k) > maxLabelNameBytes {
			return nil, false
		}
		out[k] = cutLabel(v)
	}
	return out, true
}

// cutLabel cuts v to at most maxLabelValueBytes bytes, on a character
// boundary, ending it with labelCut.
func cutLabel(v string) string { return cutText(v, maxLabelValueBytes) }

// cutText cuts v to at most max bytes, on a character boundary, ending it
// with labelCut.
func cutText(v string, max int) string {
	if len(v) <= max {
		return v
	}
	n := max - len(labelCut)
	for n > 0 && !utf8.RuneStart(v[n]) {
		n--
	}
	return v[:n] + labelCut
}
