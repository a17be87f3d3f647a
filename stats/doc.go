// Package stats summarizes float64 samples exactly as the
// anvil-serving.benchmark/v1 protocol requires.
//
// Summarize returns N, the mean, the sample standard deviation, the
// normal-approximation 95% confidence interval of the mean, the minimum,
// nearest-rank percentiles and the maximum. The arithmetic is bit-exact and
// independent of sample order:
//
//   - Mean is the exact sum of the samples (integer arithmetic on the samples
//     scaled to a common power of two, math/big) rounded once to float64,
//     then divided by float64(N) in float64. This is Python's
//     math.fsum(xs) / n.
//   - Stddev is the correctly rounded square root of the exact sample
//     variance (n*Q - S*S) / (n*(n-1)), computed on the same scaled
//     integers: an integer square root of the variance scaled to at least 64
//     significant bits, with a sticky bit for a nonzero remainder, rounded
//     once to float64 (round half to even), as the reference tool computes
//     it with exact fractions.
//   - CI95Low and CI95High are Mean - (Z95 * Stddev) / sqrt(N) and
//     Mean + (Z95 * Stddev) / sqrt(N), evaluated in float64 in that order,
//     with Z95 the literal 1.96.
//   - Percentile p is the sample at 1-based rank ceil(p * N / 100) (at least
//     1) of the ascending sort: the nearest-rank method, never interpolated.
//
// TInterval95 is the interval of a metric across repeated runs (an SLO
// search's repeats, a summary of several runs of one workload): the mean
// plus or minus the 0.975 quantile of Student's t distribution with n-1
// degrees of freedom times the standard deviation over sqrt(n), with the
// mean and standard deviation above; few runs widen it (4.30 standard
// errors either side for 3 runs), as they should.
//
// A statistic that is undefined is NaN: every one when N = 0, and Stddev and
// the CI bounds when N = 1. Callers that write JSON turn NaN into null.
package stats
