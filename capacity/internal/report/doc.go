// Package report assembles the report of a finished run. The run hands
// Assemble a Run: the report's head (schema, identity and settings, all
// its configuration says, filled by the caller), the plan's contexts and
// measured indexes, how far dispatch got and how the run ended, and one
// Result for each measured request. Assemble then
//
//   - accounts for the requests the report covers (Run.Attempted): the
//     whole plan, or what was dispatched, a request never sent a
//     cancelled failure or, after an early stop, in anvil_go alone
//     (capacity/PROTOCOL.md#early-stop);
//   - writes the timing rows and the failures, the context distribution,
//     the mean prefix-cache hit ratio and, for the requests of a
//     Workload.Source, what a v1 reader learns of them
//     (capacity/PROTOCOL.md#v1-of-a-source);
//   - writes the anvil_go extension: the run summary, one RequestDetail
//     per request (sent or never sent), the connections counted from the
//     requests' phases, chunk timing, prompt sizing and its plan check,
//     the open loop's offered and achieved rates, and the steady state.
//
// The caller then recomputes the metrics (artifact.Report.Recompute).
package report
