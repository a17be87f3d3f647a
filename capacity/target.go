package capacity

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/client"
)

// Bounds and defaults of a Target (capacity/PROTOCOL.md#bounds).
const (
	// defaultMargin is the number of tokens kept free between the prompt
	// budget and the model's context when Target.Margin is 0.
	defaultMargin = 1024
	// maxMargin is the largest Target.Margin.
	maxMargin = 1048576
)

// Target describes the endpoint a capacity run measures and the identity
// recorded with it. Resolved validates it and fills in defaults.
type Target struct {
	// BaseURL is the OpenAI-compatible API root as users write it, usually
	// ending in /v1 (e.g. "http://localhost:8000/v1"); requests go to
	// BaseURL + the API's route ("/chat/completions" for chat). http or
	// https, no query or fragment. The artifact records it without
	// userinfo, query or fragment.
	BaseURL string
	// API is the API every measured request speaks
	// (capacity/PROTOCOL.md#apis): "chat" (the default, empty) streams chat
	// completions; "responses" OpenAI's Responses API (BaseURL +
	// "/responses"), "messages" Anthropic's Messages API ("/messages",
	// the credential in x-api-key with anthropic-version), "completions"
	// the legacy text completions ("/completions"), each streamed;
	// "embeddings" ("/embeddings") is answered whole. Every API sends the
	// same planned prompt as its own body, so one workload over two APIs
	// sends the same text. Recorded in anvil_go.run.api, an identity key
	// of comparisons.
	API string
	// Model is the model id sent; empty means the id reported by
	// BaseURL + "/models" (the first entry).
	Model string
	// APIKeyEnv names the environment variable holding the bearer token
	// (empty: no Authorization header). The token is read when the run
	// starts and appears in no report, error or log.
	APIKeyEnv string
	// Engine, GPU, Tier, Manifest and SourceRecipe are identity recorded in
	// the artifact (empty Tier, Manifest and SourceRecipe are recorded as null).
	Engine       string
	GPU          string
	Tier         string
	Manifest     string
	SourceRecipe string
	// ClockDomainID names the clock the run's Unix timestamps share with other
	// artifacts: 1..64 of [A-Za-z0-9._-] (empty: null, not alignable).
	ClockDomainID string
	// ConfigurationFingerprint identifies the served configuration:
	// "sha256:" + the 64 lowercase hex digits of the SHA-256 of the bytes
	// that identify it (an engine's launch command, a recipe file); empty:
	// null.
	ConfigurationFingerprint string
	// MaxModelLen is the model's context length in tokens, 0..1048576
	// (0: discovered, capacity/PROTOCOL.md#context-window). An explicit
	// value sets the plan's window; the window the server advertises is
	// still asked, and used for the truncation checks.
	MaxModelLen int
	// Margin is kept free below MaxModelLen: the prompt budget is
	// MaxModelLen - MaxTokens - Margin. 0..1048576 (0: 1024; None for
	// none).
	Margin int
	// HTTPClient sends the requests; nil means a client on a clone of
	// http.DefaultTransport (keeping proxy settings and HTTP/2) with idle
	// connections sized to the concurrency, which follows no redirect (a
	// redirect would add a round trip to every measured request; it fails
	// the request, naming the Location).
	HTTPClient *http.Client
	// Headers are extra request headers. The artifact records their names,
	// never their values. Authorization may not be set together with APIKeyEnv;
	// Host, Content-Length, Transfer-Encoding and Trailer are refused (the
	// HTTP client writes them from the request and would ignore them).
	Headers http.Header
	// ExtraBody holds fields merged into every request body (e.g.
	// "ignore_eos", "max_completion_tokens"). Fields the Workload controls
	// (model, messages, stream, max_tokens, sampling, thinking) are refused.
	// The fields are part of the run's identity: recorded in
	// anvil_go.run.extra_body and the benchfmt workload configuration.
	ExtraBody map[string]any
	// MetricsURL is the server's Prometheus metrics endpoint, sampled
	// during the measured phase (capacity/PROTOCOL.md#server_metrics): ""
	// means /metrics at BaseURL's root (a trailing /v1 stripped), found
	// once before the run and silently absent when the server has none;
	// an http or https URL is that endpoint, which must answer;
	// servermetrics.Off ("off") samples nothing.
	MetricsURL string
	// MetricsInterval is the time between samples, 10ms..1h (0: 1s;
	// servermetrics.Config.Interval); GPUMetricsURLs are sampled at it
	// too.
	MetricsInterval time.Duration
	// GPUMetricsURLs are the NVIDIA DCGM exporter endpoints of the GPUs
	// under the server, one per node (at most 64), sampled on the run's
	// clock beside MetricsURL (capacity/PROTOCOL.md#gpu_metrics); each
	// must answer with the exporter's families. They give
	// anvil_go.energy (#energy). Nil samples none. The GETs carry neither
	// Headers nor the API key: the exporter is not the server.
	GPUMetricsURLs []string
	// GPUs names the GPUs to keep of GPUMetricsURLs: an index ("0"), a
	// UUID ("GPU-..."), or a label pair ("UUID=GPU-...", "gpu=3"); nil
	// keeps every GPU.
	GPUs []string
	// PricePerGPUHour and PricePerKWh are optional prices (any currency)
	// of one GPU for an hour and of a kWh: anvil_go.energy then gives the
	// costs per million output tokens. Nil for none; else finite, >= 0.
	PricePerGPUHour, PricePerKWh *float64
}

