package anviltest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/servermetrics"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// The environment. Every ANVIL_* variable anviltest reads is a row of
// envVars: its name, the field it fills, what it accepts and how it is
// parsed. readEnvironment is the one place that parses them, all at once,
// so a bad value fails the run before anything starts, whatever else is
// configured, with an error naming the variable, its value and what is
// allowed.
//
// One precedence rule for every variable: an Option wins over the field it
// sets in the Workload (or Target, or SLO), which wins over the
// environment, which wins over the default. A variable fills only a field
// that is still at its zero value; a variable set to the empty string is
// unset.

// envVar is one ANVIL_* variable.
type envVar struct {
	name string
	// field is the capacity field the variable fills (Target.Model,
	// Workload.Rate, SLO.TTFT, ...) for errors about that field, or "" for
	// a setting of anviltest's own.
	field string
	// allowed says what the variable accepts, for its error.
	allowed string
	// parse stores v, which is not empty, in e; an error is reported as
	// a *capacity.FieldError naming the variable.
	parse func(e *environment, v string) error
}

// environment is the parsed environment: the zero value of a field means
// its variable is unset.
type environment struct {
	baseURL, model, api, apiKeyEnv, engine  string
	gpu                                     string
	clockDomainID, configurationFingerprint string
	maxModelLen                             int
	extraBody                               map[string]any
	out                                     string
	warmup                                  capacity.Workload // Warmup, WarmupFor, WarmupSteady (ANVIL_WARMUP)
	maxTokens                               int
	timeout                                 time.Duration
	promptSizing                            capacity.PromptSizing
	rate                                    float64
	probeRate                               float64 // ANVIL_PROBE_RATE
	arrival                                 capacity.ArrivalProcess
	burstiness                              float64
	slo                                     capacity.SLO
	fakeProfile                             string
	fakeTimeScale                           float64
	fakeDecodeStep                          time.Duration
	progress, html                          *bool
	metricsURL                              string
	metricsInterval                         time.Duration
	gpuMetricsURLs, gpus                    []string
	pricePerGPUHour, pricePerKWh            *float64
	traffic                                 envTraffic
	shard                                   capacity.Shard // ANVIL_SHARD
	shards                                  int            // ANVIL_SHARDS
	startAt                                 time.Time      // ANVIL_START_AT
}

