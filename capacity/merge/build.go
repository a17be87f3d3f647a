package merge

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"slices"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/arrival"
	"github.com/anvilbench/anvil/capacity/internal/itl"
	"github.com/anvilbench/anvil/capacity/internal/steady"
)

// build assembles the merged artifact of checked shards, sorted by index.
func build(in []shardIn) (*artifact.Report, error) {
	base := in[0].r
	start, end := base.StartedAtUnixNS, base.FinishedAtUnixNS
	for _, s := range in {
		start, end = min(start, s.r.StartedAtUnixNS), max(end, s.r.FinishedAtUnixNS)
	}
	startT, endT := time.Unix(0, start).UTC(), time.Unix(0, end).UTC()
	m := &artifact.Report{
		Schema:             artifact.Schema,
		RunID:              startT.Format("benchmark-20060102T150405Z"),
		StartedAt:          startT.Format("2006-01-02T15:04:05Z"),
		StartedAtUnixNS:    start,
		FinishedAt:         endT.Format("2006-01-02T15:04:05Z"),
		FinishedAtUnixNS:   end,
		TimestampPrecision: base.TimestampPrecision,
		WallClockMS:        float64(span(start, end)) / 1e6,
		ClockDomainID:      base.ClockDomainID,

		BaseURL: base.BaseURL, Model: base.Model, Engine: base.Engine, GPU: base.GPU, Tier: base.Tier,
		Manifest: base.Manifest, SourceRecipe: base.SourceRecipe, ConfigurationFingerprint: base.ConfigurationFingerprint,

		MaxTokens: base.MaxTokens, ContextTokens: base.ContextTokens, MaxContextTokens: base.MaxContextTokens,
		ContextSeed: base.ContextSeed, ContextDistribution: make(map[int]int),
		SharedPrefixTokens: base.SharedPrefixTokens, PromptCacheMode: base.PromptCacheMode,
		RequestCanaries: base.RequestCanaries, ResponseWords: base.ResponseWords,
		ControlledOutputPolicy: base.ControlledOutputPolicy, ServeFlags: base.ServeFlags, Sampling: base.Sampling,
		TimingMethodology: base.TimingMethodology,
		RequestTimings:    []artifact.TimingRow{},
		Failures:          []artifact.Failure{},
	}
	for _, s := range in {
		r := s.r
		m.Requests += r.Requests
		m.Concurrency += r.Concurrency // a closed loop's workers; an open loop's cap is set below
		for ctx, n := range r.ContextDistribution {
			m.ContextDistribution[ctx] += n
		}
		m.ResponsesReceived += r.ResponsesReceived
		m.RequestTimings = append(m.RequestTimings, r.RequestTimings...)
		m.Failures = append(m.Failures, r.Failures...)
	}
	slices.SortFunc(m.RequestTimings, func(a, b artifact.TimingRow) int { return cmp.Compare(a.RequestIndex, b.RequestIndex) })
	slices.SortFunc(m.Failures, func(a, b artifact.Failure) int { return cmp.Compare(a.RequestIndex, b.RequestIndex) })
	m.Completed, m.Failed = len(m.RequestTimings), len(m.Failures)
	if len(in) == 1 {
		// The mean of the cached-token ratios needs their count, which
		// the artifact does not keep; one shard's is the whole run's.
		m.Metrics.PrefixCacheHitAvg = base.Metrics.PrefixCacheHitAvg
	}
	x, err := mergeExtension(in, m)
	if err != nil {
		return nil, err
	}
	m.AnvilGo = x
	if x.Arrival != nil {
		m.Concurrency = base.Concurrency // every shard kept the whole cap (workloadKeys)
	}
	if err := m.Recompute(); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	if x.SLO != nil {
		// Goodput is over the merged wall clock.
		x.SLO.GoodputRPS = float64(x.SLO.MetRequests) / (m.WallClockMS / 1000)
	}
	if st := base.AnvilGo.Steady; st != nil {
		// The window of the whole workload, from every shard's requests
		// on the shared clock, held to the load the shards were.
		x.Steady = steady.OfReport(m, st.Load)
	}
	return m, nil
}

