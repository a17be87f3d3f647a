// Package itl measures inter-token latency (ITL) and detects stalls in
// streamed completions, per request and over a run, in memory that stays
// bounded whatever the number of chunks.
//
// # Gaps
//
// The client stamps every output event of a stream on arrival: every SSE
// chunk that carries reasoning or content, counted alike (the artifact's
// "output_chunks"). A gap is the time between two consecutive output
// events. The first output event ends the time to first output (TTFO),
// which is measured elsewhere and is not a gap, so a stream of n output
// events has n-1 gaps and a stream of one event has none (its "itl_ms" is
// null). Role-only, usage-only and finish chunks are not output events; the
// client does not pass them to [Stream.Add].
//
// # Per-token gaps
//
// A chunk may carry several tokens (speculative decoding accepts several
// draft tokens in one step; a server may batch tokens into one chunk), and
// one gap per chunk then overstates the latency of each token by as many
// times (sglang PR #12064 measured 8.72 ms per chunk against about 3.4 ms
// per token). When the server reports usage on every chunk (vLLM's
// stream_options.continuous_usage_stats), the client knows each chunk's
// tokens, the increase of completion_tokens, and adds the event with
// [Stream.AddTokens]: a chunk of k tokens after a gap g adds k gaps of g/k,
// and a chunk of no new token adds none. Such a stream's gaps are per
// token ([Summary.PerToken]); a run's are when every recorded stream's are
// ([ChunkTiming.PerToken]).
//
// # Percentiles
//
// Percentiles follow the project's convention, the nearest-rank method:
// percentile p of n gaps is the gap at 1-based rank ceil(p*n/100), at least
// 1, of the ascending sort, never interpolated. p99.9 uses rank
// ceil(999*n/1000). All ranks are computed in integer arithmetic. Times are
// reported in milliseconds as float64(d)/1e6 of the time.Duration d.
//
// # Stalls
//
// A gap is a stall when it is longer than the threshold applied to its own
// stream. With [StallRule.Override] zero, that threshold is
//
//	max(Relative * median gap of the stream, Floor)
//
// and with Override > 0 (the user's explicit stall threshold) it is
// Override, which then replaces the relative rule entirely: a user who says
// "a stall is a gap over 500 ms" gets exactly that, neither fewer stalls
// (a 300 ms gap in a 4 ms stream is not one) nor more.
//
// The rule is relative because what counts as a pause depends on the
// model's own pace: 40 ms between tokens is ordinary for a large model on a
// loaded server and a hiccup for a small one that streams every 2 ms. The
// defaults, [DefaultStallRelative] = 10 and [DefaultStallFloor] = 50 ms, are
// chosen so that
//
//   - ordinary jitter never counts: decode steps vary by tens of percent and
//     batching or network coalescing at most double or triple a gap, far
//     below 10 times the median, while a gap of 20 times the median (the
//     model stopped for 19 decode steps: a preemption, a swap, a long
//     prefill of another request) is clearly over it;
//   - a stream whose median is tiny (1 ms, or events coalesced to 0 ms) does
//     not turn every 15 ms hiccup into a stall: below about 50 ms no reader
//     perceives text arriving as interrupted, so the Floor is the least
//     threshold ever applied.
//
// The threshold actually applied is reported per stream
// ([Summary.StallThresholdMS]); for a stream without gaps it is Floor, or
// Override when set.
//
// # Memory and the sketch
//
// A [Stream] and a [Run] keep their gaps exactly, as time.Duration values,
// while they hold at most [ExactGaps] of them (512 KiB). Beyond that they
// move every gap into a sketch of relative accuracy [RelativeAccuracy] =
// 0.01 and continue there: the logarithmic histogram of a DDSketch, with
// exact integer counts, whose bucket i holds the gaps of v ms with
// gamma^i <= v < gamma^(i+1), gamma = (1+0.01)/(1-0.01) (buckets.go
// explains the mapping). Every quantile read
// from it is within 1% of the exact nearest-rank value of the same rank:
// the rank is found exactly (bucket counts are exact integers) and the
// bucket's representative value is within 1% of every value in the bucket.
// Its size depends on the range of the values, not their number: durations
// from 1 ns to 290 years span at most about 2,200 buckets (18 KiB), and
// the gaps of one benchmark a few hundred. The maximum is always exact, and
// a sketched quantile never exceeds it. Results say whether they are exact
// and with what relative error.
//
// Beyond ExactGaps a stream's stall count is read from its sketch, as the
// gaps in buckets whose representative value exceeds the threshold: a gap
// within 1% of the threshold may be counted on the wrong side.
//
// # Runs
//
// A [Run] merges the gaps of every successful stream given to
// [Run.Record], counts their stalls and averages their tokens per chunk
// ([TokensPerChunk]: usage completion tokens / output chunks, over the
// requests whose usage was reported). Concurrent workers share one Run
// under a lock (the client records a stream once it has ended), or each
// keep their own and combine them with [Run.Merge]; the merged result is
// the one a single Run given every stream would report. [Run.Reserve]
// makes room for the exact gaps a run expects, so that recording them
// allocates nothing. [Run.Result] gives the
// artifact's "chunk_timing" member. [Run.Distribution] gives the
// distribution itself as the artifact stores it beside a result
// (artifact.GapDistribution), and [Run.AddDistribution] adds a stored one
// to a run: the shards of one workload, measured by different processes,
// merge that way into exactly what one process would report.
//
// The types map one to one onto the members of the anvil_go artifact
// extension (their doc comments name the JSON keys); this package does not
// write JSON.
package itl
