package capacity

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/field"
	"github.com/anvilbench/anvil/capacity/internal/probe"
)

// FieldError is the module's one error type for a bad input value: a
// field of a Workload, Target, SLO or SearchSpec here, a trace row's column
// or a session spec in the packages that read them. Its message names the
// package, where the value was, the field, the value and what is allowed
// (ExampleFieldError):
//
//	capacity: Workload.Concurrency = 20000: must be in 1..16384
//	trace: conv_mooncake.jsonl:2: input_length = "-3": must be an integer in [1, 10000000]
//
// errors.As finds a *FieldError in the error of every package of the
// module that reports a bad value (trace, session, servermetrics,
// anviltest's variables, the engine's own arrival and stall rules), and
// errors.Is its Kind. Every FieldError of package capacity has Pkg "capacity" and Kind
// ErrInvalidConfig, so errors.Is(err, ErrInvalidConfig) holds for it.
type FieldError struct {
	// Pkg is the package reporting the error, the message's prefix
	// ("capacity", "trace"); empty for none.
	Pkg string
	// Where locates the value when it sits in a file ("conv.jsonl:17");
	// empty otherwise.
	Where string
	// Field names the value: "Workload.Concurrency", "input_length",
	// "Spec.Rate".
	Field string
	// Value is the offending value (never a secret); nil shows none.
	Value any
	// Rule says what is allowed, as a phrase: "must be in 1..16384".
	Rule string
	// Kind is the sentinel the error matches with errors.Is (for example
	// ErrInvalidConfig), or nil.
	Kind error
	// Err is the underlying cause (a syntax or I/O error), or nil.
	Err error
}

// FieldError has the fields of package internal/field's Error, which the
// other packages return; the conversions of its methods keep the two
// identical, and each type's As converts to the other for errors.As.
var _ error = (*FieldError)(nil)

// Error implements error: "pkg: where: Field = Value: Rule: Err", each
// part present only when set.
func (e *FieldError) Error() string { return (*field.Error)(e).Error() }

// Unwrap returns Kind and Err, those that are set, for errors.Is and
// errors.As.
func (e *FieldError) Unwrap() []error { return (*field.Error)(e).Unwrap() }

// As lets errors.As find e as the engine's internal field error (what its
// own packages match on); users match *FieldError itself.
func (e *FieldError) As(target any) bool { return (*field.Error)(e).As(target) }

// badField is the FieldError of a configuration field: rule says what is
// allowed, as a phrase ("must be in 1..16384").
func badField(name string, value any, rule string) *FieldError {
	return &FieldError{Pkg: "capacity", Field: name, Value: value, Rule: rule, Kind: ErrInvalidConfig}
}

// Patterns of the Target fields that name things.
var (
	envNamePattern    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerNamePattern = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// The values Workload.ThinkingMode and Workload.ReasoningEffort may take
// (capacity/PROTOCOL.md#artifact-keys, serve_flags), in the order errors list them.
var (
	thinkingModes    = [...]ThinkingMode{thinkingDefault, thinkingEnabled, thinkingDisabled, thinkingUnsupported}
	reasoningEfforts = [...]ReasoningEffort{reasoningNone, reasoningMinimal, reasoningLow, reasoningMedium, reasoningHigh, reasoningXHigh, reasoningMax}
)

// joinValues lists allowed values for an error: "a, b, c".
func joinValues[S ~string](vs []S) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return strings.Join(out, ", ")
}

// validator collects every problem of a configuration.
type validator struct{ errs []error }

func (v *validator) add(field string, value any, rule string, args ...any) {
	v.errs = append(v.errs, badField(field, value, fmt.Sprintf(rule, args...)))
}

func (v *validator) intRange(field string, value, lo, hi int) {
	if value < lo || value > hi {
		v.add(field, value, "must be in %d..%d", lo, hi)
	}
}

// check records err, a *FieldError or nil.
func (v *validator) check(err error) {
	if err != nil {
		v.errs = append(v.errs, err)
	}
}

func (v *validator) err() error { return errors.Join(v.errs...) }

// clientWrittenHeader says, for a header Go's HTTP client writes from the
// request itself and silently ignores in Request.Header, where its value
// comes from instead; "" for any other header. Target.Headers refuses
// them rather than send something else than they say.
func clientWrittenHeader(name string) string {
	switch http.CanonicalHeaderKey(name) {
	case "Host":
		return "the host is Target.BaseURL's; to reach a virtual host at another address, give Target.HTTPClient a transport whose DialContext connects there"
	case "Content-Length", "Transfer-Encoding", "Trailer":
		return "the body's framing is the client's"
	}
	return ""
}

// timeoutValid reports whether Workload.Timeout is in its range, the
// bound of the other limits.
func (w Workload) timeoutValid() bool { return w.Timeout > 0 && w.Timeout <= maxTimeout }

