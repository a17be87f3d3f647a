package reporters

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// RunLog returns the lines a benchmark logs next to the numbers of a
// finished run r, in this order:
//   - its population: requests (planned, sent when some were never sent),
//     succeeded, failed (the requests sent that failed), never sent, wall
//     time, protocol and eligibility;
//   - when a fixed context did not fit the served model, the contexts the
//     requests were planned at instead;
//   - when the server closed kept-alive connections, that the run dialled
//     per request;
//   - where the context window came from (anvil_go.context_window) and,
//     when the server counted the prompts off their plan, the warning
//     (capacity/PROTOCOL.md#exact-token-sizing);
//   - when successful requests reported no usage, how many: their prompts
//     were never counted;
//   - how the run warmed up (capacity/PROTOCOL.md#warm-up), then the
//     steady-state window with its throughput and TTFT beside the whole
//     run's, or why the run has none (capacity/PROTOCOL.md#steady);
//   - the probe requests sent beside the load and their latency
//     (capacity/PROTOCOL.md#probe_requests);
//   - the client's self-audit when it is suspect;
//   - the server-metrics cross-checks;
//   - when requests sent failed, their count per failure class and the
//     first one's message.
//
// Every string read from the artifact is made Printable; each line is one
// line.
func RunLog(r *artifact.Report) []string {
	var out []string
	add := func(line string) {
		if line != "" {
			out = append(out, line)
		}
	}
	model, protocol := Printable(r.Model), Printable(r.MeasurementProtocol)
	if unsent := r.UnsentRequests(); unsent > 0 {
		add(fmt.Sprintf("%s: %s planned, %d sent, %d succeeded, %d failed, %d never sent, wall %.0f ms, protocol %s, eligible %t",
			model, counted(r.Requests, "request"), r.SentRequests(), r.Completed, r.SentFailedRequests(), unsent,
			r.WallClockMS, protocol, r.PerformanceEligible))
	} else {
		add(fmt.Sprintf("%s: %s, %d succeeded, %d failed, wall %.0f ms, protocol %s, eligible %t",
			model, counted(r.Requests, "request"), r.Completed, r.FailedRequests(), r.WallClockMS,
			protocol, r.PerformanceEligible))
	}
	add(clampNote(r))
	add(connectionNote(r))
	add(contextWindowNote(r))
	add(noUsageNote(r))
	add(unsizableNote(r))
	add(warmupLine(r))
	add(steadyWindowLine(r))
	add(probeLine(r))
	if w := promptPlanWarning(r); w != "" {
		add("prompts off plan: " + w)
	}
	if suspect(r) {
		add(auditLine(r))
	}
	for _, line := range crossCheckLines(r) {
		add(line)
	}
	// The failures of the requests sent: the never-sent requests v1
	// records as cancelled rows are counted above, not as failures.
	if sent := r.SentFailures(); len(sent) > 0 {
		add(fmt.Sprintf("failures by class: %s; first: request %d: %s", byClass(r.SentFailureClasses()),
			sent[0].RequestIndex, Printable(sent[0].ErrorMessage)))
	}
	return out
}

// byClass writes counts by failure class as a reader does, in class
// order, each class Printable: "cancelled 2, http_error 2" (Go's map
// syntax, map[cancelled:2 http_error:2], is for programmers); "none" when
// there is none.
func byClass(counts map[string]int) string {
	merged := map[string]int{}
	for c, n := range counts {
		merged[Printable(c)] += n
	}
	if len(merged) == 0 {
		return "none"
	}
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(merged)) {
		parts = append(parts, fmt.Sprintf("%s %d", c, merged[c]))
	}
	return strings.Join(parts, ", ")
}

// counted is n and noun, the noun plural unless n is 1: "1 request",
// "3 requests".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// clampNote says when a fixed context did not fit the served model: the
// plan then cuts every prompt to the budget (max model length minus output
// tokens and margin), so a benchmark named ctx=65536 against a 32k model
// measures shorter prompts. The artifact records the planned contexts; the
// note makes it visible next to the numbers. It is empty when every
// request was planned at the requested context.
func clampNote(r *artifact.Report) string {
	if r.ContextTokens == nil || *r.ContextTokens <= 0 {
		return ""
	}
	want := *r.ContextTokens
	var got []int
	for ctx := range r.ContextDistribution {
		if ctx != want {
			got = append(got, ctx)
		}
	}
	if len(got) == 0 {
		return ""
	}
	slices.Sort(got)
	budget := got[len(got)-1] // a fixed context is clamped to the budget
	why := "max model length unknown, less max_tokens and the margin kept free"
	if n := r.MaxContextTokens; n != nil {
		why = fmt.Sprintf("max model length %d - max_tokens %d - margin %d", *n, r.MaxTokens, *n-r.MaxTokens-budget)
	}
	return fmt.Sprintf("context %d does not fit the served model's prompt budget of %d tokens (%s): requests planned at %v tokens instead",
		want, budget, why, got)
}

// connectionNote says when the server closed connections it had kept
// alive (capacity/PROTOCOL.md#connection-rule): the run then served it
// without reuse, so its latencies include a dial per request. Empty when
// it did not.
func connectionNote(r *artifact.Report) string {
	if r.AnvilGo == nil || r.AnvilGo.Connections == nil || r.AnvilGo.Connections.KeptAliveClosed == 0 {
		return ""
	}
	c := r.AnvilGo.Connections
	note := fmt.Sprintf("the server closed kept-alive connections right after answering on them (%d seen; llama.cpp's llama-server does after every streamed answer)", c.KeptAliveClosed)
	if c.ReuseDisabled {
		note += ": the rest of the run reused no connection, so each request's dial is inside its timings"
	}
	return note
}

// WriteIdentity writes the identity of a target as benchfmt configuration
// lines ("key: value"), the header go test output carries before its
// first benchmark: model, engine and gpu under the keys of the .bench
// files (see BenchResult), then the pairs of extra, in order, then the
// build of this module in the running binary (anvil-version and
// anvil-revision, the keys the .bench files of its runs carry, from
// artifact.RunSummary.RecordBuild). A pair with an empty value is left
// out; each value is written as the .bench files write it, one line
// (whitespace runs as one space) made Printable.
func WriteIdentity(w io.Writer, model, engine, gpu string, extra ...[2]string) error {
	var build artifact.RunSummary
	build.RecordBuild()
	version, revision := build.BuildLabels()
	kv := append([][2]string{{configModel, model}, {configEngine, engine}, {configGPU, gpu}}, extra...)
	kv = append(kv, [2]string{configVersion, version}, [2]string{configRevision, revision})
	var b strings.Builder
	for _, p := range kv {
		if p[1] != "" {
			fmt.Fprintf(&b, "%s: %s\n", p[0], configValue(p[1]))
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("reporters: writing identity: %w", err)
	}
	return nil
}

// configValue is v as a benchfmt configuration value: one line,
// whitespace runs as one space, Printable.
func configValue(v string) string {
	return Printable(strings.Join(strings.Fields(v), " "))
}