// envVars is every variable anviltest reads, in the order they are
// checked (the first bad one is reported).
var envVars = [...]envVar{
	{envBaseURL, "Target.BaseURL", "an http(s) URL of the API root", str(func(e *environment) *string { return &e.baseURL })},
	{envModel, "Target.Model", "a model id", str(func(e *environment) *string { return &e.model })},
	{envAPI, "Target.API", "chat, responses, messages, completions or embeddings", func(e *environment, v string) error {
		e.api = v
		return checkTarget("Target.API", capacity.Target{API: v})
	}},
	{envAPIKeyEnv, "Target.APIKeyEnv", "the name of the variable that holds the API key", str(func(e *environment) *string { return &e.apiKeyEnv })},
	{envEngine, "Target.Engine", "an engine identity such as vllm-0.11.0", str(func(e *environment) *string { return &e.engine })},
	{envGPU, "Target.GPU", "a GPU identity such as h100-80gb", str(func(e *environment) *string { return &e.gpu })},
	{envMaxModelLen, "Target.MaxModelLen", "an integer", func(e *environment, v string) error {
		n, err := strconv.Atoi(v)
		if err == nil {
			err = checkTarget("Target.MaxModelLen", capacity.Target{MaxModelLen: n})
		}
		e.maxModelLen = n
		return err
	}},
	{envExtraBody, "Target.ExtraBody", `a JSON object such as {"cache_prompt":false}`, func(e *environment, v string) error {
		d := json.NewDecoder(strings.NewReader(v))
		d.UseNumber() // numbers are sent as written
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			return err
		}
		if d.More() || m == nil {
			return errOneObject
		}
		if key, ok := duplicateKey(v); ok {
			return fmt.Errorf("key %q twice in one object: say which value to send", key)
		}
		e.extraBody = m
		return checkTarget("Target.ExtraBody", capacity.Target{ExtraBody: m})
	}},
	{envClockDomainID, "Target.ClockDomainID", "a clock domain label", str(func(e *environment) *string { return &e.clockDomainID })},
	{envConfigurationFingerprint, "Target.ConfigurationFingerprint", "sha256:<64 hex digits>", str(func(e *environment) *string { return &e.configurationFingerprint })},
	{envOut, "", "a directory", str(func(e *environment) *string { return &e.out })},
	{envWarmup, "Workload.Warmup", "a request count, a duration such as 30s, or steady", func(e *environment, v string) error {
		if v == "steady" {
			e.warmup = capacity.Workload{WarmupSteady: true}
			return nil
		}
		if n, err := strconv.Atoi(v); err == nil {
			e.warmup = capacity.Workload{Warmup: n}
			return checkWorkload("Workload.Warmup", e.warmup)
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return err
		}
		e.warmup = capacity.Workload{WarmupFor: d}
		return checkWorkload("Workload.WarmupFor", e.warmup)
	}},
	{envMaxTokens, "Workload.MaxTokens", "an integer, 1 to 65536", func(e *environment, v string) error {
		n, err := positiveInt(v, func(n int) error { return checkWorkload("Workload.MaxTokens", capacity.Workload{MaxTokens: n}) })
		e.maxTokens = n
		return err
	}},
	{envTimeout, "Workload.Timeout", "a positive duration such as 90s", func(e *environment, v string) error {
		err := duration(func(e *environment) *time.Duration { return &e.timeout }, 0)(e, v)
		if err == nil {
			err = checkWorkload("Workload.Timeout", capacity.Workload{Timeout: e.timeout})
		}
		return err
	}},
	{envPromptSizing, "Workload.PromptSizing", `"reference" or "exact"`, func(e *environment, v string) error {
		e.promptSizing = capacity.PromptSizing(v)
		if checkWorkload("Workload.PromptSizing", capacity.Workload{PromptSizing: e.promptSizing}) != nil {
			return errNotAllowed
		}
		return nil
	}},
	{envRate, "Workload.Rate", "a positive number of requests per second", func(e *environment, v string) error {
		err := float(func(e *environment) *float64 { return &e.rate }, 0, math.Inf(1))(e, v)
		if err == nil {
			err = checkWorkload("Workload.Rate", capacity.Workload{Rate: e.rate})
		}
		return err
	}},
	{envProbeRate, "Workload.ProbeRate", "probe requests per second, 0.001 to 10", func(e *environment, v string) error {
		err := float(func(e *environment) *float64 { return &e.probeRate }, 0, math.Inf(1))(e, v)
		if err == nil {
			err = checkWorkload("Workload.ProbeRate", capacity.Workload{ProbeRate: e.probeRate})
		}
		return err
	}},
	{envArrival, "Workload.Arrival", "constant, poisson or gamma", func(e *environment, v string) error {
		e.arrival = capacity.ArrivalProcess(v)
		if checkWorkload("Workload.Arrival", capacity.Workload{Rate: 1, Arrival: e.arrival}) != nil {
			return errNotAllowed
		}
		return nil
	}},
	{envBurstiness, "Workload.Burstiness", "a positive gamma shape", func(e *environment, v string) error {
		err := float(func(e *environment) *float64 { return &e.burstiness }, 0, math.Inf(1))(e, v)
		if err == nil {
			err = checkWorkload("Workload.Burstiness", capacity.Workload{Rate: 1, Burstiness: e.burstiness})
		}
		return err
	}},
	{envSLOTTFT, "SLO.TTFT", "a positive duration such as 500ms", duration(func(e *environment) *time.Duration { return &e.slo.TTFT }, 0)},
	{envSLOTPOT, "SLO.TPOT", "a positive duration such as 50ms", duration(func(e *environment) *time.Duration { return &e.slo.TPOT }, 0)},
	{envSLOE2E, "SLO.E2E", "a positive duration such as 10s", duration(func(e *environment) *time.Duration { return &e.slo.E2E }, 0)},
	{envSLOAttainment, "SLO.Attainment", "a share in (0, 1]", func(e *environment, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err == nil && !(f > 0 && f <= 1) {
			err = errOutOfRange
		}
		e.slo.Attainment = f
		return err
	}},
	{envShard, "Workload.Shard", "i/N, 0 <= i < N", parseShard},
	{envShards, "Workload.Shard", "the shard count, N >= 1 (the index from " + jobCompletionIndex + ")", parseShards},
	{envStartAt, "Workload.Shard.StartAt", "an RFC 3339 instant such as 2027-03-04T05:06:07Z", parseStartAt},
	{envFakeProfile, "", "a profile of the fake server: " + strings.Join(fakeserver.ProfileNames(), ", "), func(e *environment, v string) error {
		if _, err := fakeserver.Profile(v); err != nil {
			return err
		}
		e.fakeProfile = v
		return nil
	}},
	{envFakeTimeScale, "", "a number in (0, 1000]", float(func(e *environment) *float64 { return &e.fakeTimeScale }, 0, 1000)},
	{envFakeDecodeStep, "", "a duration in (0, 1m]", duration(func(e *environment) *time.Duration { return &e.fakeDecodeStep }, time.Minute)},
	{envProgress, "", "0 (off) or 1 (a live line on a terminal, a heartbeat line every 10 s elsewhere)", boolean(func(e *environment) **bool { return &e.progress })},
	{envHTML, "", "1 (write " + htmlReportName + " beside the artifacts) or 0", boolean(func(e *environment) **bool { return &e.html })},
	{envMetricsURL, "Target.MetricsURL", "an http(s) URL of the server's Prometheus metrics, or off", func(e *environment, v string) error {
		if _, err := servermetrics.EndpointURL("http://base.invalid", v); err != nil {
			return errNotAllowed
		}
		e.metricsURL = v
		return nil
	}},
	{envMetricsInterval, "Target.MetricsInterval", "a duration in " + intervalRange() + " such as 5s, the time between samples", func(e *environment, v string) error {
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
		case d == 0: // Target's 0 is the default; a variable set to 0 is a mistake
			err = errOutOfRange
		default:
			err = servermetrics.Config{Interval: d}.Check() // its range
		}
		e.metricsInterval = d
		return err
	}},
	{envGPUMetricsURL, "Target.GPUMetricsURLs", "http(s) URLs of the GPUs' DCGM exporters, comma-separated, one per node", func(e *environment, v string) error {
		e.gpuMetricsURLs = splitList(v)
		if (servermetrics.Config{}).CheckGPUs(e.gpuMetricsURLs, nil, nil) != nil {
			return errNotAllowed
		}
		return nil
	}},
	{envGPUs, "Target.GPUs", "GPU indices, UUIDs or label pairs, comma-separated, such as 0,1 or GPU-5fd3... or Hostname=node-a", func(e *environment, v string) error {
		e.gpus = splitList(v)
		if (servermetrics.Config{GPUs: e.gpus}).Check() != nil {
			return errNotAllowed
		}
		return nil
	}},
	{envPricePerGPUHour, "Target.PricePerGPUHour", "a price >= 0 of one GPU for an hour, such as 2.49", price(func(e *environment) **float64 { return &e.pricePerGPUHour })},
	{envPricePerKWh, "Target.PricePerKWh", "a price >= 0 of a kWh, such as 0.15", price(func(e *environment) **float64 { return &e.pricePerKWh })},
	{envTrace, "", "the path of a trace file", parseTracePath},
	{envTraceFormat, "", "mooncake, azure or jsonl", parseTraceFormat},
	{envTraceSpeedUp, "", "a speed-up factor in [0.001, 1e6] (recorded offsets are divided by it)", parseTraceSpeedUp},
	{envTraceFirst, "", "a number of rows in [1, 10000000]", parseTraceFirst},
	{envTraceWindow, "", "START..END or START.. in Go durations after the trace's first row, such as 10m..20m", parseTraceWindow},
	{envSessions, "", "recorded (the sessions of ANVIL_TRACE) or a session spec such as turns=3,user=200,output=128,think=2s (keys turns, user, output, think, think_dist, seed)", parseSessions},
	{envSessionsCount, "", "a positive number of sessions (each sends at least one of Workload.Requests)", parseSessionsCount},
	{envIgnoreEOS, "", "1 (send ignore_eos and min_tokens with a trace's or sessions' requests) or 0", parseIgnoreEOS},
}

