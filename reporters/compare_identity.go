package reporters

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// This file decides whether two runs measured one workload: the identity
// keys of the artifact (what was sent), the rules their values follow, and
// the keys that only describe the setup under test (provenance).

// NotComparableError is the error of Compare when runs are not one
// workload. It names every key at fault.
type NotComparableError struct {
	// Sides names the two runs or sides compared: {"old", "new"}, or two
	// runs of one side ({"old run 1", "old run 2"}).
	Sides [2]string
	// Runs are the two runs compared, each as its side (0 old, 1 new) and
	// its index in that side's list: the first run of each side, or the
	// first and another run of one side.
	Runs [2][2]int
	// Files, when set, are the files of the two runs (a caller that read
	// them sets it, from Runs), which the message names beside Sides.
	Files [2]string
	// Diffs are the identity keys on which the two disagree, or that one
	// of them lacks or records in a malformed way, each with its Problem.
	Diffs []Difference
}

var _ error = (*NotComparableError)(nil)

// Error lists every key at fault with both values, one per line, Printable.
func (e *NotComparableError) Error() string {
	var b strings.Builder
	side0, side1 := Printable(e.Sides[0]), Printable(e.Sides[1])
	name0, name1 := side0, side1
	if e.Files != [2]string{} {
		name0, name1 = fmt.Sprintf("%s (%s)", side0, Printable(e.Files[0])), fmt.Sprintf("%s (%s)", side1, Printable(e.Files[1]))
	}
	fmt.Fprintf(&b, "not comparable: %s and %s are not one workload (%d identity key", name0, name1, len(e.Diffs))
	if len(e.Diffs) != 1 {
		b.WriteString("s")
	}
	b.WriteString("):")
	for _, d := range e.Diffs {
		// Values are JSON, which leaves C1 controls and bidi overrides raw.
		fmt.Fprintf(&b, "\n  %s: %s %s, %s %s (%s)", Printable(d.Key), side0, Printable(d.Old[0]),
			side1, Printable(d.New[0]), Printable(d.Problem))
	}
	return b.String()
}

// absent is how a Difference shows a key the artifact does not have.
const absent = "absent"

// checkFunc returns "" when v is a valid value of its key, else the rule
// it breaks.
type checkFunc func(v any) string

func intAtLeast(min int64) checkFunc {
	return func(v any) string {
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil && i >= min {
				return ""
			}
		}
		return fmt.Sprintf("want an integer >= %d", min)
	}
}

func nullable(c checkFunc) checkFunc {
	return func(v any) string {
		if v == nil {
			return ""
		}
		if why := c(v); why != "" {
			return why + " or null"
		}
		return ""
	}
}

func oneOf(values ...string) checkFunc {
	return func(v any) string {
		if s, ok := v.(string); ok && slices.Contains(values, s) {
			return ""
		}
		return "want one of " + strings.Join(values, ", ")
	}
}

func nonEmptyString(v any) string {
	if s, ok := v.(string); ok && s != "" {
		return ""
	}
	return "want a non-empty string"
}

func isBool(v any) string {
	if _, ok := v.(bool); ok {
		return ""
	}
	return "want true or false"
}

func isNumber(v any) string {
	if _, ok := v.(json.Number); ok {
		return ""
	}
	return "want a number"
}

func positiveNumber(v any) string {
	if n, ok := v.(json.Number); ok {
		if f, err := n.Float64(); err == nil && f > 0 {
			return ""
		}
	}
	return "want a number > 0"
}

// contextDistribution checks a context_distribution: context -> count.
func contextDistribution(v any) string {
	m, ok := v.(map[string]any)
	if ok {
		for k, c := range m {
			if _, err := strconv.Atoi(k); err != nil || intAtLeast(1)(c) != "" {
				ok = false
			}
		}
	}
	if !ok || len(m) == 0 {
		return "want an object of context tokens to request counts >= 1"
	}
	return ""
}

// identityKey is one workload identity key: a dotted path into the
// artifact and the rule of its values.
type identityKey struct {
	path  string
	check checkFunc
}

