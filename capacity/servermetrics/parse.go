package servermetrics

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Sample types, as MetricSeries.Type records them.
const (
	// typeGauge: a value that goes up and down (a Prometheus gauge, or an
	// untyped sample).
	typeGauge = "gauge"
	// typeCounter: a value that only rises until the server restarts (a
	// counter, or the _sum and _count of a histogram or summary).
	typeCounter = "counter"
)

// metricSample is one value of a kept series in one scrape.
type metricSample struct {
	// Name is the sample name: the family name, or for a histogram or
	// summary family its name + "_sum" or + "_count".
	Name string
	// Family is the family's name.
	Family string
	Type   string            // typeGauge or typeCounter
	Labels map[string]string // the sample's labels, never nil
	Value  float64
}

// key identifies the series of s: its name and its labels, sorted.
func (s *metricSample) key() string {
	var b strings.Builder
	b.WriteString(s.Name)
	for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
		b.WriteByte(0)
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(s.Labels[k])
	}
	return b.String()
}

// scrapeResult is one parsed /metrics body.
type scrapeResult struct {
	// Engine is the engine with the most families of its prefix in the
	// body; "" when no family has an engine's prefix.
	Engine engineName
	// Families is the number of metric families in the body (*_created
	// ones excluded).
	Families int
	// Samples are the samples of the kept families (an engine's curated
	// set and the names asked for), sorted by name then labels.
	Samples []metricSample
}

// parse reads a body in the Prometheus text format (version 0.0.4, as
// vLLM, SGLang, llama.cpp and TGI serve it) with the format's own parser,
// github.com/prometheus/common/expfmt, and returns the samples of every
// engine's curated families plus the families named in extra. A family
// whose name ends in "_created" (the creation time prometheus_client
// exposes beside each counter and histogram) is never a metric. Labels are
// kept; of a histogram only _sum and _count are kept (its buckets are not),
// of a summary the same. The error is the parser's, naming the line.
func parse(r io.Reader, extra []string) (scrapeResult, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return scrapeResult{}, fmt.Errorf("servermetrics: the body is not the Prometheus text format: %w", err)
	}
	return collect(fams, newSelection(extra)), nil
}

// collect picks the kept samples out of parsed families.
func collect(fams map[string]*dto.MetricFamily, sel selection) scrapeResult {
	var sc scrapeResult
	perEngine := map[engineName]int{}
	byKey := map[string]metricSample{}
	for name, f := range fams {
		if strings.HasSuffix(name, createdSuffix) {
			continue
		}
		sc.Families++
		if e := engineOf(name); e != "" {
			perEngine[e]++
		}
		if !sel.keeps(name) {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, s := range samplesOf(name, f.GetType(), m) {
				byKey[s.key()] = s
			}
		}
	}
	best := 0
	for _, s := range engines { // in order, so a tie goes to the first
		if n := perEngine[s.engine]; n > best {
			sc.Engine, best = s.engine, n
		}
	}
	sc.Samples = slices.Collect(maps.Values(byKey))
	slices.SortFunc(sc.Samples, func(a, b metricSample) int { return cmp.Compare(a.key(), b.key()) })
	return sc
}

// samplesOf returns the kept samples of one metric of family name.
func samplesOf(name string, typ dto.MetricType, m *dto.Metric) []metricSample {
	labels := make(map[string]string, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	one := func(suffix, t string, v float64) metricSample {
		return metricSample{Name: name + suffix, Family: name, Type: t, Labels: labels, Value: v}
	}
	switch typ {
	case dto.MetricType_COUNTER:
		return []metricSample{one("", typeCounter, m.GetCounter().GetValue())}
	case dto.MetricType_GAUGE:
		return []metricSample{one("", typeGauge, m.GetGauge().GetValue())}
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		h := m.GetHistogram()
		return []metricSample{one("_count", typeCounter, float64(h.GetSampleCount())), one("_sum", typeCounter, h.GetSampleSum())}
	case dto.MetricType_SUMMARY:
		s := m.GetSummary()
		return []metricSample{one("_count", typeCounter, float64(s.GetSampleCount())), one("_sum", typeCounter, s.GetSampleSum())}
	default: // untyped
		return []metricSample{one("", typeGauge, m.GetUntyped().GetValue())}
	}
}

// parseBytes is parse on a body in memory.
func parseBytes(body []byte, extra []string) (scrapeResult, error) {
	return parse(bytes.NewReader(body), extra)
}
