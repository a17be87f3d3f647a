package itl

import (
	"testing"
	"time"
)

// BenchmarkStreamAdd measures one output event in steady state: the
// Stream's buffer has grown on an earlier request, so Add allocates
// nothing. Each iteration adds 1,000 events and reports ns per chunk.
func BenchmarkStreamAdd(b *testing.B) {
	const chunks = 1000
	var s Stream
	for i := range chunks { // grow the buffer once
		s.Add(time.Duration(i) * time.Millisecond)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Reset()
		at := time.Duration(0)
		for i := range chunks {
			at += time.Duration(4000000 + i%7*1000)
			s.Add(at)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/chunks, "ns/chunk")
}

// BenchmarkStreamSummary measures summarizing a 1,000-gap stream (the sort
// dominates); the events are re-added each iteration so every Summary
// sorts unsorted gaps.
func BenchmarkStreamSummary(b *testing.B) {
	gaps := randomGaps(7, 1000)
	var s Stream
	fill(&s, gaps)
	rule := DefaultStallRule()
	tokens := 2000
	b.ReportAllocs()
	for b.Loop() {
		fill(&s, gaps)
		if _, err := s.Summary(rule, &tokens); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunMerge measures merging one worker's Run into the total: an
// exact run of 16 streams of 1,000 gaps, and a sketched one of 100.
func BenchmarkRunMerge(b *testing.B) {
	for _, bm := range []struct {
		name    string
		streams int
	}{{"exact/16x1000", 16}, {"sketched/100x1000", 100}} {
		b.Run(bm.name, func(b *testing.B) {
			part, err := NewRun(DefaultStallRule())
			if err != nil {
				b.Fatal(err)
			}
			var s Stream
			for i := range bm.streams {
				fill(&s, randomGaps(uint64(i), 1000))
				if _, err := part.Record(&s, nil); err != nil {
					b.Fatal(err)
				}
			}
			total, err := NewRun(DefaultStallRule())
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				total.gaps.reset()
				if err := total.Merge(part); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
