package capacity

import (
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

func TestWorkloadDefaults(t *testing.T) {
	got, err := Workload{}.Resolved()
	require.NoError(t, err)
	want := Workload{
		Requests: defaultRequests, Concurrency: defaultConcurrency, MaxTokens: defaultMaxTokens,
		SharedPrefixTokens: defaultSharedPrefixTokens, PromptCacheMode: promptCacheShared,
		ControlledOutputPolicy: policyObserve, ThinkingMode: thinkingDefault,
		Timeout: defaultTimeout, StallTimeout: defaultTimeout, PromptSizing: promptSizingReference,
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Workload{}), cmpopts.IgnoreFields(Workload{}, "Progress")); diff != "" {
		t.Fatalf("Resolved() (-want +got):\n%s", diff)
	}
	require.Equal(t, 60, defaultRequests)
	require.Equal(t, 20, defaultConcurrency)
	require.Equal(t, 8000, defaultSharedPrefixTokens)
	require.Equal(t, 1024, defaultMaxTokens)
	require.Equal(t, 64, referenceMaxTokens, "the reference tool's default")
	require.Equal(t, 900*time.Second, defaultTimeout)

	// None stays None; the effective prefix is none.
	none, err := Workload{SharedPrefixTokens: None}.Resolved()
	require.NoError(t, err)
	require.Equal(t, None, none.SharedPrefixTokens)
	require.Equal(t, 0, none.sharedPrefixTokens())
	require.Equal(t, defaultSharedPrefixTokens, got.sharedPrefixTokens())
}

// TestResolvedIdempotent: resolving a resolved Workload or Target gives it
// back unchanged, for zero values (the defaults), None and explicit values
// alike: resolution never rewrites a field into a value that means
// something else when resolved again.
func TestResolvedIdempotent(t *testing.T) {
	workloads := []Workload{
		{},
		{SharedPrefixTokens: None},
		{SharedPrefixTokens: 1},
		{SharedPrefixTokens: maxSharedPrefixTokens, PromptCacheMode: promptCacheUnique},
		{PromptCacheMode: promptCacheUnique, SharedPrefixTokens: None, ContextTokens: 64},
		{Burst: 8},
		{Duration: time.Minute},
		{Duration: time.Minute, ContextTokens: 65536},
		{Timeout: 30 * time.Second},
		{Rate: 5},
		{Rate: 5, Burstiness: 0.5},
		{Requests: 7, Concurrency: 3, MaxTokens: 16, RequestCanaries: true, ResponseWords: 4, ControlledOutputPolicy: policyStrict},
	}
	ignore := cmpopts.IgnoreFields(Workload{}, "Progress")
	for i, w := range workloads {
		once, err := w.Resolved()
		require.NoError(t, err, "workload %d", i)
		twice, err := once.Resolved()
		require.NoError(t, err, "workload %d", i)
		if diff := cmp.Diff(once, twice, ignore); diff != "" {
			t.Errorf("workload %d %+v: resolved twice differs from once (-once +twice):\n%s", i, w, diff)
		}
		require.Equal(t, once.sharedPrefixTokens(), twice.sharedPrefixTokens(), "workload %d", i)
	}

	const base = "http://h/v1/"
	targets := []Target{
		{BaseURL: base},
		{BaseURL: base, Margin: None},
		{BaseURL: base, Margin: 1},
		{BaseURL: base, Margin: maxMargin, MaxModelLen: 8192},
		{BaseURL: base, Headers: http.Header{"X-Tenant": {"a"}}, ExtraBody: map[string]any{"ignore_eos": true}},
	}
	for i, tg := range targets {
		once, err := tg.Resolved()
		require.NoError(t, err, "target %d", i)
		twice, err := once.Resolved()
		require.NoError(t, err, "target %d", i)
		if diff := cmp.Diff(once, twice, cmpopts.IgnoreFields(Target{}, "HTTPClient")); diff != "" {
			t.Errorf("target %d: resolved twice differs from once (-once +twice):\n%s", i, diff)
		}
		require.Equal(t, once.margin(), twice.margin(), "target %d", i)
	}
	none, err := Target{BaseURL: base, Margin: None}.Resolved()
	require.NoError(t, err)
	require.Equal(t, None, none.Margin, "None stays None")
	require.Equal(t, 0, none.margin(), "and keeps no margin")
	def, err := Target{BaseURL: base}.Resolved()
	require.NoError(t, err)
	require.Equal(t, defaultMargin, def.margin())
}

func TestWorkloadDerivedDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   Workload
		want func(Workload) bool
	}{
		{"burst fills requests and concurrency", Workload{Burst: 16},
			func(w Workload) bool { return w.Requests == 16 && w.Concurrency == 16 && w.SharedPrefixTokens == 8000 }},
		{"duration defaults requests to the maximum", Workload{Duration: time.Minute},
			func(w Workload) bool { return w.Requests == maxRequests }},
		{"duration with a fixed context keeps within the aggregate cap", Workload{Duration: time.Minute, ContextTokens: 65536},
			func(w Workload) bool { return w.Requests == 1024 }},
		{"stall timeout defaults to the timeout", Workload{Timeout: 30 * time.Second},
			func(w Workload) bool { return w.StallTimeout == 30*time.Second }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.Resolved()
			require.NoError(t, err)
			require.True(t, tt.want(got), "%+v", got)
		})
	}
}

func TestWorkloadBounds(t *testing.T) {
	tests := []struct {
		name    string
		w       Workload
		wantErr string // "" means valid
	}{
		{"requests min", Workload{Requests: 1}, ""},
		{"requests max", Workload{Requests: maxRequests, ContextTokens: maxPlannedPromptTokens / maxRequests}, ""},
		{"requests negative", Workload{Requests: -1}, "Workload.Requests = -1: must be in 1..16384"},
		{"requests over", Workload{Requests: 16385}, "Workload.Requests = 16385: must be in 1..16384"},
		{"concurrency max", Workload{Concurrency: 256}, ""},
		{"concurrency over", Workload{Concurrency: 16385}, "Workload.Concurrency = 16385: must be in 1..16384"},
		{"concurrency above the reference", Workload{Concurrency: 257}, ""},
		{"concurrency negative", Workload{Concurrency: -3}, "Workload.Concurrency = -3: must be in 1..16384"},
		{"burst max", Workload{Burst: maxBurst}, ""},
		{"burst over", Workload{Burst: 16385}, "Workload.Burst = 16385: must be in 0..16384"},
		{"burst negative", Workload{Burst: -1}, "Workload.Burst = -1: must be in 0..16384"},
		{"context min", Workload{ContextTokens: 32}, ""},
		{"context max", Workload{ContextTokens: 1048576, Requests: 64}, ""},
		{"context under", Workload{ContextTokens: 31}, "Workload.ContextTokens = 31: must be 0 (sampled) or in 32..1048576"},
		{"context over", Workload{ContextTokens: 1048577}, "Workload.ContextTokens = 1048577: must be 0 (sampled) or in 32..1048576"},
		{"context negative", Workload{ContextTokens: -1}, "Workload.ContextTokens = -1"},
		{"aggregate cap edge", Workload{ContextTokens: 65536, Requests: 1024}, ""},
		{"aggregate cap over", Workload{ContextTokens: 65536, Requests: 1025}, "Workload.Requests = 1025: times ContextTokens = 65536 must be at most 67108864 planned prompt tokens (at most 1024 requests)"},
		{"max tokens min", Workload{MaxTokens: 1}, ""},
		{"max tokens max", Workload{MaxTokens: 65536}, ""},
		{"max tokens over", Workload{MaxTokens: 65537}, "Workload.MaxTokens = 65537: must be in 1..65536"},
		{"max tokens negative", Workload{MaxTokens: -1}, "Workload.MaxTokens = -1: must be in 1..65536"},
		{"shared prefix max", Workload{SharedPrefixTokens: 262144}, ""},
		{"shared prefix over", Workload{SharedPrefixTokens: 262145}, "Workload.SharedPrefixTokens = 262145: must be in 0..262144 (0: 8000) or None (-1: no shared prefix)"},
		{"shared prefix below sentinel", Workload{SharedPrefixTokens: -2}, "Workload.SharedPrefixTokens = -2: must be in 0..262144 (0: 8000) or None (-1: no shared prefix)"},
		{"response words max", Workload{ResponseWords: 65536}, ""},
		{"response words over", Workload{ResponseWords: 65537}, "Workload.ResponseWords = 65537: must be in 0..65536"},
		{"response words negative", Workload{ResponseWords: -1}, "Workload.ResponseWords = -1: must be in 0..65536"},
		{"warmup negative", Workload{Warmup: -1}, "Workload.Warmup = -1: must be in 0..16384"},
		{"warmup for too long", Workload{WarmupFor: 2 * time.Hour}, "Workload.WarmupFor = 2h0m0s: must be in 0..1h0m0s"},
		{"probe rate max", Workload{ProbeRate: 10}, ""},
		{"probe rate over", Workload{ProbeRate: 11}, "Workload.ProbeRate = 11: must be 0 (no probes) or in 0.001..10 probes per second"},
		{"probe rate negative", Workload{ProbeRate: -1}, "Workload.ProbeRate = -1: must be 0 (no probes) or in 0.001..10 probes per second"},
		{"warmup by count and time", Workload{Warmup: 5, WarmupFor: time.Second}, "Workload.Warmup = 5: must be 0 with WarmupFor or WarmupSteady: the warm-up is by count, by time or until steady"},
		{"warmup by count until steady", Workload{Warmup: 5, WarmupSteady: true}, "Workload.Warmup = 5: must be 0 with WarmupFor or WarmupSteady: the warm-up is by count, by time or until steady"},
		{"max failures over", Workload{MaxFailures: 16385}, "Workload.MaxFailures = 16385: must be in 0..16384"},
		{"timeout max", Workload{Timeout: time.Hour}, ""},
		{"timeout over", Workload{Timeout: time.Hour + time.Nanosecond}, "Workload.Timeout = 1h0m0.000000001s: must be in (0s, 1h0m0s]"},
		{"timeout negative", Workload{Timeout: -time.Second}, "Workload.Timeout = -1s: must be in (0s, 1h0m0s]"},
		{"stall timeout over timeout", Workload{Timeout: time.Minute, StallTimeout: 2 * time.Minute}, "Workload.StallTimeout = 2m0s: must be in (0s, Timeout = 1m0s]"},
		{"stall timeout negative", Workload{StallTimeout: -1}, "Workload.StallTimeout = -1ns"},
		{"duration negative", Workload{Duration: -time.Second}, "Workload.Duration = -1s: must be in 0s..24h0m0s"},
		{"duration over", Workload{Duration: 25 * time.Hour}, "Workload.Duration = 25h0m0s: must be in 0s..24h0m0s"},
		{"cache mode unique", Workload{PromptCacheMode: promptCacheUnique}, ""},
		{"cache mode bad", Workload{PromptCacheMode: "none"}, `Workload.PromptCacheMode = "none": must be "shared" or "unique"`},
		{"omit nonce outside unique", Workload{OmitUniqueNonce: true}, `Workload.OmitUniqueNonce = true: needs PromptCacheMode "unique"`},
		{"policy bad", Workload{ControlledOutputPolicy: "lenient"}, `Workload.ControlledOutputPolicy = "lenient": must be "observe" or "strict"`},
		{"strict needs words", Workload{ControlledOutputPolicy: policyStrict}, `Workload.ControlledOutputPolicy = "strict": needs ResponseWords > 0`},
		{"strict with words", Workload{ControlledOutputPolicy: policyStrict, ResponseWords: 4}, ""},
		{"canaries need 16 tokens", Workload{RequestCanaries: true, MaxTokens: 15}, "Workload.MaxTokens = 15: must be at least 16 with RequestCanaries"},
		{"canaries with default tokens", Workload{RequestCanaries: true}, ""},
		{"burst requests mismatch", Workload{Burst: 8, Requests: 9}, "Workload.Requests = 9: must equal Burst = 8 (or be 0)"},
		{"burst concurrency mismatch", Workload{Burst: 8, Concurrency: 4}, "Workload.Concurrency = 4: must equal Burst = 8 (or be 0)"},
		{"burst without prefix", Workload{Burst: 8, SharedPrefixTokens: None}, "Workload.SharedPrefixTokens = -1: must not be None with Burst (a burst uses the shared prefix)"},
		{"burst in unique mode", Workload{Burst: 8, PromptCacheMode: promptCacheUnique}, `Workload.PromptCacheMode = "unique": must be "shared" with Burst`},
		{"effort with default thinking", Workload{ReasoningEffort: reasoningLow}, ""},
		{"unsupported thinking alone", Workload{ThinkingMode: thinkingUnsupported}, ""},
		{"effort with unsupported", Workload{ThinkingMode: thinkingUnsupported, ReasoningEffort: reasoningLow}, `Workload.ReasoningEffort = "low": may not be combined with ThinkingMode "unsupported"`},
		{"thinking bad", Workload{ThinkingMode: "on"}, `Workload.ThinkingMode = "on": must be one of default, enabled, disabled, unsupported`},
		{"effort with enabled", Workload{ThinkingMode: thinkingEnabled, ReasoningEffort: reasoningHigh}, `Workload.ReasoningEffort = "high": may not be combined with ThinkingMode "enabled"`},
		{"effort with disabled", Workload{ThinkingMode: thinkingDisabled, ReasoningEffort: reasoningNone}, `Workload.ReasoningEffort = "none": may not be combined with ThinkingMode "disabled"`},
		{"effort bad", Workload{ReasoningEffort: "extreme"}, `Workload.ReasoningEffort = "extreme": must be empty or one of none, minimal, low, medium, high, xhigh, max`},
		{"effort max", Workload{ReasoningEffort: reasoningMax}, ""},
		{"temperature zero", Workload{Temperature: new(0.0)}, ""},
		{"temperature negative", Workload{Temperature: new(-0.5)}, "Workload.Temperature = -0.5: must be finite and >= 0"},
		{"temperature NaN", Workload{Temperature: new(math.NaN())}, "Workload.Temperature = NaN"},
		{"temperature Inf", Workload{Temperature: new(math.Inf(1))}, "Workload.Temperature = +Inf"},
		{"top_p one", Workload{TopP: new(1.0)}, ""},
		{"top_p zero", Workload{TopP: new(0.0)}, "Workload.TopP = 0: must be in (0, 1]"},
		{"top_p over", Workload{TopP: new(1.01)}, "Workload.TopP = 1.01: must be in (0, 1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.w.Resolved()
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.ErrorIs(t, err, ErrInvalidConfig)
			var ce *FieldError
			require.ErrorAs(t, err, &ce)
			require.True(t, strings.HasPrefix(ce.Field, "Workload."), ce.Field)
			require.Contains(t, err.Error(), "capacity: "+tt.wantErr)
		})
	}
}

