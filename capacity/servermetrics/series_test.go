package servermetrics

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/stretchr/testify/require"
)

// TestSeriesDownsampleKeepsMax: a series of any length stays within
// maxPointsPerSeries, its peak survives at its own offset, each point is
// the max of samples_per_point samples, and a counter's increase and
// resets come from every sample.
func TestSeriesDownsampleKeepsMax(t *testing.T) {
	g := &series{name: "q", typ: typeGauge, maxPoints: maxPointsPerSeries}
	const n = 10 * maxPointsPerSeries
	for i := range n {
		v := float64(i % 7)
		if i == 1234 {
			v = 99 // a one-sample peak
		}
		g.add(float64(i)*1000, v)
	}
	m := g.member()
	require.LessOrEqual(t, len(m.Values), maxPointsPerSeries)
	require.Len(t, m.OffsetsMS, len(m.Values))
	require.Equal(t, 16, m.SamplesPerPoint, "2400 samples: halved 4 times")
	require.Contains(t, m.Values, 99.0)
	i := 0
	for m.Values[i] != 99 {
		i++
	}
	require.Equal(t, 1234000.0, m.OffsetsMS[i], "the peak keeps its offset")
	for j, v := range m.Values {
		// Every whole group of 16 consecutive samples of i%7 holds a 6.
		if j < len(m.Values)-1 {
			require.GreaterOrEqual(t, v, 6.0, j)
		}
	}
	require.Nil(t, m.Increase)

	c := &series{name: "c_total", typ: typeCounter, maxPoints: maxPointsPerSeries}
	for i := range n {
		c.add(float64(i), float64(i%1000)) // resets at each 1000
	}
	cm := c.member()
	require.Equal(t, 2, *cm.Resets)
	require.Equal(t, float64(n-1-2), *cm.Increase, "+1 a sample, a reset from 999 to 0 adds 0")
	require.Equal(t, float64((n-1)%1000), cm.Values[len(cm.Values)-1], "the last sample is the last point")
}

// TestStoreBounds: at most maxSeries series; too many or too long labels
// drop a series (counted once); long values are cut; NaN is skipped.
func TestStoreBounds(t *testing.T) {
	st := newStore()
	var smp []metricSample
	for i := range maxSeries + 5 {
		smp = append(smp, metricSample{Name: "g", Type: typeGauge, Labels: map[string]string{"i": string(rune('A' + i))}, Value: 1})
	}
	many := map[string]string{}
	for i := range maxLabels + 1 {
		many[string(rune('a'+i))] = "v"
	}
	smp = append(smp, metricSample{Name: "h", Type: typeGauge, Labels: many, Value: 1},
		metricSample{Name: "n", Type: typeGauge, Labels: map[string]string{}, Value: math.NaN()})
	st.add(0, smp)
	st.add(1000, smp)
	require.Len(t, st.byKey, maxSeries)
	require.Len(t, st.dropped, 6)
	require.Equal(t, 2, st.skipped)

	long := strings.Repeat("é", maxLabelValueBytes)
	labels := boundLabels(map[string]string{"model_name": long})
	require.LessOrEqual(t, len(labels["model_name"]), maxLabelValueBytes)
	require.True(t, strings.HasSuffix(labels["model_name"], labelCut))
	require.True(t, strings.HasPrefix(long, strings.TrimSuffix(labels["model_name"], labelCut)))
	require.False(t, labelsFit([]labelView{{name: []byte(strings.Repeat("k", maxLabelNameBytes+1)), value: []byte("v")}}))
	require.True(t, labelsFit([]labelView{{name: []byte(strings.Repeat("k", maxLabelNameBytes)), value: []byte("v")}}))
}

// TestMemberSizeBound: the largest member the bounds allow (maxSeries
// series of maxPointsPerSeries points of the longest numbers, maxLabels
// labels of names and values at their bounds made of control characters,
// which escape to 6 bytes each, checks and a last error) is written
// under maxMemberBytes; so is that of a store of maxMaxSeries series,
// each of pointsFor(maxMaxSeries) points.
func TestMemberSizeBound(t *testing.T) {
	labels := map[string]string{}
	for i := range maxLabels {
		name := strings.Repeat(string(rune('a'+i)), maxLabelNameBytes)
		labels[name] = strings.Repeat("\x01", maxLabelValueBytes)
	}
	for _, n := range []int{maxSeries, maxMaxSeries} {
		m := &artifact.ServerMetrics{Endpoint: "http://" + strings.Repeat("h", 200) + "/metrics", Engine: new("llamacpp"),
			IntervalMS: 1000, TimeoutMS: 250, Samples: 1 << 40, Failed: 1 << 40, LastError: new(strings.Repeat("\x01", maxErrorBytes)),
			MaxPointsPerSeries: pointsFor(n), DroppedSeries: 1 << 40, SkippedValues: 1 << 40,
			Checks: &artifact.ServerChecks{
				GenerationTokens: &artifact.TokenCheck{Counter: strings.Repeat("c", 64), Verdict: "mismatch", Reason: new(strings.Repeat("r", 512))},
				TTFT:             &artifact.TTFTCheck{Histogram: strings.Repeat("h", 64)},
			}}
		for i := range n {
			s := artifact.MetricSeries{Name: strings.Repeat("n", 100) + string(rune('A'+i)), Type: typeCounter, Labels: labels,
				SamplesPerPoint: 1 << 40, Increase: new(-1.2345678901234567e-300), Resets: new(1 << 40)}
			for range pointsFor(n) {
				s.OffsetsMS = append(s.OffsetsMS, -1.2345678901234567e+300)
				s.Values = append(s.Values, -1.2345678901234567e-300)
			}
			m.Series = append(m.Series, s)
		}
		r := &artifact.Report{AnvilGo: &artifact.Extension{Version: 1, ServerMetrics: m}}
		var with, without bytes.Buffer
		_, err := r.WriteTo(&with)
		require.NoError(t, err)
		r.AnvilGo.ServerMetrics = nil
		_, err = r.WriteTo(&without)
		require.NoError(t, err)
		size := with.Len() - without.Len()
		t.Logf("largest member of %d series: %d bytes of %d", n, size, maxMemberBytes)
		require.Less(t, size, maxMemberBytes)
		require.Greater(t, size, maxMemberBytes/2, "the bound is not far from the worst case")
	}
}

// TestSeriesIntegral: the trapezoid rule over every sample, downsampled
// or not, and the first and last values.
func TestSeriesIntegral(t *testing.T) {
	g := &series{name: "DCGM_FI_DEV_POWER_USAGE", typ: typeGauge, maxPoints: 4}
	// 100 W for 1 s, a ramp to 300 W over 1 s, 300 W for 2 s: 100 + 200 + 600 J.
	for _, p := range [][2]float64{{0, 100}, {1000, 100}, {2000, 300}, {3000, 300}, {4000, 300}} {
		g.add(p[0], p[1])
	}
	require.InDelta(t, 900_000.0, g.area, 1e-9, "W x ms")
	require.Equal(t, 100.0, g.first)
	require.Equal(t, 300.0, g.last)
	require.Len(t, g.member().Values, 3, "downsampled; the integral is of every sample")
	require.Equal(t, 48, pointsFor(160))
	require.Equal(t, maxPointsPerSeries, pointsFor(maxSeries))
}