// validate checks every bound of a Workload whose defaults are filled in.
func (w Workload) validate() error {
	var v validator
	v.intRange("Workload.Requests", w.Requests, 1, maxRequests)
	v.intRange("Workload.Concurrency", w.Concurrency, 1, maxConcurrency)
	v.intRange("Workload.Burst", w.Burst, 0, maxBurst)
	if w.ContextTokens != 0 && (w.ContextTokens < minContextTokens || w.ContextTokens > maxContextTokens) {
		v.add("Workload.ContextTokens", w.ContextTokens, "must be 0 (sampled) or in %d..%d", minContextTokens, maxContextTokens)
	}
	v.intRange("Workload.MaxTokens", w.MaxTokens, 1, maxMaxTokens)
	if s := w.SharedPrefixTokens; s != None && (s < 0 || s > maxSharedPrefixTokens) {
		v.add("Workload.SharedPrefixTokens", s, "must be in 0..%d (0: %d) or None (%d: no shared prefix)", maxSharedPrefixTokens, defaultSharedPrefixTokens, None)
	}
	v.intRange("Workload.ResponseWords", w.ResponseWords, 0, maxResponseWords)
	v.intRange("Workload.Warmup", w.Warmup, 0, maxRequests)
	if w.ProbeRate != 0 && !(w.ProbeRate >= probe.MinRate && w.ProbeRate <= probe.MaxRate) {
		v.add("Workload.ProbeRate", w.ProbeRate, "must be 0 (no probes) or in %g..%g probes per second", probe.MinRate, probe.MaxRate)
	}
	if w.WarmupFor < 0 || w.WarmupFor > maxWarmupFor {
		v.add("Workload.WarmupFor", w.WarmupFor, "must be in 0..%v", maxWarmupFor)
	}
	if w.Warmup > 0 && (w.WarmupFor > 0 || w.WarmupSteady) {
		v.add("Workload.Warmup", w.Warmup, "must be 0 with WarmupFor or WarmupSteady: the warm-up is by count, by time or until steady")
	}
	v.intRange("Workload.MaxFailures", w.MaxFailures, 0, maxRequests)
	w.validateSeams(&v)
	w.validateShard(&v)
	if !w.timeoutValid() {
		v.add("Workload.Timeout", w.Timeout, "must be in (0s, %v]", maxTimeout)
	}
	// The limits bounded by Timeout are checked against a valid one only, so
	// that a bad Timeout is reported once, as the root cause; StallTimeout
	// equal to it is its default (0 means Timeout).
	switch {
	case w.timeoutValid() && (w.StallTimeout <= 0 || w.StallTimeout > w.Timeout):
		v.add("Workload.StallTimeout", w.StallTimeout, "must be in (0s, Timeout = %v]", w.Timeout)
	case !w.timeoutValid() && w.StallTimeout != w.Timeout && w.StallTimeout < 0:
		v.add("Workload.StallTimeout", w.StallTimeout, "must be in (0s, Timeout]")
	}
	if w.Duration < 0 || w.Duration > maxDuration {
		v.add("Workload.Duration", w.Duration, "must be in 0s..%v", maxDuration)
	}
	if w.ContextTokens > 0 && w.Requests >= 1 && w.Requests*w.ContextTokens > maxPlannedPromptTokens {
		v.add("Workload.Requests", w.Requests, "times ContextTokens = %d must be at most %d planned prompt tokens (at most %d requests)",
			w.ContextTokens, maxPlannedPromptTokens, maxPlannedPromptTokens/w.ContextTokens)
	}
	switch w.PromptCacheMode {
	case promptCacheShared, promptCacheUnique:
	default:
		v.add("Workload.PromptCacheMode", w.PromptCacheMode, "must be %q or %q", promptCacheShared, promptCacheUnique)
	}
	if w.OmitUniqueNonce && w.PromptCacheMode != promptCacheUnique {
		v.add("Workload.OmitUniqueNonce", true, "needs PromptCacheMode %q", promptCacheUnique)
	}
	switch w.ControlledOutputPolicy {
	case policyObserve:
	case policyStrict:
		if w.ResponseWords <= 0 {
			v.add("Workload.ControlledOutputPolicy", w.ControlledOutputPolicy, "needs ResponseWords > 0")
		}
	default:
		v.add("Workload.ControlledOutputPolicy", w.ControlledOutputPolicy, "must be %q or %q", policyObserve, policyStrict)
	}
	if w.RequestCanaries && w.MaxTokens < minCanaryMaxTokens {
		v.add("Workload.MaxTokens", w.MaxTokens, "must be at least %d with RequestCanaries", minCanaryMaxTokens)
	}
	if w.Burst > 0 {
		if w.Requests != w.Burst {
			v.add("Workload.Requests", w.Requests, "must equal Burst = %d (or be 0)", w.Burst)
		}
		if w.Concurrency != w.Burst {
			v.add("Workload.Concurrency", w.Concurrency, "must equal Burst = %d (or be 0)", w.Burst)
		}
		if w.SharedPrefixTokens == None {
			v.add("Workload.SharedPrefixTokens", w.SharedPrefixTokens, "must not be None with Burst (a burst uses the shared prefix)")
		}
		if w.PromptCacheMode != promptCacheShared {
			v.add("Workload.PromptCacheMode", w.PromptCacheMode, "must be %q with Burst (a burst uses the shared prefix)", promptCacheShared)
		}
	}
	switch {
	case !slices.Contains(thinkingModes[:], w.ThinkingMode):
		v.add("Workload.ThinkingMode", w.ThinkingMode, "must be one of %s", joinValues(thinkingModes[:]))
	case w.ThinkingMode != thinkingDefault && w.ReasoningEffort != "":
		v.add("Workload.ReasoningEffort", w.ReasoningEffort, "may not be combined with ThinkingMode %q (use one thinking control)", w.ThinkingMode)
	}
	if w.ReasoningEffort != "" && !slices.Contains(reasoningEfforts[:], w.ReasoningEffort) {
		v.add("Workload.ReasoningEffort", w.ReasoningEffort, "must be empty or one of %s", joinValues(reasoningEfforts[:]))
	}
	if t := w.Temperature; t != nil && (math.IsNaN(*t) || math.IsInf(*t, 0) || *t < 0) {
		v.add("Workload.Temperature", t, "must be finite and >= 0")
	}
	if f := w.EncodingFormat; f != "" && f != "float" && f != "base64" {
		v.add("Workload.EncodingFormat", f, "must be float or base64 (empty: float)")
	}
	if p := w.TopP; p != nil && !(*p > 0 && *p <= 1) { // NaN fails both
		v.add("Workload.TopP", p, "must be in (0, 1]")
	}
	w.validateChunksAndSizing(&v)
	w.validateArrival(&v)
	return v.err()
}

