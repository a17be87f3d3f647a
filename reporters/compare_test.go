package reporters

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// seedDoc is the seed artifact as a generic document, numbers kept as
// json.Number, as Compare sees it.
func seedDoc(t *testing.T) map[string]any {
	t.Helper()
	doc, err := document(loadReport(t, seedPath))
	require.NoError(t, err)
	return doc
}

// cloneDoc deep-copies a generic document.
func cloneDoc(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = cloneDoc(e)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = cloneDoc(e)
		}
		return s
	}
	return v
}

// set sets (or, with del, deletes) the value at a dotted path, creating
// objects on the way.
func set(doc map[string]any, path string, v any, del bool) {
	segs := strings.Split(path, ".")
	cur := doc
	for _, s := range segs[:len(segs)-1] {
		next, ok := cur[s].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[s] = next
		}
		cur = next
	}
	if del {
		delete(cur, segs[len(segs)-1])
		return
	}
	cur[segs[len(segs)-1]] = v
}

type edit struct {
	path string
	v    any
	del  bool
}

func n(s string) json.Number { return json.Number(s) }

// TestIdentityKeys: each identity key, changed on one side (or both), makes
// the pair non-comparable naming exactly the keys at fault; keys that do
// not identify the workload do not.
func TestIdentityKeys(t *testing.T) {
	poisson := map[string]any{"process": "poisson", "rate_rps": n("4"), "burstiness": n("1")}
	gamma := map[string]any{"process": "gamma", "rate_rps": n("4"), "burstiness": n("0.5")}
	checkIdentity(t, []identityCase{
		{name: "identical"},
		{name: "schema", news: []edit{{"schema", "anvil-serving.benchmark/v2", false}}, want: []string{"schema"}, problem: "differs"},
		{name: "protocol", news: []edit{{"measurement_protocol", "capacity-v3", false}}, want: []string{"measurement_protocol"}},
		{name: "context", news: []edit{{"context_tokens", n("32768"), false}}, want: []string{"context_tokens"}},
		{name: "fixed vs sampled", news: []edit{{"context_tokens", nil, false}}, want: []string{"context_tokens"}},
		{name: "sampled seed", both: []edit{{"context_tokens", nil, false}}, news: []edit{{"context_seed", n("1"), false}}, want: []string{"context_seed"}},
		{name: "sampled distribution", both: []edit{{"context_tokens", nil, false}},
			news: []edit{{"context_distribution", map[string]any{"4096": n("6")}, false}}, want: []string{"context_distribution"}},
		{name: "seed ignored when fixed", news: []edit{{"context_seed", n("99"), false}}},
		{name: "served context", news: []edit{{"max_context_tokens", n("131072"), false}}, want: []string{"max_context_tokens"}},
		{name: "requests", news: []edit{{"requests", n("7"), false}}, want: []string{"requests"}},
		{name: "concurrency", news: []edit{{"concurrency", n("2"), false}}, want: []string{"concurrency"}},
		{name: "max tokens", news: []edit{{"max_tokens", n("4096"), false}}, want: []string{"max_tokens"}},
		{name: "cache mode", news: []edit{{"prompt_cache_mode", "shared", false}}, want: []string{"prompt_cache_mode"}},
		{name: "shared prefix", news: []edit{{"shared_prefix_tokens", n("512"), false}}, want: []string{"shared_prefix_tokens"}},
		{name: "burst", news: []edit{{"serve_flags.shared_prefix_burst", true, false}}, want: []string{"serve_flags.shared_prefix_burst"}},
		{name: "thinking", news: []edit{{"serve_flags.thinking_mode", "disabled", false}, {"serve_flags.no_thinking", true, false}},
			want: []string{"serve_flags.thinking_mode", "serve_flags.no_thinking"}},
		{name: "effort", news: []edit{{"serve_flags.reasoning_effort", "high", false}}, want: []string{"serve_flags.reasoning_effort"}},
		{name: "temperature not sent", news: []edit{{"sampling.temperature.sent", false, false}}, want: []string{"sampling.temperature.sent"}},
		{name: "temperature value", news: []edit{{"sampling.temperature.effective_request", n("0.7"), false}}, want: []string{"sampling.temperature.effective_request"}},
		{name: "top_p value", news: []edit{{"sampling.top_p.effective_request", n("1.0"), false}}, want: []string{"sampling.top_p.effective_request"}},
		{name: "requested but not sent is no identity", both: []edit{{"sampling.top_p.sent", false, false}},
			news: []edit{{"sampling.top_p.effective_request", n("0.5"), false}, {"sampling.top_p.requested", n("0.5"), false}}},
		{name: "same number written twice", news: []edit{{"sampling.temperature.effective_request", n("0.90"), false}}},
		{name: "canaries", news: []edit{{"request_canaries", false, false}}, want: []string{"request_canaries"}},
		{name: "response words", news: []edit{{"response_words", n("10"), false}}, want: []string{"response_words"}},
		{name: "policy with words", both: []edit{{"response_words", n("10"), false}},
			news: []edit{{"controlled_output_policy", "strict", false}}, want: []string{"controlled_output_policy"}},
		{name: "policy without words is no identity", news: []edit{{"controlled_output_policy", "strict", false}}},
		{name: "open vs closed loop", news: []edit{{"anvil_go.arrival", poisson, false}},
			want: []string{"anvil_go.arrival.process", "anvil_go.arrival.rate_rps"}, problem: "differs"},
		{name: "arrival rate", both: []edit{{"anvil_go.arrival", poisson, false}},
			news: []edit{{"anvil_go.arrival.rate_rps", n("8"), false}}, want: []string{"anvil_go.arrival.rate_rps"}},
		{name: "gamma burstiness", both: []edit{{"anvil_go.arrival", gamma, false}},
			news: []edit{{"anvil_go.arrival.burstiness", n("2"), false}}, want: []string{"anvil_go.arrival.burstiness"}},
		{name: "null arrival is closed loop", news: []edit{{"anvil_go.arrival", nil, false}}},
		{name: "duration campaigns compare their budget, not their request counts",
			both: []edit{{"anvil_go.run", map[string]any{"duration_ms": n("1000.0")}, false}},
			news: []edit{{"requests", n("7"), false}}},
		{name: "duration budget", both: []edit{{"anvil_go.run", map[string]any{"duration_ms": n("1000.0")}, false}},
			news: []edit{{"anvil_go.run.duration_ms", n("2000.0"), false}}, want: []string{"anvil_go.run.duration_ms"}},
		{name: "fixed count vs duration campaign", news: []edit{{"anvil_go.run", map[string]any{"duration_ms": n("1000.0")}, false}},
			want: []string{"anvil_go.run.duration_ms"}, problem: "absent in old"},
		{name: "exact vs reference sizing", news: []edit{{"anvil_go.prompt_sizing", map[string]any{"method": "exact"}, false}},
			want: []string{"anvil_go.prompt_sizing.method"}, problem: "differs"},
		{name: "extra body", both: []edit{{"anvil_go.run", map[string]any{"extra_body": map[string]any{"cache_prompt": "true"}}, false}},
			news: []edit{{"anvil_go.run.extra_body.cache_prompt", "false", false}}, want: []string{"anvil_go.run.extra_body"}, problem: "differs"},
		{name: "same extra body", both: []edit{{"anvil_go.run", map[string]any{"extra_body": map[string]any{"cache_prompt": "false", "n_keep": "4"}}, false}}},
		{name: "extra body on one side", news: []edit{{"anvil_go.run", map[string]any{"extra_body": map[string]any{"cache_prompt": "false"}}, false}},
			want: []string{"anvil_go.run.extra_body"}, problem: "absent in old"},
		{name: "malformed extra body", both: []edit{{"anvil_go.run", map[string]any{"extra_body": map[string]any{"cache_prompt": false}}, false}},
			want: []string{"anvil_go.run.extra_body", "anvil_go.run.extra_body"}, problem: "malformed in old: want an object of strings"},
		{name: "another API", news: []edit{{"anvil_go.run", map[string]any{"api": "responses"}, false}},
			want: []string{"anvil_go.run.api"}, problem: "differs"},
		{name: "no API is chat", news: []edit{{"anvil_go.run", map[string]any{"api": "chat"}, false}}},
		{name: "unknown API", both: []edit{{"anvil_go.run", map[string]any{"api": "grpc"}, false}}, want: []string{"anvil_go.run.api", "anvil_go.run.api"},
			problem: "malformed in old: want one of chat, responses, messages, completions, embeddings"},
		{name: "missing", news: []edit{{"concurrency", nil, true}}, want: []string{"concurrency"}, problem: "absent in new"},
		{name: "missing nested", news: []edit{{"serve_flags.reasoning_effort", nil, true}}, want: []string{"serve_flags.reasoning_effort"}, problem: "absent in new"},
		{name: "missing on both", both: []edit{{"prompt_cache_mode", nil, true}}},
		{name: "malformed count", both: []edit{{"concurrency", n("0"), false}}, want: []string{"concurrency", "concurrency"},
			problem: "malformed in old: want an integer >= 1"},
		{name: "malformed mode", news: []edit{{"prompt_cache_mode", "sometimes", false}}, want: []string{"prompt_cache_mode"},
			problem: "malformed in new: want one of shared, unique"},
		{name: "malformed value", news: []edit{{"sampling.temperature.effective_request", "hot", false}},
			want: []string{"sampling.temperature.effective_request"}, problem: "malformed in new: want a number or null"},
		{name: "setup is provenance", news: []edit{{"engine", "vllm", false}, {"gpu", "h100", false}, {"model", "other", false},
			{"run_id", "benchmark-x", false}, {"configuration_fingerprint", "sha256:00", false}, {"serve_flags.kv_cache", "fp8", false}}},
	})
}

