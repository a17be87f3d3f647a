package merge

import (
	"fmt"
	"strconv"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// What makes artifacts shards of one workload: the keys every shard must
// agree on, each shown as a string for the comparison and the message.

// workloadKey is one key the shards of a workload share.
type workloadKey struct {
	key string
	val func(r *artifact.Report) string
}

// workloadKeys are the shard's plan and count, the v1 workload and setup
// keys, the clock domain, and the anvil_go settings of the run, an open
// loop's in-flight cap among them (every shard keeps the whole cap). What
// a shard measured, and its share of the load (requests,
// context_distribution, a closed loop's concurrency), are not among them.
var workloadKeys = []workloadKey{
	{"anvil_go.shard.count", func(r *artifact.Report) string { return strconv.Itoa(r.AnvilGo.Shard.Count) }},
	{"anvil_go.shard.plan_fingerprint", func(r *artifact.Report) string { return r.AnvilGo.Shard.PlanFingerprint }},
	{"anvil_go.shard.start_at_unix_ns", func(r *artifact.Report) string { return unixLabel(r.AnvilGo.Shard.StartAtUnixNS) }},
	{"clock_domain_id", func(r *artifact.Report) string { return quoteOrNull(r.ClockDomainID) }},
	{"schema", func(r *artifact.Report) string { return r.Schema }},
	{"base_url", func(r *artifact.Report) string { return r.BaseURL }},
	{"model", func(r *artifact.Report) string { return r.Model }},
	{"engine", func(r *artifact.Report) string { return quoteOrNull(r.Engine) }},
	{"gpu", func(r *artifact.Report) string { return quoteOrNull(r.GPU) }},
	{"tier", func(r *artifact.Report) string { return quoteOrNull(r.Tier) }},
	{"manifest", func(r *artifact.Report) string { return quoteOrNull(r.Manifest) }},
	{"source_recipe", func(r *artifact.Report) string { return quoteOrNull(r.SourceRecipe) }},
	{"configuration_fingerprint", func(r *artifact.Report) string { return quoteOrNull(r.ConfigurationFingerprint) }},
	{"max_tokens", func(r *artifact.Report) string { return strconv.Itoa(r.MaxTokens) }},
	{"context_tokens", func(r *artifact.Report) string { return intOrNull(r.ContextTokens) }},
	{"max_context_tokens", func(r *artifact.Report) string { return intOrNull(r.MaxContextTokens) }},
	{"context_seed", func(r *artifact.Report) string { return strconv.FormatInt(r.ContextSeed, 10) }},
	{"shared_prefix_tokens", func(r *artifact.Report) string { return strconv.Itoa(r.SharedPrefixTokens) }},
	{"prompt_cache_mode", func(r *artifact.Report) string { return r.PromptCacheMode }},
	{"request_canaries", func(r *artifact.Report) string { return strconv.FormatBool(r.RequestCanaries) }},
	{"response_words", func(r *artifact.Report) string { return strconv.Itoa(r.ResponseWords) }},
	{"controlled_output_policy", func(r *artifact.Report) string { return r.ControlledOutputPolicy }},
	{"serve_flags", func(r *artifact.Report) string {
		f := r.ServeFlags
		return fmt.Sprintf("thinking_mode=%s no_thinking=%t reasoning_effort=%s shared_prefix_burst=%t",
			f.ThinkingMode, f.NoThinking, quoteOrNull(f.ReasoningEffort), f.SharedPrefixBurst)
	}},
	{"sampling", func(r *artifact.Report) string {
		f := func(s artifact.SamplingField) string {
			return fmt.Sprintf("{requested=%s sent=%t effective_request=%s}", floatOrNull(s.Requested), s.Sent, floatOrNull(s.EffectiveRequest))
		}
		return "temperature=" + f(r.Sampling.Temperature) + " top_p=" + f(r.Sampling.TopP)
	}},
	{"timestamp_precision", func(r *artifact.Report) string { return r.TimestampPrecision }},
	{"anvil_go.run.api", func(r *artifact.Report) string { return artifact.APIOf(r) }},
	{"anvil_go.run.duration_ms", func(r *artifact.Report) string {
		if r.AnvilGo.Run == nil {
			return "null"
		}
		return floatOrNull(r.AnvilGo.Run.DurationMS)
	}},
	{"anvil_go.run.extra_body", func(r *artifact.Report) string {
		if r.AnvilGo.Run == nil || r.AnvilGo.Run.ExtraBody == nil {
			return "null"
		}
		return fmt.Sprint(r.AnvilGo.Run.ExtraBody) // fmt prints a map sorted by key
	}},
	{"anvil_go.arrival", func(r *artifact.Report) string {
		a := r.AnvilGo.Arrival
		if a == nil {
			return "null (closed loop)"
		}
		return fmt.Sprintf("process=%s rate_rps=%v burstiness=%s seed=%d max_in_flight=%d", a.Process, a.RateRPS, floatOrNull(a.Burstiness), a.Seed, a.MaxInFlight)
	}},
	{"concurrency", func(r *artifact.Report) string {
		if r.AnvilGo.Arrival == nil {
			return "a share of the workers (closed loop)" // split: not compared
		}
		return strconv.Itoa(r.Concurrency)
	}},
	{"anvil_go.prompt_sizing.method", func(r *artifact.Report) string {
		if p := r.AnvilGo.PromptSizing; p != nil {
			return p.Method
		}
		return "null"
	}},
	{"anvil_go.slo", func(r *artifact.Report) string {
		s := r.AnvilGo.SLO
		if s == nil {
			return "null"
		}
		return fmt.Sprintf("ttft_ms=%s tpot_ms=%s e2e_ms=%s attainment=%v latency_clock=%s",
			floatOrNull(s.TTFTMS), floatOrNull(s.TPOTMS), floatOrNull(s.E2EMS), s.Attainment, s.LatencyClock)
	}},
	{"anvil_go.workload", workloadLabel},
	{"anvil_go.search", func(r *artifact.Report) string {
		if s := r.AnvilGo.Search; s != nil {
			return fmt.Sprintf("kind=%s probe=%d value=%v", s.Kind, s.Probe, s.Value)
		}
		return "null"
	}},
}

// checkOneWorkload refuses shards that disagree on a workload key (the
// first such key, naming both artifacts and values), or on the stall rule
// of those that measured chunk timing.
func checkOneWorkload(in []shardIn) error {
	first := &in[0]
	for _, k := range workloadKeys {
		want := k.val(first.r)
		for i := 1; i < len(in); i++ {
			if got := k.val(in[i].r); got != want {
				what := "two workloads"
				switch k.key {
				case "anvil_go.shard.count":
					what = "two shard counts"
				case "clock_domain_id":
					what = "differing clock_domain_id"
				}
				return refuse("%s: %s has %s %s, %s has %s", what, first.name, k.key, want, in[i].name, got)
			}
		}
	}
	var rule *shardIn
	for i := range in {
		ct := in[i].r.AnvilGo.ChunkTiming
		if ct == nil {
			continue
		}
		if rule == nil {
			rule = &in[i]
			continue
		}
		if a, b := stallRuleLabel(rule.r.AnvilGo.ChunkTiming.StallRule), stallRuleLabel(ct.StallRule); a != b {
			return refuse("two workloads: %s has anvil_go.chunk_timing.stall_rule %s, %s has %s", rule.name, a, in[i].name, b)
		}
	}
	return nil
}

func stallRuleLabel(s artifact.StallRule) string {
	return fmt.Sprintf("relative=%v floor_ms=%v override_ms=%s", s.Relative, s.FloorMS, floatOrNull(s.OverrideMS))
}

func intOrNull(v *int) string {
	if v == nil {
		return "null"
	}
	return strconv.Itoa(*v)
}

func floatOrNull(v *float64) string {
	if v == nil {
		return "null"
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}
