package anviltest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
)

// Environment variables read by Capacity. A value set through an Option wins
// over the environment; the environment fills only what the options and the
// Workload leave empty.
const (
	// envBaseURL is the OpenAI-compatible API root, e.g.
	// http://localhost:8000/v1. Unset: the embedded fake server.
	envBaseURL = "ANVIL_BASE_URL"
	// envModel is the model id sent (unset: the first id of /models).
	envModel = "ANVIL_MODEL"
	// envAPI is the API the requests speak (Target.API): chat, responses,
	// messages, completions or embeddings (unset: chat).
	envAPI = "ANVIL_API"
	// envAPIKeyEnv names the variable that holds the bearer token; the token
	// itself is never written anywhere.
	envAPIKeyEnv = "ANVIL_API_KEY_ENV"
	// envEngine is the engine identity recorded (e.g. vllm-0.11.0).
	envEngine = "ANVIL_ENGINE"
	// envGPU is the GPU identity recorded (e.g. h100-80gb).
	envGPU = "ANVIL_GPU"
	// envMaxModelLen is the model's context length in tokens (unset: probed).
	envMaxModelLen = "ANVIL_MAX_MODEL_LEN"
	// envOut is the artifact directory used when -artifacts is not set
	// (unset: ./anvil-out in the package directory).
	envOut = "ANVIL_OUT"
	// envWarmup is the unmeasured warm-up of each run when the Workload
	// sets none: a request count, a duration (Workload.WarmupFor) or
	// "steady" (Workload.WarmupSteady).
	envWarmup = "ANVIL_WARMUP"
	// envProbeRate sends probe requests beside each run at this many per
	// second (Workload.ProbeRate) when the Workload sets none.
	envProbeRate = "ANVIL_PROBE_RATE"
	// envMaxTokens is each request's completion limit
	// (Workload.MaxTokens) when the Workload sets none.
	envMaxTokens = "ANVIL_MAX_TOKENS"
	// envTimeout is the per-request timeout (a Go duration such as 5m) when
	// the Workload sets none.
	envTimeout = "ANVIL_TIMEOUT"
	// envClockDomainID labels the clock of the run's Unix timestamps when
	// the Workload sets none.
	envClockDomainID = "ANVIL_CLOCK_DOMAIN_ID"
	// envConfigurationFingerprint identifies the served configuration
	// (sha256:<64 hex>) when the Workload sets none.
	envConfigurationFingerprint = "ANVIL_CONFIGURATION_FINGERPRINT"
	// envExtraBody is a JSON object of fields merged into every request
	// body (Target.ExtraBody, e.g. {"cache_prompt":false} for llama.cpp)
	// when the Target sets none.
	envExtraBody = "ANVIL_EXTRA_BODY"
	// envFakeProfile names the embedded fake server's profile (unset:
	// defaultFakeProfile). Ignored when a base URL is configured.
	envFakeProfile = "ANVIL_FAKE_PROFILE"
	// envProgress set to 0 turns the live terminal progress line off.
	envProgress = "ANVIL_PROGRESS"
	// envPromptSizing is the prompt sizing, "reference" or "exact" (see
	// capacity.PromptSizing), when the Workload sets none.
	envPromptSizing = "ANVIL_PROMPT_SIZING"
)

// runFunc runs one capacity campaign; capacity.Run is the implementation
// Capacity uses.
type runFunc func(ctx context.Context, t capacity.Target, w capacity.Workload) (*artifact.Report, error)

// An Option configures Capacity, Sweep, Conformance or Main (each uses
// the options that concern it). Options apply in order, a later one
// winning over an earlier one of the same kind; a nil Option does nothing.
type Option func(*settings)

// settings is everything Capacity needs besides the Workload.
type settings struct {
	target      capacity.Target
	outDir      string
	fakeProfile string
	progress    *bool
	html        *bool // withHTML; nil: ANVIL_HTML decides
	run         runFunc
	getenv      func(string) string // WithEnvironment; os.Getenv by default
	environ     func() []string     // the variables getenv reads, for unknownVariables; nil with WithEnvironment
	envRead     bool                // env has parsed getenv
	envCache    environment
	envErr      error
	slo         capacity.SLO          // WithSLO, then ANVIL_SLO_*; off when no bound is set
	probe       *artifact.SearchProbe // the run is this probe of a Sweep
	conformance conformanceSettings
	traffic     Traffic // WithTraffic; nil: ANVIL_TRACE or ANVIL_SESSIONS decide
}

