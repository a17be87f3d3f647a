package servermetrics

import (
	"bytes"
	"fmt"
	"io"

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

// scrapeResult is what one body told of the endpoint beside its samples.
type scrapeResult struct {
	// Engine is the engine with the most families of its prefix in the
	// body; "" when no family has an engine's prefix.
	Engine engineName
	// Families is the number of metric families with a sample in the
	// body (*_created ones excluded).
	Families int
	// Kept are the kept families (an engine's curated set and the names
	// asked for) that had a sample, in the body's order.
	Kept []string
}

// key appends to dst the identity of v's series: its name and its labels
// (sorted by name, as the scanner gives them), each part ending in 0x00
// 0x01 and a 0x00 byte within a part written 0x00 0xFF, so that no two
// series share a key and keys sort by name, then labels, as the strings
// themselves would.
func (v *sampleView) key(dst []byte) []byte {
	dst = keyPart(dst, v.name)
	for _, l := range v.labels {
		dst = keyPart(keyPart(dst, l.name), l.value)
	}
	return dst
}

func keyPart(dst, b []byte) []byte {
	for {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			break
		}
		dst = append(append(dst, b[:i]...), 0, 0xFF)
		b = b[i+1:]
	}
	return append(append(dst, b...), 0, 1)
}

// labelMap returns v's labels as a map, never nil.
func (v *sampleView) labelMap() map[string]string {
	m := make(map[string]string, len(v.labels))
	for _, l := range v.labels {
		m[string(l.name)] = string(l.value)
	}
	return m
}

// checkFormat reports whether body is the Prometheus text format as
// github.com/prometheus/common/expfmt, the format's own parser, reads it:
// the conformance verdict (Probe), where the sampler's scanner is laxer.
// The error is the parser's, naming the line.
func checkFormat(body []byte) error {
	p := expfmt.NewTextParser(model.UTF8Validation)
	if _, err := p.TextToMetricFamilies(bytes.NewReader(body)); err != nil {
		return fmt.Errorf("%w: %w", errFormat, err)
	}
	return nil
}

// scanBody reads r with a scanner of its own: a body read once.
func scanBody(r io.Reader, extra []string, sink sampleSink) (scrapeResult, error) {
	return newScanner(newSelection(extra)).scan(r, sink)
}