// identityCase is a pair of documents made from the seed artifact: both
// edits made to the two, news to the new one only; want is the identity
// keys matchIdentity names, in order (nil: comparable), and problem the
// first diff's.
type identityCase struct {
	name       string
	both, news []edit
	want       []string
	problem    string
}

// checkIdentity runs each case as a subtest.
func checkIdentity(t *testing.T, cases []identityCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := seedDoc(t)
			for _, e := range tc.both {
				set(old, e.path, cloneDoc(e.v), e.del)
			}
			new := cloneDoc(old).(map[string]any)
			for _, e := range tc.news {
				set(new, e.path, e.v, e.del)
			}
			res := matchIdentity(old, new, sideName, false)
			var got []string
			for _, d := range res.diffs {
				got = append(got, d.Key)
			}
			require.Equal(t, tc.want, got, "%+v", res.diffs)
			if tc.problem != "" {
				require.Equal(t, tc.problem, res.diffs[0].Problem)
			}
		})
	}
}

func TestIdentityDiffNamesBothValues(t *testing.T) {
	old := seedDoc(t)
	new := cloneDoc(old).(map[string]any)
	set(new, "context_tokens", n("32768"), false)
	set(new, "concurrency", nil, true)
	res := matchIdentity(old, new, sideName, false)
	want := []Difference{
		{Key: "context_tokens", Old: []string{"65536"}, New: []string{"32768"}, Problem: "differs"},
		{Key: "concurrency", Old: []string{"1"}, New: []string{"absent"}, Problem: "absent in new"},
	}
	if d := cmp.Diff(want, res.diffs); d != "" {
		t.Fatalf("diffs (-want +got):\n%s", d)
	}
	err := error(&NotComparableError{Sides: sideName, Diffs: res.diffs})
	require.Equal(t, "not comparable: old and new are not one workload (2 identity keys):\n"+
		"  context_tokens: old 65536, new 32768 (differs)\n  concurrency: old 1, new absent (absent in new)", err.Error())
}

