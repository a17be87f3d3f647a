// Package steady finds the steady-state window of a run's measured phase
// from the run's own requests (anvil_go.requests and the timing rows),
// and the headline metrics over it: the member anvil_go.steady,
// documented key by key in capacity/PROTOCOL.md#steady.
//
// A benchmark's numbers are the steady state's only when the ramp-up and
// the drain are left out: a cold engine answers slowly at first, and one
// long request at the end stretches the wall time while a single stream
// runs. Find names the window in which the run was at its load and
// neither its completions nor its TTFT moved, or says why there is none.
// The test, in the order Find applies it:
//
//  1. Bins. The phase [0, wall_clock_ms) is cut into n full bins of width
//     B = max(min(1 s, T/20), 4T/N, T/1000), T the phase's duration and N
//     its successful requests: 1 s bins, narrower for a phase under 20 s
//     so that it still has 20, wide enough to hold 4 completions on
//     average, and at most 1,000 of them. What is left after the last full
//     bin (less than one bin) is not tested. Fewer than 10 bins: too short
//     to test.
//  2. Series. Per bin: the completions (successful requests whose stream
//     ended in it), the median TTFT (nearest rank) of the successful
//     requests sent in it (for a "rate" load: due in it, and the TTFT from
//     the due time, queue included), and the load: for a closed loop
//     ("in_flight") the mean number of requests in flight over the bin.
//  3. Load. A closed loop's bin is at load when its mean in flight is at
//     least 90 % of the target, the workload's concurrency (at most the
//     requests sent); a "rate" load's bin when it lies inside the
//     schedule, between the first and the last due time; a "none" load
//     (sessions) has every bin at load. The candidate is the longest run
//     of consecutive bins at load (the first of equal ones), at least 10.
//  4. Transients. MSER (the marginal standard error rule, White 1997, the
//     usual truncation rule of steady-state simulation) cuts the start:
//     for each series y_1..y_m of the candidate (the TTFT series over its
//     bins with a value), the cut d in 0..floor(m/2) minimising
//     sum_{i>d} (y_i - mean_{i>d})^2 / (m-d)^2, the smallest d on a tie;
//     the window starts after the largest cut of the two series. The same
//     rule on the series reversed, over what is left, cuts the end. The
//     window must keep at least 5 bins.
//  5. Trend. Over the window, the Mann-Kendall test of each series: S =
//     sum over i < j of sign(y_j - y_i), its variance with the tie
//     correction, z = (S - sign S) / sqrt(Var S) (0 when S is 0 or the
//     series constant). A series trends when |z| >= 1.96 (the 5 % level,
//     two-sided). The TTFT series is tested when at least 5 of the
//     window's bins have a value; otherwise its z is null.
//  6. Window load. For a "rate" load, the window's achieved rate (requests
//     sent in it per second) must be within 10 % of its offered rate
//     (requests due in it per second).
//
// The window is steady when every test passed; the metrics are then
// those of the requests sent (for "rate": due) in the window, and its
// throughput is the output tokens generated within it, each successful
// request's usage spread evenly from its first output to its end.
package steady