// validate checks a Target whose defaults are filled in.
func (t Target) validate() error {
	var v validator
	if t.BaseURL == "" {
		v.add("Target.BaseURL", "", "must be an http or https URL such as http://localhost:8000/v1")
	} else if strings.TrimSpace(t.BaseURL) != t.BaseURL {
		v.add("Target.BaseURL", client.DisplayURL(t.BaseURL), "has leading or trailing white space: remove it")
	} else if !strings.Contains(t.BaseURL, "://") {
		v.add("Target.BaseURL", client.DisplayURL(t.BaseURL), "has no scheme: add http:// (or https://), as in %s", "http://"+client.DisplayURL(t.BaseURL))
	} else if u, err := url.Parse(t.BaseURL); err != nil {
		v.add("Target.BaseURL", client.DisplayURL(t.BaseURL), "does not parse")
	} else if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.ForceQuery ||
		strings.Contains(t.BaseURL, "#") { // url.Parse drops an empty fragment; the paths appended after it would not be sent
		v.add("Target.BaseURL", client.DisplayURL(t.BaseURL), "must be an http or https URL with a host and no query or fragment")
	}
	v.intRange("Target.MaxModelLen", t.MaxModelLen, 0, maxContextTokens)
	v.check(checkClockDomainID(t.ClockDomainID))
	v.check(checkConfigurationFingerprint(t.ConfigurationFingerprint))
	if m := t.Margin; m != None && (m < 0 || m > maxMargin) {
		v.add("Target.Margin", m, "must be in 0..%d (0: %d) or None (%d: no margin)", maxMargin, defaultMargin, None)
	}
	t.validateMetrics(&v)
	if t.APIKeyEnv != "" && !envNamePattern.MatchString(t.APIKeyEnv) {
		v.add("Target.APIKeyEnv", t.APIKeyEnv, "must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)")
	}
	for _, name := range t.HeaderNames() {
		switch {
		case !headerNamePattern.MatchString(name):
			v.add("Target.Headers", name, "is not a valid header name")
		case name == "Authorization" && t.APIKeyEnv != "":
			v.add("Target.Headers", name, "may not be set together with APIKeyEnv")
		case clientWrittenHeader(name) != "":
			v.add("Target.Headers", name, "is written by the HTTP client from the request, which ignores a value in Headers: %s", clientWrittenHeader(name))
		case slices.ContainsFunc(t.Headers.Values(name), hasControlByte):
			v.add("Target.Headers", name, "has a value with a control character such as a trailing newline, which HTTP refuses (the value is not shown)")
		}
	}
	if t.API != "" && !slices.Contains(artifact.APIs(), t.API) {
		v.add("Target.API", t.API, "must be one of %s (empty: chat)", strings.Join(artifact.APIs(), ", "))
	}
	for _, k := range slices.Sorted(maps.Keys(t.ExtraBody)) {
		if owner, ok := reservedBy(t.apiOf(), k); ok {
			v.add("Target.ExtraBody", k, "is set by %s and may not be overridden", owner)
			continue
		}
		if _, err := json.Marshal(t.ExtraBody[k]); err != nil {
			v.add("Target.ExtraBody", k, "has a value that does not encode as JSON: %v", err)
		}
	}
	return v.err()
}

// hasControlByte reports whether s holds a byte HTTP refuses in a header
// value: a control character other than tab (CR, LF, NUL...) or DEL.
func hasControlByte(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f })
}