// findingsDir holds the reference tool's artifacts.
const findingsDir = "../testdata/corpus/docs/findings/"

// TestCompareReferencePairs: two runs of one workload written by the
// reference tool compare, for each of its three artifact generations;
// runs of two generations do not (the older lacks keys), naming them.
func TestCompareReferencePairs(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new []string
		unrec    []string
	}{
		{"oldest generation (12 keys)",
			[]string{"2026-07-17-gpt-oss-puzzle-qualification-evidence/candidate-capacity-prefix-128.json"},
			[]string{"2026-07-17-gpt-oss-puzzle-qualification-evidence/candidate-capacity-prefix-128-warm.json"},
			[]string{"measurement_protocol", "prompt_cache_mode", "shared_prefix_tokens", "request_canaries", "response_words"}},
		{"protocol generation (22 keys)",
			[]string{"2026-07-28-agents-a1-multimodal-qualification-evidence/fp8-moe-ab-default-primary-r1.json"},
			[]string{"2026-07-28-agents-a1-multimodal-qualification-evidence/fp8-moe-ab-default-primary-r2.json"},
			[]string{"prompt_cache_mode", "shared_prefix_tokens", "request_canaries", "response_words"}},
		{"timings generation, several runs a side",
			[]string{"2026-07-28-agents-a1-multimodal-qualification-evidence/fp8-moe-ab-default-v3-primary-r1.json",
				"2026-07-28-agents-a1-multimodal-qualification-evidence/fp8-moe-ab-default-v3-primary-r2.json",
				"2026-07-28-agents-a1-multimodal-qualification-evidence/fp8-moe-ab-default-v3-primary-r3.json"},
			[]string{"2026-07-28-agents-a1-multimodal-qualification-evidence/fp8-moe-ab-tuned-v3-primary-r1.json",
				"2026-07-28-agents-a1-multimodal-qualification-evidence/fp8-moe-ab-tuned-v3-primary-r2.json",
				"2026-07-28-agents-a1-multimodal-qualification-evidence/fp8-moe-ab-tuned-v3-primary-r3.json"},
			[]string{"prompt_cache_mode", "shared_prefix_tokens", "request_canaries", "response_words"}},
		{"reasoning protocol",
			[]string{"2026-08-01-deepseek-v4-flash-0731-nvfp4-evidence/capacity-dspark-control-low-4k-c1-r3-headroom2048-r1.json"},
			[]string{"2026-08-01-deepseek-v4-flash-0731-nvfp4-evidence/capacity-dspark-control-low-4k-c1-r3-headroom2048-r2.json"},
			[]string{"prompt_cache_mode", "shared_prefix_tokens", "request_canaries", "response_words"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Compare(loadAll(t, tc.old), loadAll(t, tc.new))
			require.NoError(t, err)
			require.Equal(t, tc.unrec, c.Unrecorded)
			require.NotEmpty(t, c.Provenance, "run ids differ at least")
			require.Len(t, c.Metrics, len(comparedMetrics))
		})
	}
	_, err := Compare(loadAll(t, []string{"2026-07-17-gpt-oss-puzzle-qualification-evidence/candidate-capacity-prefix-128.json"}),
		loadAll(t, []string{"2026-07-28-agents-a1-multimodal-qualification-evidence/fp8-moe-ab-default-primary-r1.json"}))
	var nc *NotComparableError
	require.True(t, errors.As(err, &nc), "%v", err)
	require.Contains(t, diffKeys(nc), "measurement_protocol")
}