// sameBuild sets *have to nil unless v holds what it holds.
func sameBuild[T comparable](have **T, v *T) {
	if *have != nil && (v == nil || *v != **have) {
		*have = nil
	}
}

// mergeExtension merges the anvil_go objects of the shards into that of m,
// whose v1 run fields are set.
func mergeExtension(in []shardIn, m *artifact.Report) (*artifact.Extension, error) {
	base := in[0].r.AnvilGo
	common := base.Shard.StartAtUnixNS
	x := new(artifact.Report).Extension() // empty, of the version this module writes
	x.Run = &artifact.RunSummary{}
	x.Search = base.Search
	x.Shards = &artifact.ShardSet{Count: len(in), StartAtUnixNS: common, PlanFingerprint: base.Shard.PlanFingerprint}
	if base.Run != nil {
		x.Run.DurationMS, x.Run.Benchmark = base.Run.DurationMS, base.Run.Benchmark
		x.Run.API, x.Run.AbsentTimings = base.Run.API, base.Run.AbsentTimings // the shards agree (workloadKeys)
		x.Run.ExtraBody = base.Run.ExtraBody                                  // the shards agree (workloadKeys)
		x.Run.ModuleVersion, x.Run.VCSRevision = base.Run.ModuleVersion, base.Run.VCSRevision
		x.Run.VCSModified, x.Run.GoVersion = base.Run.VCSModified, base.Run.GoVersion
	}
	for _, s := range in {
		ext := s.r.AnvilGo
		if run := ext.Run; run != nil {
			x.Run.SentRequests += run.SentRequests
			x.Run.NeverSentRequests += run.NeverSentRequests
			x.Run.Interrupted = x.Run.Interrupted || run.Interrupted
			if x.Run.Benchmark != nil && (run.Benchmark == nil || *run.Benchmark != *x.Run.Benchmark) {
				x.Run.Benchmark = nil // no one name for the shards' runs
			}
			// The build is the shards' when they agree, else unknown.
			sameBuild(&x.Run.ModuleVersion, run.ModuleVersion)
			sameBuild(&x.Run.VCSRevision, run.VCSRevision)
			sameBuild(&x.Run.VCSModified, run.VCSModified)
			sameBuild(&x.Run.GoVersion, run.GoVersion)
		}
		if c := ext.Connections; c != nil {
			if x.Connections == nil {
				x.Connections = &artifact.Connections{}
			}
			x.Connections.Prewarmed += c.Prewarmed
			x.Connections.DialedInMeasurement += c.DialedInMeasurement
			x.Connections.Retried += c.Retried
		}
		shift := float64(s.r.StartedAtUnixNS-common) / 1e6
		for _, d := range ext.Requests {
			for _, p := range []**float64{&d.ScheduledMS, &d.SentMS, &d.EndMS, &d.FirstOutputMS, &d.FirstContentMS} {
				if *p != nil {
					*p = new(**p + shift)
				}
			}
			x.Requests = append(x.Requests, d)
		}
		x.Shards.Artifacts = append(x.Shards.Artifacts, artifact.ShardRecord{Index: ext.Shard.Index, Host: ext.Shard.Host,
			StartedAtUnixNS: s.r.StartedAtUnixNS, FinishedAtUnixNS: s.r.FinishedAtUnixNS, SHA256: s.sha})
	}
	slices.SortFunc(x.Requests, func(a, b artifact.RequestDetail) int { return cmp.Compare(a.RequestIndex, b.RequestIndex) })
	x.Arrival = mergeArrival(in, x)
	if x.Arrival != nil {
		x.Shards.InFlight = inFlightOf(x.Requests, x.Arrival.MaxInFlight)
	}
	x.SLO = mergeSLO(in, m.Requests)
	x.PromptSizing = mergePromptSizing(in)
	x.ContextWindow = in[0].r.AnvilGo.ContextWindow // one target, discovered alike by every shard
	ct, err := mergeChunkTiming(in, m, x)
	if err != nil {
		return nil, err
	}
	x.ChunkTiming = ct
	x.Workload = mergeWorkload(in)
	x.Audit = mergeAudit(in)
	x.ServerMetrics = mergeServerMetrics(in, m, x)
	return x, nil
}