// identityKeys lists the identity keys of a pair of runs: what the client
// sent. Some are conditional on the pair: the context seed and
// distribution only when contexts are sampled (context_tokens null); the
// output policy only when a response length was requested; a sampling
// parameter's value only when it was sent; the arrival rate only for open
// loop, its burstiness only for a gamma process.
//
// acrossAPI leaves out the API (anvil_go.run.api): a comparison across
// APIs compares one workload sent over two (see CompareAcrossAPIs).
func identityKeys(a, b map[string]any, acrossAPI bool) []identityKey {
	either := func(path string, pred func(v any) bool) bool {
		va, _ := lookup(a, path)
		vb, _ := lookup(b, path)
		return pred(va) || pred(vb)
	}
	isNull := func(v any) bool { return v == nil }
	keys := []identityKey{
		{"schema", nonEmptyString}, // the reader accepts only the v1 schema
	}
	// A raw prompt has no reasoning channel: a completions run is
	// capacity-v3 whatever the model, which differs by definition from
	// another API's capacity-v4-reasoning (byDefinitionRawPrompt).
	isCompletions := func(v any) bool { return v == "completions" }
	if !acrossAPI || !either(apiKey, isCompletions) {
		keys = append(keys, identityKey{"measurement_protocol", nonEmptyString})
	}
	if !acrossAPI {
		keys = append(keys, identityKey{apiKey, oneOf(artifact.APIs()...)})
	}
	keys = append(keys, identityKey{"context_tokens", nullable(intAtLeast(1))})
	if either("context_tokens", isNull) {
		keys = append(keys, identityKey{"context_seed", intAtLeast(0)},
			identityKey{"context_distribution", contextDistribution})
	}
	keys = append(keys, identityKey{"max_context_tokens", nullable(intAtLeast(1))})
	// A closed-loop Duration campaign's request count is a result, not a
	// setting: what was asked is the time budget.
	if either(durationKey, func(v any) bool { return v != nil }) {
		keys = append(keys, identityKey{durationKey, positiveNumber})
	} else {
		keys = append(keys, identityKey{"requests", intAtLeast(1)})
	}
	keys = append(keys,
		identityKey{"concurrency", intAtLeast(1)},
		identityKey{"max_tokens", intAtLeast(1)},
		identityKey{"prompt_cache_mode", oneOf("shared", "unique")},
		identityKey{"shared_prefix_tokens", intAtLeast(0)},
		identityKey{"serve_flags.shared_prefix_burst", isBool},
		identityKey{"serve_flags.thinking_mode", nonEmptyString},
		identityKey{"serve_flags.no_thinking", isBool},
		identityKey{"serve_flags.reasoning_effort", nullable(nonEmptyString)},
	)
	params := map[string]bool{}
	for _, doc := range []map[string]any{a, b} {
		if s, ok := doc["sampling"].(map[string]any); ok {
			for p := range s {
				params[p] = true
			}
		}
	}
	for _, p := range slices.Sorted(maps.Keys(params)) {
		keys = append(keys, identityKey{"sampling." + p + ".sent", isBool})
		if either("sampling."+p+".sent", func(v any) bool { return v == true }) {
			keys = append(keys, identityKey{"sampling." + p + ".effective_request", nullable(isNumber)})
		}
	}
	keys = append(keys,
		identityKey{"request_canaries", isBool},
		identityKey{"response_words", intAtLeast(0)},
	)
	if either("response_words", func(v any) bool { return intAtLeast(1)(v) == "" }) {
		keys = append(keys, identityKey{"controlled_output_policy", oneOf("observe", "strict")})
	}
	keys = append(keys, identityKey{arrivalProcessKey, oneOf(closedLoop, "constant", "poisson", "gamma")})
	if either(arrivalProcessKey, func(v any) bool { return v != closedLoop }) {
		keys = append(keys, identityKey{"anvil_go.arrival.rate_rps", positiveNumber})
	}
	if either(arrivalProcessKey, func(v any) bool { return v == "gamma" }) {
		keys = append(keys, identityKey{"anvil_go.arrival.burstiness", positiveNumber})
	}
	// Exact sizing sends other prompts than the reference's.
	keys = append(keys, identityKey{promptSizingKey, oneOf("reference", "exact")})
	// Fields merged into every request body (Target.ExtraBody) change what
	// the server does (llama.cpp's cache_prompt, a grammar).
	if either(extraBodyKey, func(v any) bool { return v != nil }) {
		keys = append(keys, identityKey{extraBodyKey, stringObject})
	}
	return append(keys, workloadKeys(either)...)
}