// errOutOfRange and errNotAllowed are the causes of an envError whose
// value parsed but is not allowed.
var (
	errOutOfRange = fmt.Errorf("out of range")
	errNotAllowed = fmt.Errorf("not one of the allowed values")
	errOneObject  = fmt.Errorf("not one JSON object")
)

// readEnvironment parses every variable of envVars through getenv.
func readEnvironment(getenv func(string) string) (environment, error) {
	var e environment
	for _, v := range envVars {
		val := getenv(v.name)
		if val == "" {
			continue
		}
		if err := v.parse(&e, val); err != nil {
			if err == errOutOfRange || err == errNotAllowed {
				err = nil // the allowed range says it
			}
			return environment{}, envError(v.name, val, v.allowed, err)
		}
	}
	return e, nil
}

// redact removes every credential of the run from err, as the run does
// from every string a server or a user's input supplies
// (capacity.Target.RedactError): the API key of the variable the target
// or ANVIL_API_KEY_ENV names, every header value, and the userinfo of the
// base and metrics URLs, configured or in the environment (read as text:
// a URL that does not parse loses its password too). Call it before
// wrapping err: a bad value's text is scrubbed before its message cuts it.
func (s *settings) redact(err error) error {
	if err == nil {
		return nil
	}
	t := s.target
	t.BaseURL = cmp.Or(t.BaseURL, s.getenv(envBaseURL))
	t.MetricsURL = cmp.Or(t.MetricsURL, s.getenv(envMetricsURL))
	if name := cmp.Or(t.APIKeyEnv, s.getenv(envAPIKeyEnv)); name != "" {
		err = t.RedactError(os.Getenv(name), err) // the run's token
		err = t.RedactError(s.getenv(name), err)  // the conformance suite's
	} else {
		err = t.RedactError("", err)
	}
	return err
}