// mergeArrival is anvil_go.arrival over all shards: the schedule's offered
// rate from the shards' own scheduled offsets (each the global schedule's
// offset, measured from the shard's start), the achieved rate from the
// re-based send times on the shared clock, and the in-flight cap every
// shard kept (workloadKeys: they agree).
func mergeArrival(in []shardIn, x *artifact.Extension) *artifact.Arrival {
	b := in[0].r.AnvilGo.Arrival
	if b == nil {
		return nil
	}
	a := &artifact.Arrival{Process: b.Process, RateRPS: b.RateRPS, Burstiness: b.Burstiness, Seed: b.Seed, MaxInFlight: b.MaxInFlight}
	var schedule []time.Duration
	complete := true
	for _, s := range in {
		for _, d := range s.r.AnvilGo.Requests {
			if d.ScheduledMS == nil {
				complete = false // a planned request never scheduled: the plan's span is unknown
				continue
			}
			schedule = append(schedule, nsOf(*d.ScheduledMS))
		}
	}
	if complete {
		a.OfferedRPS = definedRate(arrival.Offered(schedule))
	}
	var sent []time.Time
	for _, d := range x.Requests {
		if d.SentMS != nil {
			sent = append(sent, time.Unix(0, int64(nsOf(*d.SentMS))))
		}
	}
	a.AchievedRPS = definedRate(arrival.Achieved(sent))
	return a
}

// nsOf is an offset in ms back as the Duration it was written from
// (float64(d)/1e6 reads back to d within a nanosecond for any offset under
// 100 days, so rounding recovers it).
func nsOf(ms float64) time.Duration { return time.Duration(math.Round(ms * 1e6)) }