// TestConfigErrorValue: string values, of any string type, are quoted; a
// *float64 is shown by its value.
func TestConfigErrorValue(t *testing.T) {
	tests := []struct {
		value any
		want  string
	}{
		{"a b", `capacity: F = "a b": rule`},
		{PromptCacheMode("none"), `capacity: F = "none": rule`},
		{artifact.FailureClass("x"), `capacity: F = "x": rule`},
		{new(-0.5), "capacity: F = -0.5: rule"},
		{7, "capacity: F = 7: rule"},
		{90 * time.Second, "capacity: F = 1m30s: rule"},
		{true, "capacity: F = true: rule"},
	}
	for _, tt := range tests {
		require.EqualError(t, badField("F", tt.value, "rule"), tt.want)
	}
}

func TestWorkloadReportsEveryProblem(t *testing.T) {
	_, err := Workload{Requests: -1, Concurrency: 99999, TopP: new(2.0)}.Resolved()
	var fields []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *FieldError
		require.True(t, errors.As(e, &ce))
		fields = append(fields, ce.Field)
	}
	require.Equal(t, []string{"Workload.Requests", "Workload.Concurrency", "Workload.TopP"}, fields)
}

func TestTargetResolved(t *testing.T) {
	got, err := Target{BaseURL: "http://localhost:8000/v1/", Headers: map[string][]string{"x-tenant": {"a"}}}.Resolved()
	require.NoError(t, err)
	require.Equal(t, "http://localhost:8000/v1", got.BaseURL)
	require.Equal(t, defaultMargin, got.Margin)
	require.Equal(t, "http://localhost:8000/v1/chat/completions", got.ChatCompletionsURL())
	require.Equal(t, "http://localhost:8000/v1/models", got.ModelsURL())
	require.Equal(t, []string{"X-Tenant"}, got.HeaderNames())

	none, err := Target{BaseURL: "https://h/v1", Margin: None}.Resolved()
	require.NoError(t, err)
	require.Equal(t, None, none.Margin)
	require.Equal(t, 0, none.margin())
	again, err := none.Resolved()
	require.NoError(t, err)
	require.Equal(t, None, again.Margin)

	// Resolved copies Headers and ExtraBody: later edits by the caller do
	// not reach a running benchmark.
	extra := map[string]any{"ignore_eos": true}
	r, err := Target{BaseURL: "http://h/v1", ExtraBody: extra}.Resolved()
	require.NoError(t, err)
	extra["ignore_eos"] = false
	require.Equal(t, true, r.ExtraBody["ignore_eos"])
}