func loadAll(t *testing.T, names []string) []*artifact.Report {
	var out []*artifact.Report
	for _, n := range names {
		out = append(out, loadReport(t, findingsDir+n))
	}
	return out
}

func diffKeys(e *NotComparableError) []string {
	var ks []string
	for _, d := range e.Diffs {
		ks = append(ks, d.Key)
	}
	return ks
}

// TestCompareSeedAgainstChangedContext: the seed against a copy with
// another context is refused, naming context_tokens with both values.
func TestCompareSeedAgainstChangedContext(t *testing.T) {
	data, err := os.ReadFile(seedPath)
	require.NoError(t, err)
	changed := bytes.Replace(data, []byte(`"context_tokens": 65536,`), []byte(`"context_tokens": 32768,`), 1)
	require.NotEqual(t, data, changed)
	r, err := artifact.Read(bytes.NewReader(changed))
	require.NoError(t, err)
	_, err = Compare([]*artifact.Report{loadReport(t, seedPath)}, []*artifact.Report{r})
	var nc *NotComparableError
	require.True(t, errors.As(err, &nc), "%v", err)
	require.Equal(t, []Difference{{Key: "context_tokens", Old: []string{"65536"}, New: []string{"32768"}, Problem: "differs"}}, nc.Diffs)
}