// definedRate is a rate as the artifact holds it: nil for 0 (fewer than
// two times) and +Inf (no span).
func definedRate(v float64) *float64 {
	if v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

// mergeSLO is anvil_go.slo over all shards, when every shard evaluated the
// same SLO: a request meets it on its own, so the met requests add up.
// Goodput is set once the merged wall clock is known.
func mergeSLO(in []shardIn, requests int) *artifact.SLOResult {
	b := in[0].r.AnvilGo.SLO
	if b == nil || requests <= 0 {
		return nil
	}
	s := &artifact.SLOResult{TTFTMS: b.TTFTMS, TPOTMS: b.TPOTMS, E2EMS: b.E2EMS, Attainment: b.Attainment, LatencyClock: b.LatencyClock}
	for _, sh := range in {
		s.MetRequests += sh.r.AnvilGo.SLO.MetRequests
	}
	s.Attained = float64(s.MetRequests) / float64(requests)
	s.Passed = s.Attained >= s.Attainment
	return s
}

// mergePromptSizing is anvil_go.prompt_sizing over all shards: calibration
// requests add up, chars_per_token is the shards' ratio when they agree,
// else their ratios weighted by the planned prompt tokens of their
// measured requests (the ratio of all characters to all tokens, up to
// rounding), and the plan check is the single run's over every shard's
// requests[] (artifact.PromptSizing.CheckPlan).
func mergePromptSizing(in []shardIn) *artifact.PromptSizing {
	b := in[0].r.AnvilGo.PromptSizing
	if b == nil {
		return nil
	}
	c := *b // with the shards' key set: a key they lack stays absent
	p := &c
	p.CalibrationRequests = 0
	same := true
	var chars, tokens float64
	var details []artifact.RequestDetail
	var failures []artifact.Failure
	for _, s := range in {
		details = append(details, s.r.AnvilGo.Requests...)
		failures = append(failures, s.r.Failures...)
		q := s.r.AnvilGo.PromptSizing
		if q == nil {
			continue
		}
		p.CalibrationRequests += q.CalibrationRequests
		if q.CharsPerToken != b.CharsPerToken {
			same = false
		}
		t := 0
		for _, d := range s.r.AnvilGo.Requests {
			if d.Outcome != artifact.OutcomeNeverSent {
				t += d.PlannedPromptTokens
			}
		}
		chars += q.CharsPerToken * float64(t)
		tokens += float64(t)
	}
	if !same && tokens > 0 {
		p.CharsPerToken = chars / tokens
	}
	p.CheckPlan(details, failures)
	return p
}

// mergeChunkTiming is anvil_go.chunk_timing over all shards: the shards'
// stored gap distributions merged as one process would have kept them, the
// stalls added up, and the tokens-per-chunk mean recomputed exactly from
// the merged rows. Nil when no shard had a gap, or when one that did
// stored no distribution (its percentiles cannot be merged).
func mergeChunkTiming(in []shardIn, m *artifact.Report, x *artifact.Extension) (*artifact.ChunkTiming, error) {
	run, err := itl.NewRun(itl.DefaultStallRule()) // the rule is the shards'; stalls are theirs
	if err != nil {
		panic(err)
	}
	var rule *artifact.StallRule
	stalls, perToken := 0, true
	for _, s := range in {
		ct := s.r.AnvilGo.ChunkTiming
		if ct == nil {
			continue
		}
		perToken = perToken && ct.PerToken
		d := ct.Distribution
		if d == nil {
			return nil, nil
		}
		err := run.AddDistribution(d)
		if n := gapCount(d); err == nil && n != ct.Gaps {
			err = fmt.Errorf("holds %d gaps, chunk_timing.gaps says %d", n, ct.Gaps)
		}
		if err != nil {
			return nil, fmt.Errorf("merge: %s: anvil_go.chunk_timing.distribution: %w", s.name, err)
		}
		stalls += ct.Stalls
		rule = &ct.StallRule
	}
	res, ok := run.Result()
	if !ok {
		return nil, nil
	}
	ct := &artifact.ChunkTiming{
		ITLMS: artifact.Quantiles{P50: res.ITL.P50, P90: res.ITL.P90, P99: res.ITL.P99, P999: res.ITL.P999, Max: res.ITL.Max},
		Gaps:  res.Gaps, Exact: res.Exact, RelativeError: res.RelativeError,
		Stalls: stalls, StallRule: artifact.StallRule{Relative: rule.Relative, FloorMS: rule.FloorMS, OverrideMS: rule.OverrideMS},
		Distribution: run.Distribution(),
		PerToken:     perToken, // every shard's gaps per token
	}
	// The mean of completion tokens / output chunks over the successful
	// requests with usage, summed exactly as package itl does.
	var sum big.Rat
	n := 0
	for i := range m.RequestTimings {
		row := &m.RequestTimings[i]
		d := x.Request(row.RequestIndex)
		if d == nil || d.TokensPerChunk == nil || row.OutputTokens == nil || d.OutputChunks < 1 {
			continue
		}
		sum.Add(&sum, new(big.Rat).SetFrac64(int64(*row.OutputTokens), int64(d.OutputChunks)))
		n++
	}
	if n > 0 {
		mean, _ := new(big.Rat).Quo(&sum, new(big.Rat).SetInt64(int64(n))).Float64()
		ct.TokensPerChunkMean = &mean
	}
	return ct, nil
}

// gapCount is the number of gaps d holds.
func gapCount(d *artifact.GapDistribution) int {
	if d.Sketch != nil {
		return d.Sketch.Count
	}
	return len(d.ExactNS)
}
