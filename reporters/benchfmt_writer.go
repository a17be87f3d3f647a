package reporters

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/anvilbench/anvil/capacity/artifact"
	"golang.org/x/perf/benchfmt"
)

// BenchResult converts r into one benchfmt result named name, the result a
// BenchWriter writes:
//   - Name: name, or when empty the name go test printed for the benchmark
//     that made the run (anvil_go.run.benchmark), else one derived from
//     the workload, BenchmarkCapacity/ctx=<context>/conc=<concurrency>
//     (/rate=<rate> for an open loop; trace=<file> or sessions=<spec> in
//     place of ctx for recorded traffic);
//   - Config: the run's identity, the keys model, engine, gpu, protocol,
//     workload (the fields that must match for two runs to be compared,
//     capacity/PROTOCOL.md#comparing) and eligible (Report.Eligible),
//     every key written, an unknown value empty (the client's self-audit
//     is no key: see BenchWriter);
//   - Iters: the requests sent (Report.SentRequests), at least 1;
//   - Values: the run's metrics in their stable units (ns/op, ttft-p50-ms,
//     ..., listed in package anviltest), every digit kept (a BenchWriter
//     rounds them as go test prints them), a null statistic left out,
//     never NaN; output-tok/s only for an eligible run.
//
// Every value is one Printable line.
func BenchResult(r *artifact.Report, name string) (*benchfmt.Result, error) {
	if r == nil {
		return nil, fmt.Errorf("reporters: nil report")
	}
	if name == "" {
		name = benchName(r)
	}
	if !validBenchName(name) {
		return nil, fmt.Errorf("reporters: benchmark name %q: want Benchmark... without spaces or control characters", name)
	}
	iters := r.SentRequests()
	if iters <= 0 {
		iters = 1
	}
	return &benchfmt.Result{
		Config: benchConfig(r),
		// benchfmt names leave out the "Benchmark" prefix; Writer adds it.
		Name:   benchfmt.Name(strings.TrimPrefix(name, "Benchmark")),
		Iters:  iters,
		Values: benchValues(r),
	}, nil
}

// A BenchWriter writes capacity reports as Go benchmark format, with the
// unit metadata before the first result and every value rounded as go test
// prints it (four significant digits below 1000, none from 999.95 on), so
// a benchstat table that mixes go test output with .bench files or
// converted artifacts of the same runs shows them equal. A run whose client audit is
// suspect is followed by a note, a line benchfmt readers ignore (it is
// neither a result nor configuration):
//
//	# BenchmarkCapacity/ctx=4096/conc=4-2: client audit SUSPECT: GC pause up to 336 ms ...
//
// The verdict is no configuration key: benchstat would put the suspect
// runs of a benchmark in a table apart from its clean ones and compare
// two halves too small to mean anything. The artifact, the benchmark log,
// the summary and the HTML report carry it too.
type BenchWriter struct {
	out       io.Writer // what w writes to: the notes go there
	w         *benchfmt.Writer
	wroteMeta bool
	wroteLate map[string]bool // lateMeta units written
}

// lateMeta is the metadata of the units only some runs carry (an SLO's
// goodput, an open loop's scheduled clock): each comes before the first
// result that carries its unit, so files of other runs stay as they were.
var lateMeta = []struct{ unit, key, value string }{
	{unitGoodput, "better", "higher"},
	{unitSchedTTFTP50, "better", "lower"},
	{unitSchedTTFTP95, "better", "lower"},
	{unitSchedE2EP50, "better", "lower"},
	{unitJoulesPerOutputToken, "better", "lower"},
}

// NewBenchWriter returns a BenchWriter writing to w.
func NewBenchWriter(w io.Writer) *BenchWriter {
	return &BenchWriter{out: w, w: benchfmt.NewWriter(w), wroteLate: map[string]bool{}}
}

// writeMeta writes one unit metadata line.
func (bw *BenchWriter) writeMeta(unit, key, value string) error {
	um := &benchfmt.UnitMetadata{
		UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: unit, Key: key},
		OrigUnit:        unit,
		Value:           value,
	}
	if err := bw.w.Write(um); err != nil {
		return fmt.Errorf("reporters: writing benchfmt: %w", err)
	}
	return nil
}

// Write writes r as one result named name (empty: the name BenchResult
// gives r).
func (bw *BenchWriter) Write(r *artifact.Report, name string) error {
	res, err := BenchResult(r, name)
	if err != nil {
		return err
	}
	if !bw.wroteMeta {
		for _, m := range unitMeta {
			if err := bw.writeMeta(m.unit, m.key, m.value); err != nil {
				return err
			}
		}
		bw.wroteMeta = true
	}
	for _, m := range lateMeta {
		if bw.wroteLate[m.unit] || !slices.ContainsFunc(res.Values, func(v benchfmt.Value) bool { return v.Unit == m.unit }) {
			continue
		}
		if err := bw.writeMeta(m.unit, m.key, m.value); err != nil {
			return err
		}
		bw.wroteLate[m.unit] = true
	}
	for i := range res.Values {
		res.Values[i].Value = goTestRounded(res.Values[i].Value)
	}
	if err := bw.w.Write(res); err != nil {
		return fmt.Errorf("reporters: writing benchfmt: %w", err)
	}
	if suspect(r) {
		// benchfmt.Writer has written the whole result: the note follows it.
		if _, err := fmt.Fprintf(bw.out, "# Benchmark%s: %s\n", res.Name, auditLine(r)); err != nil {
			return fmt.Errorf("reporters: writing benchfmt: %w", err)
		}
	}
	return nil
}

// chunkTiming is the run's anvil_go.chunk_timing, nil when not measured.
func chunkTiming(r *artifact.Report) *artifact.ChunkTiming {
	if r.AnvilGo == nil {
		return nil
	}
	return r.AnvilGo.ChunkTiming
}