// TestCompareWithinSide: the runs of one side must be one workload too.
func TestCompareWithinSide(t *testing.T) {
	a, b := syntheticRun(t, 20, 2, 1), syntheticRun(t, 20, 4, 2)
	_, err := Compare([]*artifact.Report{a, b}, []*artifact.Report{a})
	var nc *NotComparableError
	require.True(t, errors.As(err, &nc), "%v", err)
	require.Equal(t, [2]string{"old run 1", "old run 2"}, nc.Sides)
	require.Equal(t, []string{"concurrency"}, diffKeys(nc))
}

// TestCompareSignificance: five runs a side whose TTFT differs clearly
// test significant; identical decode rates do not; one run a side is
// not tested and says why.
func TestCompareSignificance(t *testing.T) {
	side := func(scale float64, seeds ...uint64) []*artifact.Report {
		var rs []*artifact.Report
		for _, s := range seeds {
			r := syntheticRun(t, 40, 4, s)
			for i := range r.RequestTimings {
				row := &r.RequestTimings[i]
				row.TTFTMS *= scale
				row.E2EMS += row.TTFTMS * (scale - 1) / scale
				row.VisibleGenerationMS = row.E2EMS - row.TTFTMS
			}
			require.NoError(t, r.Recompute())
			rs = append(rs, r)
		}
		return rs
	}
	c, err := Compare(side(1, 1, 2, 3, 4, 5), side(2, 6, 7, 8, 9, 10))
	require.NoError(t, err)
	byName := map[string]MetricDelta{}
	for _, m := range c.Metrics {
		byName[m.Name] = m
	}
	ttft := byName["TTFT p50"]
	require.True(t, ttft.Tested)
	require.True(t, ttft.Significant, "p=%v", ttft.P)
	require.InDelta(t, 100, ttft.DeltaPct, 15)
	fail := byName["failures"]
	require.True(t, fail.Tested)
	require.False(t, fail.Significant)
	require.Equal(t, 0.0, fail.DeltaPct)

	var out bytes.Buffer
	require.NoError(t, WriteComparison(&out, c))
	require.Regexp(t, `TTFT p50 +ms +\d+ +\d+ +\+\d+\.\d% +p=0\.\d+, significant \(lower is better\)`, out.String())
	require.Regexp(t, `failures +requests +\d+ +\d+ +\+0\.0% +~ \(p=1\.00, not significant\)`, out.String())

	one, err := Compare(side(1, 1), side(2, 6))
	require.NoError(t, err)
	for _, m := range one.Metrics {
		require.False(t, m.Tested, m.Name)
	}
	out.Reset()
	require.NoError(t, WriteComparison(&out, one))
	require.Contains(t, out.String(), "significance needs >= 2 runs per side")
}

func TestCompareErrors(t *testing.T) {
	seed := []*artifact.Report{loadReport(t, seedPath)}
	_, err := Compare(nil, seed)
	require.ErrorContains(t, err, "no old runs")
	_, err = Compare(seed, []*artifact.Report{nil})
	require.ErrorContains(t, err, "new run 1: nil report")
}
