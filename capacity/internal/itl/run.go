package itl

import (
	"fmt"
	"math/big"
	"slices"
)

// Run accumulates the chunk timing of a run: the gaps of every successful
// stream, their stalls and their tokens per chunk. Concurrent workers
// share one under a lock, or keep their own and combine them with Merge. A
// Run is not safe for concurrent use; build one with NewRun.
type Run struct {
	rule     StallRule
	gaps     gapSet
	requests int // streams recorded
	stalls   int // their stalls
	// tpcSum is the exact sum of their tokens per chunk (completion tokens
	// over output chunks, as fractions) over tpcN of them, so the mean is
	// rounded once and does not depend on the order runs are merged in.
	tpcSum big.Rat
	tpcN   int
	// perToken counts the recorded streams whose gaps are per token.
	perToken int
}

// NewRun returns an empty Run that applies rule to every stream. It fails
// with a *field.Error (Kind ErrInvalidInput) when the rule is invalid.
func NewRun(rule StallRule) (*Run, error) {
	if err := rule.Validate(); err != nil {
		return nil, err
	}
	return &Run{rule: rule}, nil
}

// Reserve makes room for gaps more exact gaps (of the ExactGaps a run
// keeps exactly, no more), so that Record and Merge store them without
// allocating: a run that knows how many gaps its streams may bring
// allocates their room once, not as they come.
func (r *Run) Reserve(gaps int) {
	g := &r.gaps
	if g.spilled || gaps <= 0 {
		return
	}
	g.exact = slices.Grow(g.exact, min(gaps, ExactGaps-g.count()))
}

// Rule returns the stall rule the run applies.
func (r *Run) Rule() StallRule { return r.rule }

// Record adds a successful stream to the run and returns its Summary under
// the run's rule (the request's members of the artifact). completionTokens
// is the usage completion token count, nil when the server reported none.
// On error (see Stream.Summary) the run is unchanged. Failed requests are
// not recorded: their gaps end early and would bias the distribution.
func (r *Run) Record(s *Stream, completionTokens *int) (Summary, error) {
	sum, err := s.Summary(r.rule, completionTokens)
	if err != nil {
		return Summary{}, err
	}
	r.gaps.merge(&s.gaps)
	r.requests++
	r.stalls += sum.Stalls
	if sum.PerToken {
		r.perToken++
	}
	if sum.TokensPerChunk != nil {
		r.tpcSum.Add(&r.tpcSum, new(big.Rat).SetFrac64(int64(*completionTokens), int64(s.Chunks())))
		r.tpcN++
	}
	return sum, nil
}

// Merge adds everything o accumulated to r, leaving o unchanged. Both must
// apply the same rule; otherwise it returns a *field.Error (Kind ErrInvalidInput) and r is
// unchanged.
func (r *Run) Merge(o *Run) error {
	if o.rule != r.rule {
		return inputError("Run.Merge rule", fmt.Sprintf("%+v", o.rule), fmt.Sprintf("must equal the receiving run's rule %+v", r.rule))
	}
	r.gaps.merge(&o.gaps)
	r.requests += o.requests
	r.stalls += o.stalls
	r.tpcSum.Add(&r.tpcSum, &o.tpcSum)
	r.tpcN += o.tpcN
	r.perToken += o.perToken
	return nil
}

// Requests returns the number of streams recorded (merged runs included).
func (r *Run) Requests() int { return r.requests }

// RunITL is the run's inter-token latency in milliseconds: the JSON object
// "chunk_timing"."itl_ms". Nearest-rank percentiles over the gaps of every
// recorded stream together.
type RunITL struct {
	// P50 becomes "p50".
	P50 float64
	// P90 becomes "p90".
	P90 float64
	// P99 becomes "p99".
	P99 float64
	// P999 becomes "p999": the 99.9th percentile.
	P999 float64
	// Max becomes "max"; always exact.
	Max float64
}

// ChunkTiming is the run's chunk timing: the artifact's "chunk_timing"
// member of "anvil_go".
type ChunkTiming struct {
	// ITL becomes "itl_ms".
	ITL RunITL
	// Gaps becomes "gaps": the number of gaps in the distribution.
	Gaps int
	// Exact becomes "exact": true when the percentiles are exact
	// nearest-rank values (at most ExactGaps gaps), false when they come
	// from the sketch.
	Exact bool
	// RelativeError becomes "relative_error": 0 when Exact,
	// RelativeAccuracy otherwise.
	RelativeError float64
	// Stalls becomes "stalls": the total over recorded streams.
	Stalls int
	// StallRule becomes "stall_rule".
	StallRule RuleResult
	// PerToken becomes "per_token": every recorded stream's gaps are per
	// token (Stream.AddTokens), so the distribution is the inter-token
	// latency itself; false: gaps between output chunks, or gaps added
	// without their streams (Run.AddDistribution: the caller knows what they
	// were).
	PerToken bool
	// TokensPerChunkMean becomes "tokens_per_chunk_mean": the mean of
	// TokensPerChunk over the recorded streams that reported usage; nil
	// (null) when none did.
	TokensPerChunkMean *float64
}

// Result returns the run's chunk timing, and false when no recorded stream
// had a gap (the artifact's "chunk_timing" is then null). It may reorder
// the stored gaps, so it must not run concurrently with other methods.
func (r *Run) Result() (ChunkTiming, bool) {
	n := r.gaps.count()
	if n == 0 {
		return ChunkTiming{}, false
	}
	g := &r.gaps
	g.prepare()
	ct := ChunkTiming{
		ITL: RunITL{
			P50:  g.at(rank(500, n)),
			P90:  g.at(rank(900, n)),
			P99:  g.at(rank(990, n)),
			P999: g.at(rank(999, n)),
			Max:  ms(g.largest()),
		},
		Gaps:      n,
		Exact:     !g.spilled,
		Stalls:    r.stalls,
		StallRule: r.rule.Result(),
		PerToken:  r.requests > 0 && r.perToken == r.requests,
	}
	if !ct.Exact {
		ct.RelativeError = RelativeAccuracy
	}
	if r.tpcN > 0 {
		mean, _ := new(big.Rat).Quo(&r.tpcSum, new(big.Rat).SetInt64(int64(r.tpcN))).Float64()
		ct.TokensPerChunkMean = &mean
	}
	return ct, true
}