// WithEnvironment reads the ANVIL_* variables through getenv instead of
// os.Getenv; nil reads none, as if every variable were unset. Only the
// process environment is searched for unknown ANVIL_* variables (a typo
// fails the run there, naming the closest variable anviltest reads). An example
// or a test that must run the same whatever the developer's environment
// holds gives its own, e.g. a map's lookup for ANVIL_OUT (the artifact
// directory), ANVIL_FAKE_PROFILE or ANVIL_PROGRESS=0: every setting
// without an Option of its own is one of these variables. The API key is still read from the process environment, from
// the variable Target.APIKeyEnv names.
func WithEnvironment(getenv func(name string) string) Option {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	return func(s *settings) { s.getenv, s.environ = getenv, nil }
}

// env returns the parsed environment of s, parsing it on first use. A
// variable of the process environment that anviltest does not read
// (unknownVariables) is the first error: a typo explains much else.
func (s *settings) env() (environment, error) {
	if !s.envRead {
		s.envCache, s.envErr = readEnvironment(s.getenv)
		s.envErr = s.redact(s.envErr) // a value may hold a credential, or be a URL with one
		if s.environ != nil {
			if err := unknownVariables(s.environ(), []string{s.getenv(envAPIKeyEnv), s.target.APIKeyEnv}); err != nil {
				s.envCache, s.envErr = environment{}, err
			}
		}
		s.envRead = true
	}
	return s.envCache, s.envErr
}

