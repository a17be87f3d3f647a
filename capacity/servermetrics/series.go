package servermetrics

import (
	"cmp"
	"hash/maphash"
	"maps"
	"math"
	"slices"
	"strings"
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
	// maxSeries bounds the series kept (Config.MaxSeries, 0: this);
	// further series are counted in dropped_series. maxMaxSeries is the
	// largest bound a Config may set (a GPU endpoint's: 10 families of 16
	// GPUs); a store of more than maxSeries series keeps fewer points per
	// series (pointsFor), so that every member stays under maxMemberBytes.
	maxSeries    = 64
	maxMaxSeries = 160
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

// pointsFor is the bound on one series' points of a store of at most
// series series: maxPointsPerSeries up to maxSeries series, beyond that
// half of maxSeries x maxPointsPerSeries shared out (the other half is
// for the further series' labels), an even number since a full series
// is halved: 48 points each for 160 series.
func pointsFor(series int) int {
	if series <= maxSeries {
		return maxPointsPerSeries
	}
	return maxSeries * maxPointsPerSeries / 2 / series &^ 1
}

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

	// order and seq place it in the member (store.members); gen is the
	// scrape whose value pending holds (store.sample).
	order   string
	seq     int
	gen     uint64
	pending float64

	// maxPoints bounds the points kept (pointsFor the store's bound).
	maxPoints int

	// bookkeeping over every sample, not only the kept points: a
	// counter's rise and resets; the first sample, the last and its
	// offset; the trapezoid-rule integral of the values over the offsets
	// (value x ms), a gauge's energy when it is a power.
	n           int
	first, last float64
	lastAt      float64
	increase    float64
	resets      int
	area        float64
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
		s.area += (at - s.lastAt) * (v + s.last) / 2
	} else {
		s.first = v
	}
	s.n++
	s.last, s.lastAt = v, at
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
	if len(s.values) < s.maxPoints {
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

// store is the series of one sampler, bounded by maxSeries. It is the
// sink of each scrape's samples, taken as one transaction: begin, a
// sample call per kept sample in the body's order, then commit at the
// scrape's offset or, when the body failed half way, rollback, which
// leaves the store as it was.
//
// A series is known by a 64-bit hash of its identity (its name and its
// labels sorted by name, values whole: sampleView.key), computed once per
// sample into a buffer the store reuses; a known series costs that and a
// map lookup, and only a new one allocates. Neither map holds a server's
// text, so a series of any length costs the same few bytes. A new
// series' name and labels pass scrub (the run's redactor) whole, before
// a long value is cut.
type store struct {
	scrub   func(string) string // nil: none
	max     int                 // the series kept at most: maxSeries unless set (setMax)
	seed    maphash.Seed
	byKey   map[uint64]*series
	dropped map[uint64]struct{} // series dropped, counted once
	skipped int                 // non-finite values left out
	added   int                 // series ever kept: their order of arrival

	// The scrape in progress.
	gen          uint64    // its number; a series' gen says it has a value in it
	touched      []*series // the series with a value in it
	fresh        []uint64  // the series it added
	freshDropped []uint64  // the dropped series it added
	skippedNow   int
	key          []byte
}

func newStore() *store {
	return &store{max: maxSeries, seed: maphash.MakeSeed(), byKey: map[uint64]*series{}, dropped: map[uint64]struct{}{}}
}

// setMax bounds the store to n series, and each to pointsFor(n) points.
// Call it before the first sample.
func (st *store) setMax(n int) { st.max = n }

// maxPoints is the bound on one series' points.
func (st *store) maxPoints() int { return pointsFor(st.max) }

// begin starts a scrape.
func (st *store) begin() {
	st.gen++
	st.touched, st.fresh, st.freshDropped, st.skippedNow = st.touched[:0], st.fresh[:0], st.freshDropped[:0], 0
}

// sample records one kept sample of the scrape: a series' value (the
// last, when a body repeats a series), a new series while fewer than
// maxSeries are kept and its labels fit (the first in the body's order),
// else a dropped one.
func (st *store) sample(v *sampleView) {
	if math.IsNaN(v.value) || math.IsInf(v.value, 0) {
		st.skippedNow++
		return
	}
	st.key = v.key(st.key[:0])
	k := maphash.Bytes(st.seed, st.key)
	s, ok := st.byKey[k]
	if !ok {
		if _, ok := st.dropped[k]; ok {
			return
		}
		if !labelsFit(v.labels) || len(st.byKey) >= st.max {
			if len(st.dropped) < maxDropped {
				st.dropped[k] = struct{}{}
				st.freshDropped = append(st.freshDropped, k)
			}
			return
		}
		labels := boundLabels(st.scrubbed(v.labelMap()))
		name := string(v.name)
		if st.scrub != nil {
			name = st.scrub(name)
		}
		s = &series{name: name, typ: v.typ, labels: labels, order: sortKey([]byte(name), labels), seq: st.added, maxPoints: st.maxPoints()}
		st.added++
		st.byKey[k] = s
		st.fresh = append(st.fresh, k)
	}
	if s.gen != st.gen {
		s.gen = st.gen
		st.touched = append(st.touched, s)
	}
	s.pending = v.value
}

// commit records the scrape's values at offset at (ms).
func (st *store) commit(at float64) {
	at = math.Round(at/offsetResolutionMS) * offsetResolutionMS
	for _, s := range st.touched {
		s.add(at, s.pending)
	}
	st.skipped += st.skippedNow
	st.begin()
}

// rollback forgets the scrape: the series and dropped series it added,
// its values.
func (st *store) rollback() {
	for _, k := range st.fresh {
		delete(st.byKey, k)
	}
	for _, k := range st.freshDropped {
		delete(st.dropped, k)
	}
	st.begin()
}

// scrubbed returns labels with every name and value passed through
// st.scrub.
func (st *store) scrubbed(labels map[string]string) map[string]string {
	if st.scrub == nil {
		return labels
	}
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		out[st.scrub(k)] = st.scrub(v)
	}
	return out
}

// sortKey is the order of a series in the member: by name, then by its
// labels (as kept, values cut) sorted by name, in the encoding of
// sampleView.key.
func sortKey(name []byte, labels map[string]string) string {
	b := keyPart(nil, name)
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		b = keyPart(keyPart(b, []byte(k)), []byte(labels[k]))
	}
	return string(b)
}

// members returns the series sorted by name then labels (two whose kept
// labels are the same, their values cut, in their order of arrival).
func (st *store) members() []artifact.MetricSeries {
	all := slices.Collect(maps.Values(st.byKey))
	slices.SortFunc(all, func(a, b *series) int { return cmp.Or(strings.Compare(a.order, b.order), cmp.Compare(a.seq, b.seq)) })
	out := make([]artifact.MetricSeries, 0, len(all))
	for _, s := range all {
		out = append(out, s.member())
	}
	return out
}

// labelsFit reports whether a series with these labels can be kept: at
// most maxLabels, no name over maxLabelNameBytes.
func labelsFit(labels []labelView) bool {
	if len(labels) > maxLabels {
		return false
	}
	for _, l := range labels {
		if len(l.name) > maxLabelNameBytes {
			return false
		}
	}
	return true
}

// boundLabels cuts the values of labels that fit (labelsFit) to
// maxLabelValueBytes, in place.
func boundLabels(labels map[string]string) map[string]string {
	for k, v := range labels {
		labels[k] = cutLabel(v)
	}
	return labels
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