// Resolved returns t with defaults filled in (Margin, a BaseURL without a
// trailing slash, private copies of Headers and ExtraBody), or an error
// wrapping ErrInvalidConfig naming each bad field. A zero Margin becomes
// the default 1024 and None stays None, so resolving the result again
// validates it and changes nothing.
func (t Target) Resolved() (Target, error) {
	if t.Margin == 0 {
		t.Margin = defaultMargin
	}
	t.BaseURL = strings.TrimRight(t.BaseURL, "/")
	t.Headers = t.Headers.Clone()
	t.ExtraBody = maps.Clone(t.ExtraBody)
	if err := t.validate(); err != nil {
		return Target{}, err
	}
	return t, nil
}

// margin is the margin of a resolved Target in tokens: 0 for None.
func (t Target) margin() int {
	if t.Margin == None {
		return 0
	}
	return t.Margin
}

// ChatCompletionsURL is the streaming endpoint: BaseURL + "/chat/completions".
func (t Target) ChatCompletionsURL() string {
	return strings.TrimRight(t.BaseURL, "/") + "/chat/completions"
}

// ModelsURL is the model-list endpoint: BaseURL + "/models".
func (t Target) ModelsURL() string {
	return strings.TrimRight(t.BaseURL, "/") + "/models"
}

// HeaderNames returns the sorted canonical names of t.Headers, as recorded
// in the artifact.
func (t Target) HeaderNames() []string {
	names := make([]string, 0, len(t.Headers))
	for k := range t.Headers {
		names = append(names, http.CanonicalHeaderKey(k))
	}
	slices.Sort(names)
	return names
}

// apiKey reads the bearer token from the variable named by APIKeyEnv. The
// error names the variable, never a value.
func (t Target) apiKey() (string, error) {
	if t.APIKeyEnv == "" {
		return "", nil
	}
	v, ok := os.LookupEnv(t.APIKeyEnv)
	if !ok || v == "" {
		return "", badField("Target.APIKeyEnv", t.APIKeyEnv,
			"names an environment variable that is unset or empty")
	}
	if hasControlByte(v) {
		return "", badField("Target.APIKeyEnv", t.APIKeyEnv,
			"names an environment variable whose value holds a control character such as a trailing newline, which HTTP refuses in the Authorization header (the value is not shown)")
	}
	return v, nil
}

// Redactor returns the scrubber Run applies to every string a server or
// a user's input supplies, for the credentials of t: apiKey (the bearer
// token the caller read from t.APIKeyEnv; empty for none), the value of
// every t.Headers entry whatever its name (and a Basic value decoded), and
// the userinfo of t.BaseURL and t.MetricsURL with its Basic form (read
// from the text, so a URL that does not parse loses it too), each
// replaced by "[redacted]" in every form a server trivially produces from
// it: raw, in any letter case, JSON-escaped, percent-encoded (a
// redirect's Location), base64, hex, and split over the data lines of a
// server-sent event. A tool that talks to the target itself (the
// conformance suite of package anviltest) passes what it prints through
// it, whole, before cutting it: a credential cut in part is no longer
// recognised.
func (t Target) Redactor(apiKey string) func(text string) string {
	return t.secrets(apiKey).Scrub
}

// RedactError returns err with t's credentials (as Redactor) removed from
// its message; nil stays nil, an error that holds none is returned as it
// is, and the result still matches what err wraps (errors.Is, errors.As).
// The text value of every *FieldError in err is scrubbed in place first,
// so its message, which cuts a long value, never shows part of a
// credential: redact an error before wrapping it.
func (t Target) RedactError(apiKey string, err error) error {
	return t.secrets(apiKey).Redact(err)
}

// secrets are the credentials of a run against t with the bearer token
// apiKey.
func (t Target) secrets(apiKey string) client.Secrets {
	return client.SecretsOf(apiKey, t.Headers, t.BaseURL, t.MetricsURL)
}

// redactBaseURL returns raw without userinfo, query or fragment, as the
// artifact records it. It fails on a URL that does not parse or has no
// scheme and host; the error never repeats the credentials.
func redactBaseURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the input, which may hold credentials.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("capacity: base URL does not parse: %w", err)
	}
	if u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("capacity: base URL needs a scheme and a host")
	}
	u.User = nil
	u.RawQuery = ""
	u.ForceQuery = false
	u.Fragment = ""
	u.RawFragment = ""
	return u.String(), nil
}