// envFieldNames pairs each configuration field that a variable set in
// s's environment fills with that variable, for explainFields: an error
// about a field names the variable the user set, never one that is unset
// (the field then came from code or a default). ANVIL_SHARD=i/N sets the
// shard's Count and Index; ANVIL_SHARDS the Count, with the Index from
// JOB_COMPLETION_INDEX.
func (s *settings) envFieldNames() [][2]string {
	var out [][2]string
	for _, v := range envVars {
		val := s.getenv(v.name)
		if v.field == "" || val == "" {
			continue
		}
		switch v.name {
		case envShard:
			out = append(out, [2]string{"Workload.Shard.Count", envShard + "=" + val}, [2]string{"Workload.Shard.Index", envShard + "=" + val})
		case envShards:
			out = append(out, [2]string{"Workload.Shard.Count", envShards + "=" + val}, [2]string{"Workload.Shard.Index", jobCompletionIndex})
		default:
			out = append(out, [2]string{v.field, v.name})
		}
	}
	return out
}

// envNames lists every variable anviltest reads.
func envNames() []string {
	out := make([]string, len(envVars))
	for i, v := range envVars {
		out[i] = v.name
	}
	return out
}

// checkWorkload returns the *capacity.FieldError that capacity's own
// validation gives field in w, a Workload with only the variable's field
// set (and what it needs), or nil: a variable's bounds are capacity's,
// stated once there.
func checkWorkload(field string, w capacity.Workload) error {
	_, err := w.Resolved()
	return fieldError(err, field)
}

// checkTarget is checkWorkload for a field of a Target.
func checkTarget(field string, t capacity.Target) error {
	t.BaseURL = "http://env.invalid"
	_, err := t.Resolved()
	return fieldError(err, field)
}

// positiveInt parses v as an integer of at least 1 that check accepts.
func positiveInt(v string, check func(int) error) (int, error) {
	n, err := strconv.Atoi(v)
	switch {
	case err != nil:
	case n < 1:
		err = errOutOfRange
	default:
		err = check(n)
	}
	return n, err
}

// fieldError returns the first *capacity.FieldError of field in err's
// tree, or nil.
func fieldError(err error, field string) error {
	for _, fe := range fieldErrors(err) {
		if fe.Field == field {
			return fe
		}
	}
	return nil
}

// str parses a variable into the string field of e that at returns.
func str(at func(*environment) *string) func(*environment, string) error {
	return func(e *environment, v string) error { *at(e) = v; return nil }
}

// duration parses a positive Go duration, at most limit (0: no limit).
func duration(at func(*environment) *time.Duration, limit time.Duration) func(*environment, string) error {
	return func(e *environment, v string) error {
		d, err := time.ParseDuration(v)
		if err == nil && (d <= 0 || (limit > 0 && d > limit)) {
			err = errOutOfRange
		}
		*at(e) = d
		return err
	}
}

// float parses a number in [lo, hi], or in (0, hi] when lo is 0.
func float(at func(*environment) *float64, lo, hi float64) func(*environment, string) error {
	return func(e *environment, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err == nil && !((lo == 0 && f > 0 || lo > 0 && f >= lo) && f <= hi) {
			err = errOutOfRange
		}
		*at(e) = f
		return err
	}
}

// boolean parses a strconv.ParseBool value.
func boolean(at func(*environment) **bool) func(*environment, string) error {
	return func(e *environment, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errNotAllowed
		}
		*at(e) = &b
		return nil
	}
}

// intervalRange is the sampler's range of intervals, "10ms..1h0m0s".
func intervalRange() string {
	lo, hi := servermetrics.Config{}.IntervalRange()
	return lo.String() + ".." + hi.String()
}

// price parses a price: a finite number >= 0.
func price(field func(*environment) **float64) func(*environment, string) error {
	return func(e *environment, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return err
		}
		if !(f >= 0) || math.IsInf(f, 0) {
			return errOutOfRange
		}
		*field(e) = &f
		return nil
	}
}