// WithTarget sets the endpoint and its identity. Its non-empty fields win
// over the environment; an empty BaseURL still falls back to ANVIL_BASE_URL
// and then to the embedded fake server.
func WithTarget(t capacity.Target) Option {
	return func(s *settings) { s.target = t }
}

// withOutDir writes the artifacts into dir instead of the default location
// (it wins over -artifacts and ANVIL_OUT).
func withOutDir(dir string) Option {
	return func(s *settings) { s.outDir = dir }
}

// withFakeProfile selects the embedded fake server's profile by name (see
// the fakeserver package) for runs without a base URL.
func withFakeProfile(name string) Option {
	return func(s *settings) { s.fakeProfile = name }
}

// withProgress forces the live progress line on or off. By default it is
// shown only when standard error is a terminal.
func withProgress(on bool) Option {
	return func(s *settings) { s.progress = &on }
}

// withRunFunc replaces the campaign runner (default capacity.Run), e.g. to
// wrap it with extra instrumentation.
func withRunFunc(run runFunc) Option {
	return func(s *settings) { s.run = run }
}

// newSettings applies opts over the defaults, in order (a later option
// wins); a nil Option is skipped, so options can be chosen conditionally.
func newSettings(opts []Option) *settings {
	s := &settings{run: capacity.Run, getenv: os.Getenv, environ: os.Environ}
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
	return s
}

// envError is a bad environment value, as the module's one field error:
// it names the variable, the value and what is allowed, and wraps the
// cause (capacity's own error when capacity refused the value):
//
//	anviltest: ANVIL_RATE = "fast": want a positive number of requests per second
func envError(name, value, allowed string, err error) *capacity.FieldError {
	return &capacity.FieldError{Pkg: "anviltest", Field: name, Value: value, Rule: "want " + allowed, Err: err}
}

// resolveTarget fills the empty fields of the configured target from the
// environment.
func (s *settings) resolveTarget() (capacity.Target, error) {
	t := s.target
	e, err := s.env()
	if err != nil {
		return t, err
	}
	fill := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	fill(&t.BaseURL, e.baseURL)
	fill(&t.Model, e.model)
	fill(&t.API, e.api)
	fill(&t.APIKeyEnv, e.apiKeyEnv)
	fill(&t.Engine, e.engine)
	fill(&t.GPU, e.gpu)
	fill(&t.ClockDomainID, e.clockDomainID)                       // validated with the Target
	fill(&t.ConfigurationFingerprint, e.configurationFingerprint) // validated with the Target
	if t.MaxModelLen == 0 {
		t.MaxModelLen = e.maxModelLen
	}
	if t.ExtraBody == nil {
		t.ExtraBody = e.extraBody
	}
	fill(&t.MetricsURL, e.metricsURL)
	if t.MetricsInterval == 0 {
		t.MetricsInterval = e.metricsInterval
	}
	if t.GPUMetricsURLs == nil {
		t.GPUMetricsURLs = e.gpuMetricsURLs
	}
	if t.GPUs == nil {
		t.GPUs = e.gpus
	}
	if t.PricePerGPUHour == nil {
		t.PricePerGPUHour = e.pricePerGPUHour
	}
	if t.PricePerKWh == nil {
		t.PricePerKWh = e.pricePerKWh
	}
	return t, s.fakeLabelled(t)
}