// workloadKeys are the identity keys of a trace replay or sessions
// (anvil_go.workload), when either run has one: its kind, the trace by
// its SHA-256 and the replay options, the sessions' spec and users. Two
// replays of different traces, or of one trace at two speed-ups, never
// compare; nor does a replay with a synthetic run.
func workloadKeys(either func(string, func(any) bool) bool) []identityKey {
	present := func(v any) bool { return v != nil }
	if !either("anvil_go.workload", present) {
		return nil
	}
	keys := []identityKey{{workloadKindKey, oneOf(syntheticWorkload, "trace", "sessions")}}
	if either("anvil_go.workload.trace", present) {
		const t = "anvil_go.workload.trace."
		keys = append(keys,
			identityKey{t + "sha256", nonEmptyString},
			identityKey{t + "format", oneOf("mooncake", "azure", "jsonl")},
			identityKey{t + "rows", intAtLeast(0)},
			identityKey{t + "speed_up", positiveNumber},
			identityKey{t + "window_start_ms", isNumber},
			identityKey{t + "window_end_ms", nullable(isNumber)},
			identityKey{t + "first", intAtLeast(0)},
		)
	}
	if either("anvil_go.workload.sessions", present) {
		const s = "anvil_go.workload.sessions."
		keys = append(keys,
			identityKey{s + "spec", nullable(nonEmptyString)},
			identityKey{s + "sessions", intAtLeast(1)},
			identityKey{s + "users", nullable(intAtLeast(1))},
		)
	}
	return keys
}

// The workload's kind: a run without anvil_go.workload (every reference
// artifact, every synthetic anvil-go run) reads as syntheticWorkload.
const (
	workloadKindKey   = "anvil_go.workload.kind"
	syntheticWorkload = "synthetic"
)

// durationKey is the time budget of a closed-loop Duration campaign.
const durationKey = "anvil_go.run.duration_ms"

// The arrival process of a run: a run without anvil_go.arrival (every
// reference artifact, every closed-loop anvil-go run) reads as closedLoop.
const (
	arrivalProcessKey = "anvil_go.arrival.process"
	closedLoop        = "closed-loop"
)

// provenanceKeys describe the setup under test; they may differ between
// compared runs and are shown, never refused. Members of serve_flags that
// are not identity keys are provenance too.
var provenanceKeys = []string{
	"model", "engine", "gpu", "tier", "manifest", "source_recipe", "configuration_fingerprint",
	"base_url", "clock_domain_id", "run_id", "started_at", "finished_at",
}

// apiKey is the API a run spoke; a run without anvil_go.run.api (every
// reference artifact, every anvil-go run before it) reads as
// artifact.APIChat.
const apiKey = "anvil_go.run.api"

// promptSizingKey is how the prompts were sized; a run without
// anvil_go.prompt_sizing (every reference artifact) reads as "reference".
const promptSizingKey = "anvil_go.prompt_sizing.method"

