// Package arrival computes the arrival schedule of an open-loop load
// before a run: the offset from the run's start at which each request is
// sent. A schedule is a pure function of (process, rate, burstiness, seed,
// n), reproducible bit for bit on every platform.
//
// # Processes
//
// A Process is the distribution of the interval between two consecutive
// requests, drawn in units of its mean; a schedule at rate λ requests per
// second scales the draws by 1/λ seconds. Three are built in:
//
//   - Constant: every interval is 1/λ. The coefficient of variation (CV,
//     standard deviation over mean) of the intervals is 0.
//   - Poisson: intervals are exponential with mean 1/λ, the arrivals of
//     many independent clients. The CV is 1.
//   - Gamma: intervals are Gamma(shape b, scale θ) with θ = 1/(λb), where
//     b is the burstiness of vLLM's "bench serve --burstiness".
//
// Any other Process, for instance a ProcessFunc, is scheduled by Offsets.
//
// # Burstiness
//
// A Gamma(k, θ) variable has mean kθ and variance kθ². With k = b and
// θ = 1/(λb):
//
//	mean     = b · 1/(λb)          = 1/λ
//	variance = b · (1/(λb))²       = 1/(λ²b)
//	CV       = √(1/(λ²b)) / (1/λ)  = 1/√b
//
// So the burstiness changes the spread of the intervals and never the
// rate. b = 1 is the exponential distribution, the Poisson process;
// b < 1 has CV > 1, many short intervals and a few long ones, so requests
// come in bursts (b = 0.25 gives CV 2); b > 1 has CV < 1, a smoother load
// than Poisson (b = 4 gives CV 0.5), approaching Constant as b grows.
//
// # Reproducibility
//
// Schedule draws from NewRand(seed), a PCG generator whose Uint64 sequence
// is fixed by its algorithm. The samplers turn those integers into
// uniforms exactly, exponentials by inversion (-ln U), normals by
// Marsaglia's polar method and gammas by Marsaglia and Tsang's method
// (with their U^(1/b) boost for b < 1), and compute the logarithms and
// exponentials they need with IEEE-754 basic operations only, never with
// package math's Log and Exp, whose assembly versions differ by an ulp
// between architectures. Every product that feeds an addition is
// explicitly rounded, so no compiler fuses it into a multiply-add. There is
// no map iteration, goroutine or clock in the computation.
// testdata/schedules.golden pins the offsets of a few specs.
//
// # Coordinated omission
//
// A closed-loop generator sends the next request when a previous one
// completes. When the server stalls, the generator stalls with it: the
// requests that would have arrived during the stall are never sent, the
// few slow responses are averaged with many fast ones, and the latency
// distribution hides exactly the delay a real user arriving during the
// stall would have seen. That is coordinated omission (Gil Tene): the
// generator coordinates with the system under test and omits its bad
// moments.
//
// A schedule computed before the run cannot coordinate. Request i leaves at
// start + offset[i] whatever the completions of the others, so a slow
// server meets the same offered load as a fast one, and its queue grows as
// a real one would. When the generator itself falls behind (every worker
// busy, a CPU stall) and sends a request late, its latency is still
// measured from its scheduled time, start + offset[i], not from the late
// send, so the wait counts against the result instead of vanishing.
// Offered gives the rate the schedule planned and Achieved the rate the
// actual send times reached; a gap between them shows the generator did
// not keep up.
package arrival