func TestTargetBounds(t *testing.T) {
	const ok = "http://localhost:8000/v1"
	tests := []struct {
		name    string
		t       Target
		wantErr string
	}{
		{"minimal", Target{BaseURL: ok}, ""},
		{"host header", Target{BaseURL: ok, Headers: http.Header{"Host": {"vhost.example"}}}, `Target.Headers = "Host": is written by the HTTP client from the request, which ignores a value in Headers: the host is Target.BaseURL's`},
		{"host header lower case", Target{BaseURL: ok, Headers: http.Header{"host": {"vhost.example"}}}, `Target.Headers = "Host": is written by the HTTP client`},
		{"content length header", Target{BaseURL: ok, Headers: http.Header{"Content-Length": {"12"}}}, `Target.Headers = "Content-Length": is written by the HTTP client from the request, which ignores a value in Headers: the body's framing is the client's`},
		{"transfer encoding header", Target{BaseURL: ok, Headers: http.Header{"Transfer-Encoding": {"chunked"}}}, `Target.Headers = "Transfer-Encoding": is written by the HTTP client`},
		{"empty url", Target{}, `Target.BaseURL = "": must be an http or https URL`},
		{"ftp", Target{BaseURL: "ftp://h/v1"}, `Target.BaseURL = "ftp://h/v1": must be an http or https URL with a host and no query or fragment`},
		{"no host", Target{BaseURL: "http:///v1"}, "Target.BaseURL"},
		{"query", Target{BaseURL: "http://h/v1?key=secret"}, `Target.BaseURL = "http://h/v1?key=[redacted]": must be`},
		{"query and userinfo", Target{BaseURL: "http://user:pw@h/v1?sk-1&a=b"}, `Target.BaseURL = "http://h/v1?[redacted]&a=[redacted]": must be`},
		{"no scheme", Target{BaseURL: "localhost:8000/v1"}, `Target.BaseURL = "localhost:8000/v1": has no scheme: add http:// (or https://), as in http://localhost:8000/v1`},
		{"no scheme ip", Target{BaseURL: "user:pw@127.0.0.1:8000/v1"}, `Target.BaseURL = "127.0.0.1:8000/v1": has no scheme: add http:// (or https://), as in http://127.0.0.1:8000/v1`},
		{"trailing white space", Target{BaseURL: "http://h/v1 "}, `Target.BaseURL = "http://h/v1 ": has leading or trailing white space: remove it`},
		{"trailing newline", Target{BaseURL: "http://h/v1\n"}, `Target.BaseURL = "http://h/v1\n": has leading or trailing white space: remove it`},
		{"empty query", Target{BaseURL: "http://h/v1?"}, `Target.BaseURL = "http://h/v1?": must be`},
		{"fragment", Target{BaseURL: "http://h/v1#top"}, `Target.BaseURL = "http://h/v1#[redacted]": must be`},
		// "/chat/completions" appended after a bare "#" would be a fragment.
		{"empty fragment", Target{BaseURL: "http://h/v1#"}, `Target.BaseURL = "http://h/v1#": must be`},
		{"unparsable", Target{BaseURL: "http://user:pw@h:bad/v1"}, `Target.BaseURL = "http://h:bad/v1": does not parse`},
		{"max model len max", Target{BaseURL: ok, MaxModelLen: 1048576}, ""},
		{"max model len over", Target{BaseURL: ok, MaxModelLen: 1048577}, "Target.MaxModelLen = 1048577: must be in 0..1048576"},
		{"max model len negative", Target{BaseURL: ok, MaxModelLen: -1}, "Target.MaxModelLen = -1: must be in 0..1048576"},
		{"margin max", Target{BaseURL: ok, Margin: maxMargin}, ""},
		{"margin over", Target{BaseURL: ok, Margin: maxMargin + 1}, "Target.Margin = 1048577: must be in 0..1048576 (0: 1024) or None (-1: no margin)"},
		{"margin below sentinel", Target{BaseURL: ok, Margin: -2}, "Target.Margin = -2: must be in 0..1048576 (0: 1024) or None (-1: no margin)"},
		{"clock domain ok", Target{BaseURL: ok, ClockDomainID: "lab-a.rack_2"}, ""},
		{"clock domain 64", Target{BaseURL: ok, ClockDomainID: strings.Repeat("a", 64)}, ""},
		{"clock domain 65", Target{BaseURL: ok, ClockDomainID: strings.Repeat("a", 65)}, "Target.ClockDomainID = \"aaaa"},
		{"clock domain space", Target{BaseURL: ok, ClockDomainID: "lab a"}, `Target.ClockDomainID = "lab a": must be 1 to 64 characters of [A-Za-z0-9._-]`},
		{"fingerprint ok", Target{BaseURL: ok, ConfigurationFingerprint: "sha256:" + strings.Repeat("0f", 32)}, ""},
		{"fingerprint upper", Target{BaseURL: ok, ConfigurationFingerprint: "sha256:" + strings.Repeat("0F", 32)}, "Target.ConfigurationFingerprint"},
		{"fingerprint short", Target{BaseURL: ok, ConfigurationFingerprint: "sha256:abc"}, `Target.ConfigurationFingerprint = "sha256:abc": must be "sha256:" followed by 64 lowercase hex digits`},
		{"env name", Target{BaseURL: ok, APIKeyEnv: "OPENAI_API_KEY"}, ""},
		{"env name bad", Target{BaseURL: ok, APIKeyEnv: "1KEY"}, `Target.APIKeyEnv = "1KEY": must be an environment variable name`},
		{"header bad", Target{BaseURL: ok, Headers: map[string][]string{"Bad Header": {"x"}}}, `Target.Headers = "Bad Header": is not a valid header name`},
		{"authorization with key env", Target{BaseURL: ok, APIKeyEnv: "K", Headers: map[string][]string{"Authorization": {"x"}}}, `Target.Headers = "Authorization": may not be set together with APIKeyEnv`},
		{"authorization alone", Target{BaseURL: ok, Headers: map[string][]string{"Authorization": {"x"}}}, ""},
		{"header value with a tab", Target{BaseURL: ok, Headers: map[string][]string{"X-Tenant": {"a\tb"}}}, ""},
		{"header value with a newline", Target{BaseURL: ok, Headers: map[string][]string{"Authorization": {"Bearer pw\n"}}},
			`Target.Headers = "Authorization": has a value with a control character such as a trailing newline`},
		{"header value with NUL", Target{BaseURL: ok, Headers: map[string][]string{"X-Tenant": {"ok", "a\x00"}}}, `Target.Headers = "X-Tenant": has a value with a control character`},
		{"extra body ok", Target{BaseURL: ok, ExtraBody: map[string]any{"ignore_eos": true, "max_completion_tokens": 64}}, ""},
		{"extra body reserved", Target{BaseURL: ok, ExtraBody: map[string]any{"max_tokens": 5}}, `Target.ExtraBody = "max_tokens": is set by Workload.MaxTokens and may not be overridden`},
		{"extra body thinking", Target{BaseURL: ok, ExtraBody: map[string]any{"chat_template_kwargs": map[string]any{}}}, `Target.ExtraBody = "chat_template_kwargs": is set by Workload.ThinkingMode`},
		{"extra body not json", Target{BaseURL: ok, ExtraBody: map[string]any{"f": func() {}}}, `Target.ExtraBody = "f": has a value that does not encode as JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.t.Resolved()
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidConfig)
			require.Contains(t, err.Error(), "capacity: "+tt.wantErr)
			require.NotContains(t, err.Error(), "pw", "an error repeated a credential")
			require.NotContains(t, err.Error(), "secret", "an error repeated a credential")
		})
	}
}

func TestAPIKey(t *testing.T) {
	t.Setenv("ANVIL_TEST_KEY", "sk-test-123")
	key, err := Target{APIKeyEnv: "ANVIL_TEST_KEY"}.apiKey()
	require.NoError(t, err)
	require.Equal(t, "sk-test-123", key)
	key, err = Target{}.apiKey()
	require.NoError(t, err)
	require.Empty(t, key)
	t.Setenv("ANVIL_TEST_NEWLINE", "sk-test-123\n")
	_, err = Target{APIKeyEnv: "ANVIL_TEST_NEWLINE"}.apiKey()
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorContains(t, err, `Target.APIKeyEnv = "ANVIL_TEST_NEWLINE": names an environment variable whose value holds a control character`)
	require.NotContains(t, err.Error(), "sk-test")
	t.Setenv("ANVIL_TEST_EMPTY", "")
	_, err = Target{APIKeyEnv: "ANVIL_TEST_EMPTY"}.apiKey()
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorContains(t, err, `Target.APIKeyEnv = "ANVIL_TEST_EMPTY": names an environment variable that is unset or empty`)
}

func TestRedactBaseURL(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"http://localhost:8000/v1", "http://localhost:8000/v1", ""},
		{"https://user:secret@api.example.com/v1?key=abc#frag", "https://api.example.com/v1", ""},
		{"http://token@h:9/v1/", "http://h:9/v1/", ""},
		{"http://h/v1?", "http://h/v1", ""},
		{"not a url", "", "needs a scheme and a host"},
		{"http://user:secret@h:port/v1", "", "does not parse"},
		{"", "", "needs a scheme and a host"},
	}
	for _, tt := range tests {
		got, err := redactBaseURL(tt.in)
		if tt.err != "" {
			require.ErrorContains(t, err, tt.err, tt.in)
			require.NotContains(t, err.Error(), "secret")
			continue
		}
		require.NoError(t, err, tt.in)
		require.Equal(t, tt.want, got)
	}
}

// TestBadTimeoutReportedOnce: a Timeout out of range is the one error,
// not also the StallTimeout it defaults or the StallThreshold bound it
// sets; a limit wrong on its own is still reported beside it.
func TestBadTimeoutReportedOnce(t *testing.T) {
	for _, tc := range []struct {
		w    Workload
		want string
	}{
		{Workload{Timeout: -time.Second}, "capacity: Workload.Timeout = -1s: must be in (0s, 1h0m0s]"},
		{Workload{Timeout: 2 * time.Hour, StallTimeout: 90 * time.Minute, StallThreshold: time.Minute},
			"capacity: Workload.Timeout = 2h0m0s: must be in (0s, 1h0m0s]"},
		{Workload{Timeout: -time.Second, StallTimeout: -time.Minute, StallThreshold: -time.Millisecond},
			"capacity: Workload.Timeout = -1s: must be in (0s, 1h0m0s]\n" +
				"capacity: Workload.StallTimeout = -1m0s: must be in (0s, Timeout]\n" +
				"capacity: Workload.StallThreshold = -1ms: must be 0 (the relative stall rule) or in (0s, Timeout = -1s]"},
		{Workload{Timeout: time.Minute, StallThreshold: 2 * time.Minute},
			"capacity: Workload.StallThreshold = 2m0s: must be 0 (the relative stall rule) or in (0s, Timeout = 1m0s]"},
	} {
		_, err := tc.w.Resolved()
		require.Error(t, err)
		require.Equal(t, tc.want, err.Error())
	}
}