// lookup returns the value at a dotted path of doc and whether it is
// there. The arrival process is closedLoop when anvil_go.arrival is absent
// or null, the prompt sizing "reference" when anvil_go.prompt_sizing is,
// the workload's kind syntheticWorkload when anvil_go.workload is, the API
// artifact.APIChat when anvil_go.run.api is.
func lookup(doc map[string]any, path string) (any, bool) {
	if path == arrivalProcessKey {
		arr, _ := lookup(doc, "anvil_go.arrival")
		if arr == nil {
			return closedLoop, true
		}
	}
	if path == workloadKindKey {
		if w, _ := lookup(doc, "anvil_go.workload"); w == nil {
			return syntheticWorkload, true
		}
	}
	if path == promptSizingKey {
		if ps, _ := lookup(doc, "anvil_go.prompt_sizing"); ps == nil {
			return "reference", true
		}
	}
	if path == apiKey {
		if run, _ := lookup(doc, "anvil_go.run"); run == nil {
			return artifact.APIChat, true
		} else if m, ok := run.(map[string]any); ok && m["api"] == nil {
			return artifact.APIChat, true
		}
	}
	var cur any = doc
	for _, seg := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// canonical is v as compact JSON, numbers in one form (0.90 and 0.9 are
// one value), for comparing and showing.
func canonical(v any) string {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return strconv.FormatInt(i, 10)
		}
		if f, err := v.Float64(); err == nil {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		return v.String()
	case map[string]any:
		var b strings.Builder
		b.WriteString("{")
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "%q:%s", k, canonical(v[k]))
		}
		b.WriteString("}")
		return b.String()
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = canonical(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

// identityResult is the outcome of matching two runs.
type identityResult struct {
	shared     []string // "key=value" of the keys both record, equal
	unrecorded []string // identity keys neither records
	diffs      []Difference
}

// matchIdentity compares the identity of two runs, named by sides
// (leaving the API out acrossAPI).
func matchIdentity(a, b map[string]any, sides [2]string, acrossAPI bool) identityResult {
	var res identityResult
	for _, k := range identityKeys(a, b, acrossAPI) {
		va, pa := lookup(a, k.path)
		vb, pb := lookup(b, k.path)
		vals := [2]string{absent, absent}
		if pa {
			vals[0] = canonical(va)
		}
		if pb {
			vals[1] = canonical(vb)
		}
		switch {
		case !pa && !pb:
			// Both artifacts predate the key: the same generation.
			res.unrecorded = append(res.unrecorded, k.path)
			continue
		case !pa || !pb:
			missing := sides[0]
			if pa {
				missing = sides[1]
			}
			res.diffs = append(res.diffs, keyDiff(k.path, vals, "absent in "+missing))
			continue
		}
		bad := false
		for i, v := range []any{va, vb} {
			if why := k.check(v); why != "" {
				res.diffs = append(res.diffs, keyDiff(k.path, vals, "malformed in "+sides[i]+": "+why))
				bad = true
			}
		}
		switch {
		case bad:
		case vals[0] != vals[1]:
			res.diffs = append(res.diffs, keyDiff(k.path, vals, "differs"))
		default:
			res.shared = append(res.shared, k.path+"="+vals[0])
		}
	}
	return res
}

// keyDiff is the Difference of one identity key between two runs.
func keyDiff(key string, vals [2]string, problem string) Difference {
	return Difference{Key: key, Old: []string{vals[0]}, New: []string{vals[1]}, Problem: problem}
}

// fakeEnginePrefix begins the engine that package anviltest records for a
// run against its embedded fake server ("anvil-fakeserver-reasoning").
const fakeEnginePrefix = "anvil-fakeserver-"

// embeddedFake is the base URL provenance shows for such a run, as
// anviltest's target configuration names it.
const embeddedFake = "embedded-fake"

// provenanceOf returns the provenance values of doc by key, serve flags
// outside the identity included.
func provenanceOf(doc map[string]any) map[string]string {
	out := map[string]string{}
	for _, k := range provenanceKeys {
		if v, ok := lookup(doc, k); ok {
			out[k] = canonical(v)
		}
	}
	if e, _ := lookup(doc, "engine"); strings.HasPrefix(fmt.Sprint(e), fakeEnginePrefix) {
		// The embedded fake listens on a new port every run: its address
		// tells runs apart by nothing.
		if _, ok := out["base_url"]; ok {
			out["base_url"] = canonical(embeddedFake)
		}
	}
	if sf, ok := doc["serve_flags"].(map[string]any); ok {
		for k, v := range sf {
			switch k {
			case "shared_prefix_burst", "thinking_mode", "no_thinking", "reasoning_effort":
			default:
				out["serve_flags."+k] = canonical(v)
			}
		}
	}
	return out
}
