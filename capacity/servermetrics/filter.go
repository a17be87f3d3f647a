package servermetrics

import "strings"

// seriesFilter is the sink of a DCGM exporter's sampler: it passes to
// its sink the samples of the GPUs named (Config.GPUs as label pairs),
// each with only the labels that name a GPU. It allocates nothing per
// sample.
type seriesFilter struct {
	sink   sampleSink
	labels map[string]bool // nil: every label
	only   map[string]map[string]bool
	view   sampleView
	kept   []labelView
}

// newSeriesFilter returns the filter of labels (nil: every label) and
// only ("name=value" pairs, checked by Config.resolved; nil: every
// sample) in front of sink.
func newSeriesFilter(sink sampleSink, labels, only []string) *seriesFilter {
	f := &seriesFilter{sink: sink}
	if len(labels) > 0 {
		f.labels = map[string]bool{}
		for _, l := range labels {
			f.labels[l] = true
		}
	}
	if len(only) > 0 {
		f.only = map[string]map[string]bool{}
		for _, o := range only {
			name, value, _ := strings.Cut(o, "=")
			if f.only[name] == nil {
				f.only[name] = map[string]bool{}
			}
			f.only[name][value] = true
		}
	}
	return f
}

func (f *seriesFilter) sample(v *sampleView) {
	if f.only != nil && !f.matches(v.labels) {
		return
	}
	if f.labels == nil {
		f.sink.sample(v)
		return
	}
	f.kept = f.kept[:0]
	for _, l := range v.labels {
		if f.labels[string(l.name)] {
			f.kept = append(f.kept, l)
		}
	}
	f.view = *v
	f.view.labels = f.kept
	f.sink.sample(&f.view)
}

// matches reports whether one of labels has a value Only names.
func (f *seriesFilter) matches(labels []labelView) bool {
	for _, l := range labels {
		if values := f.only[string(l.name)]; values != nil && values[string(l.value)] {
			return true
		}
	}
	return false
}
