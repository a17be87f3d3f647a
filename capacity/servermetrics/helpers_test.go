package servermetrics

import (
	"io"
	"maps"
	"slices"
	"strings"
)

// metricSample is one kept sample, decoded: what tests compare.
type metricSample struct {
	Name   string // the sample name: the family's, or its _sum or _count
	Family string
	Type   string            // typeGauge or typeCounter
	Labels map[string]string // never nil
	Value  float64
}

// key is a readable identity of s's series: its name and sorted labels.
func (s metricSample) key() string {
	var b strings.Builder
	b.WriteString(s.Name)
	for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
		b.WriteString("\x00" + k + "=" + s.Labels[k])
	}
	return b.String()
}

// view returns s as a scanner passes it to a sink, its labels sorted.
func (s metricSample) view() *sampleView {
	v := &sampleView{name: []byte(s.Name), family: s.Family, typ: s.Type, value: s.Value}
	for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
		v.labels = append(v.labels, labelView{[]byte(k), []byte(s.Labels[k])})
	}
	return v
}

// collector is a sink keeping every sample decoded, the last of a series.
type collector map[string]metricSample

func (c collector) sample(v *sampleView) {
	s := metricSample{Name: string(v.name), Family: v.family, Type: v.typ, Labels: v.labelMap(), Value: v.value}
	c[s.key()] = s
}

// parsed is a body's scrapeResult and its kept samples, sorted by key.
type parsed struct {
	scrapeResult
	Samples []metricSample
}

// parse scans one body keeping the curated families and extra.
func parse(r io.Reader, extra []string) (parsed, error) {
	c := collector{}
	sc, err := scanBody(r, extra, c)
	if err != nil {
		return parsed{}, err
	}
	p := parsed{scrapeResult: sc}
	for _, k := range slices.Sorted(maps.Keys(c)) {
		p.Samples = append(p.Samples, c[k])
	}
	return p, nil
}

// add records samples as one scrape at offset at (ms).
func (st *store) add(at float64, samples []metricSample) {
	st.begin()
	for _, s := range samples {
		st.sample(s.view())
	}
	st.commit(at)
}