// applyWorkloadEnv fills the per-run knobs the Workload leaves at zero.
func (s *settings) applyWorkloadEnv(w capacity.Workload) (capacity.Workload, error) {
	e, err := s.env()
	if err != nil {
		return w, err
	}
	if w.Warmup == 0 && w.WarmupFor == 0 && !w.WarmupSteady {
		w.Warmup, w.WarmupFor, w.WarmupSteady = e.warmup.Warmup, e.warmup.WarmupFor, e.warmup.WarmupSteady
	}
	if w.MaxTokens == 0 {
		w.MaxTokens = e.maxTokens
	}
	if w.Timeout == 0 {
		w.Timeout = e.timeout
	}
	if w.ProbeRate == 0 {
		w.ProbeRate = e.probeRate
	}
	if w.PromptSizing == "" {
		w.PromptSizing = e.promptSizing
	}
	if w, err = s.applyShardEnv(w); err != nil {
		return w, err
	}
	return s.applyOpenLoopEnv(w)
}

// progressWanted reports whether the live progress line is shown: forced by
// withProgress, off with ANVIL_PROGRESS=0 (or any false value of
// strconv.ParseBool), else only on a terminal. ANVIL_PROGRESS=1 still
// draws only on a terminal: captured output never gets the line.
func (s *settings) progressWanted(stderr *os.File) (bool, error) {
	if s.progress != nil {
		return *s.progress, nil
	}
	e, err := s.env()
	if err != nil {
		return false, err
	}
	if e.progress != nil && !*e.progress {
		return false, nil
	}
	if s.getenv("TERM") == "dumb" {
		return false, nil
	}
	return isTerminal(stderr), nil
}

// heartbeatWanted reports whether a run writes heartbeat lines to stderr
// (see heartbeat): when the progress line is not drawn because stderr is
// not a terminal, unless withProgress(false) or ANVIL_PROGRESS=0 turn the
// progress off, or a line now could split a benchmark result
// (namePending). A configuration error is progressWanted's to report.
func (s *settings) heartbeatWanted(stderr *os.File) bool {
	if s.progress != nil {
		return false // forced on draws the line; forced off draws nothing
	}
	e, err := s.env()
	if err != nil || (e.progress != nil && !*e.progress) || isTerminal(stderr) && s.getenv("TERM") != "dumb" {
		return false
	}
	return !namePending()
}

// benchtimeFieldNames pairs the Workload field that -benchtime sized (none
// when the Workload sized itself) with the flag, for explainFields.
func benchtimeFieldNames(user capacity.Workload, bt benchtime) [][2]string {
	switch {
	case user.Requests > 0 || user.Burst > 0 || user.Duration > 0:
		return nil
	case bt.n > 0:
		return [][2]string{{"Workload.Requests", "-benchtime " + bt.String()}}
	default:
		return [][2]string{{"Workload.Duration", "-benchtime " + bt.String()}}
	}
}

// explainFields adds to an error of package capacity where a user of go
// test sets each field it names: pairs maps a field (Target.APIKeyEnv,
// Workload.Requests, ...) to its environment variable or flag. The fields
// are read from the *capacity.FieldError values err holds, never from its
// text. Values are not repeated: the error already shows them (never a
// secret), or deliberately hides them.
func explainFields(err error, pairs ...[2]string) error {
	if err == nil {
		return nil
	}
	var fields []string
	for _, fe := range fieldErrors(err) {
		fields = append(fields, fe.Field)
	}
	var names []string
	for _, p := range pairs {
		if slices.Contains(fields, p[0]) {
			names = append(names, p[0]+" comes from "+p[1])
		}
	}
	if len(names) == 0 {
		return err
	}
	return fmt.Errorf("%w (%s)", err, strings.Join(names, "; "))
}

// fieldErrors lists every *capacity.FieldError in err's tree (errors.Join
// and %w wrapping included), in order: each error that is one, or that
// errors.As would take for one (the field errors of package trace, say).
func fieldErrors(err error) []*capacity.FieldError {
	var found []*capacity.FieldError
	var walk func(error)
	walk = func(e error) {
		var fe *capacity.FieldError
		if x, ok := e.(*capacity.FieldError); ok {
			found = append(found, x)
			return
		}
		if x, ok := e.(interface{ As(any) bool }); ok && x.As(&fe) {
			found = append(found, fe)
			return
		}
		switch x := e.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range x.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			walk(x.Unwrap())
		}
	}
	walk(err)
	return found
}

// isTerminal reports whether f is a character device (a terminal; never a
// pipe or a file that captures output).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
