package anviltest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/trace"
	"github.com/anvilbench/anvil/capacity/traffic"
)

// env is a fake environment for withGetenv.
type env map[string]string

func (e env) get(k string) string { return e[k] }

func TestResolveTargetOptionsWinOverEnvironment(t *testing.T) {
	e := env{
		envBaseURL: "http://gpu-box:8000/v1", envModel: "qwen", envAPIKeyEnv: "MY_KEY",
		envEngine: "vllm-0.11", envGPU: "h100", envMaxModelLen: "131072",
	}
	s := newSettings([]Option{WithEnvironment(e.get), WithTarget(capacity.Target{Model: "llama", GPU: "b200"})})
	got, err := s.resolveTarget()
	require.NoError(t, err)
	require.Equal(t, "http://gpu-box:8000/v1", got.BaseURL)
	require.Equal(t, "llama", got.Model, "an option wins over ANVIL_MODEL")
	require.Equal(t, "b200", got.GPU, "an option wins over ANVIL_GPU")
	require.Equal(t, "MY_KEY", got.APIKeyEnv)
	require.Equal(t, "vllm-0.11", got.Engine)
	require.Equal(t, 131072, got.MaxModelLen)
}

func TestOptionsApplyInOrderAndNilIsSkipped(t *testing.T) {
	var none Option
	s := newSettings([]Option{withOutDir("a"), none, withFakeProfile("plain"), withOutDir("b"), nil})
	require.Equal(t, "b", s.outDir, "the later option wins")
	require.Equal(t, "plain", s.fakeProfile)
	require.NotNil(t, s.run, "the default runner stays")
}

func TestEnvironmentErrorsNameVariableValueAndRange(t *testing.T) {
	for _, tc := range []struct {
		name, value, want string
	}{
		{envMaxModelLen, "lots", "ANVIL_MAX_MODEL_LEN = \"lots\": want an integer: strconv.Atoi"},
		{envMaxModelLen, "-1", "ANVIL_MAX_MODEL_LEN = \"-1\": want an integer: capacity: Target.MaxModelLen = -1: must be in 0..1048576"},
		{envWarmup, "16385", "ANVIL_WARMUP = \"16385\": want a request count, a duration such as 30s, or steady: capacity: Workload.Warmup = 16385: must be in 0..16384"},
		{envWarmup, "2h", "ANVIL_WARMUP = \"2h\": want a request count, a duration such as 30s, or steady: capacity: Workload.WarmupFor = 2h0m0s: must be in 0..1h0m0s"},
		{envWarmup, "soon", "ANVIL_WARMUP = \"soon\": want a request count, a duration such as 30s, or steady: time: invalid duration"},
		{envTimeout, "2h", "ANVIL_TIMEOUT = \"2h\": want a positive duration such as 90s: capacity: Workload.Timeout = 2h0m0s: must be in (0s, 1h0m0s]"},
		{envTimeout, "0s", "ANVIL_TIMEOUT = \"0s\": want a positive duration such as 90s"},
		{envFakeTimeScale, "0", "ANVIL_FAKE_TIME_SCALE = \"0\": want a number in (0, 1000]"},
		{envFakeDecodeStep, "soon", "ANVIL_FAKE_DECODE_STEP = \"soon\": want a duration in (0, 1m]"},
		{envExtraBody, "cache_prompt", `ANVIL_EXTRA_BODY = "cache_prompt": want a JSON object such as {"cache_prompt":false}: invalid character`},
		{envExtraBody, "null", `ANVIL_EXTRA_BODY = "null": want a JSON object such as {"cache_prompt":false}: not one JSON object`},
		{envExtraBody, `{"a":1} {"b":2}`, `want a JSON object such as {"cache_prompt":false}: not one JSON object`},
		{envExtraBody, `{"max_tokens":8}`, `capacity: Target.ExtraBody`},
	} {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			s := newSettings([]Option{WithEnvironment(env{tc.name: tc.value}.get)})
			_, err1 := s.resolveTarget()
			_, err2 := s.applyWorkloadEnv(capacity.Workload{})
			_, _, err3 := s.fakeConfig()
			var err error
			for _, e := range []error{err1, err2, err3} {
				if e != nil {
					err = e
				}
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestWorkloadEnvFillsOnlyZeroFields(t *testing.T) {
	e := env{envWarmup: "2", envTimeout: "90s", envClockDomainID: "lab-1",
		envConfigurationFingerprint: "sha256:" + string(make64('a'))}
	s := newSettings([]Option{WithEnvironment(e.get)})
	got, err := s.applyWorkloadEnv(capacity.Workload{Timeout: time.Minute})
	require.NoError(t, err)
	require.Equal(t, 2, got.Warmup)
	require.Equal(t, time.Minute, got.Timeout, "the Workload's own value wins")
	_, err = got.Resolved()
	require.NoError(t, err)
	for v, want := range map[string]capacity.Workload{
		"30s": {WarmupFor: 30 * time.Second}, "steady": {WarmupSteady: true}, "7": {Warmup: 7},
	} {
		s := newSettings([]Option{WithEnvironment(env{envWarmup: v}.get)})
		got, err := s.applyWorkloadEnv(capacity.Workload{})
		require.NoError(t, err)
		require.Equal(t, want.Warmup, got.Warmup, v)
		require.Equal(t, want.WarmupFor, got.WarmupFor, v)
		require.Equal(t, want.WarmupSteady, got.WarmupSteady, v)
		got, err = s.applyWorkloadEnv(capacity.Workload{WarmupFor: time.Second})
		require.NoError(t, err)
		require.Equal(t, capacity.Workload{WarmupFor: time.Second}.Warmup, got.Warmup, "a Workload's own warm-up wins: %s", v)
		require.False(t, got.WarmupSteady, v)
	}

	// The identity labels are the Target's.
	tgt, err := s.resolveTarget()
	require.NoError(t, err)
	require.Equal(t, "lab-1", tgt.ClockDomainID)
	require.Equal(t, e[envConfigurationFingerprint], tgt.ConfigurationFingerprint)
}

func make64(c byte) []byte {
	b := make([]byte, 64)
	for i := range b {
		b[i] = c
	}
	return b
}

func TestFakeConfig(t *testing.T) {
	s := newSettings([]Option{WithEnvironment(env{}.get)})
	cfg, name, err := s.fakeConfig()
	require.NoError(t, err)
	require.Equal(t, defaultFakeProfile, name)
	require.Equal(t, defaultFakeTimeScale, cfg.TimeScale)
	require.NotZero(t, cfg.ReasoningTokens.Max, "the default profile is a reasoning model")

	s = newSettings([]Option{withFakeProfile("plain"), WithEnvironment(env{
		envFakeProfile: "fast", envFakeTimeScale: "0.5", envFakeDecodeStep: "20ms"}.get)})
	cfg, name, err = s.fakeConfig()
	require.NoError(t, err)
	require.Equal(t, "plain", name, "the option wins over ANVIL_FAKE_PROFILE")
	require.Equal(t, 0.5, cfg.TimeScale)
	require.Equal(t, 20*time.Millisecond, cfg.DecodeStep)

	s = newSettings([]Option{WithEnvironment(env{envFakeProfile: "turbo"}.get)})
	_, _, err = s.fakeConfig()
	require.ErrorContains(t, err, `ANVIL_FAKE_PROFILE = "turbo"`)

	// A trace replay's rows carry their visible answer's length: the
	// default is then a non-reasoning profile, unless one is named.
	for _, tc := range []struct {
		name string
		opts []Option
		want string
	}{
		{"ANVIL_TRACE", []Option{WithEnvironment(env{envTrace: "rows.jsonl"}.get)}, replayFakeProfile},
		{"WithTraffic", []Option{WithEnvironment(env{}.get), WithTraffic(traffic.Replay{})}, replayFakeProfile},
		{"named", []Option{WithEnvironment(env{envTrace: "rows.jsonl", envFakeProfile: "reasoning"}.get)}, "reasoning"},
		{"sessions", []Option{WithEnvironment(env{}.get), WithTraffic(&traffic.Sessions{})}, defaultFakeProfile},
	} {
		_, name, err = newSettings(tc.opts).fakeConfig()
		require.NoError(t, err)
		require.Equal(t, tc.want, name, tc.name)
	}
}

// wants is progressWanted for tests: it must not fail.
func wants(t *testing.T, s *settings, f *os.File) bool {
	t.Helper()
	on, err := s.progressWanted(f)
	require.NoError(t, err)
	return on
}

func TestProgressOnlyOnATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "captured"))
	require.NoError(t, err)
	defer f.Close()
	s := newSettings([]Option{WithEnvironment(env{}.get)})
	require.False(t, wants(t, s, f), "a regular file is captured output")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	require.False(t, wants(t, s, w), "a pipe is captured output")

	tty, err := os.OpenFile("/dev/null", os.O_WRONLY, 0) // a character device
	require.NoError(t, err)
	defer tty.Close()
	require.True(t, wants(t, s, tty))
	for _, v := range []string{"0", "false"} {
		off := newSettings([]Option{WithEnvironment(env{envProgress: v}.get)})
		require.False(t, wants(t, off, tty), "ANVIL_PROGRESS=%s", v)
	}
	on := newSettings([]Option{WithEnvironment(env{envProgress: "1"}.get)})
	require.True(t, wants(t, on, tty))
	require.False(t, wants(t, on, w), "ANVIL_PROGRESS=1 never draws into captured output")
	dumb := newSettings([]Option{WithEnvironment(env{"TERM": "dumb"}.get)})
	require.False(t, wants(t, dumb, tty))
	forced := newSettings([]Option{withProgress(true), WithEnvironment(env{envProgress: "maybe"}.get)})
	require.True(t, wants(t, forced, w), "the option wins over the environment")

	bad := newSettings([]Option{WithEnvironment(env{envProgress: "maybe"}.get)})
	_, err = bad.progressWanted(tty)
	require.EqualError(t, err, `anviltest: ANVIL_PROGRESS = "maybe": want 0 (off) or 1 (a live line on a terminal, a heartbeat line every 10 s elsewhere)`)
}

// TestExplainFieldsNamesTheSources: capacity's errors name Go fields; the
// environment variable or flag that set each is added, and other errors
// are left alone.
func TestExplainFieldsNamesTheSources(t *testing.T) {
	clearEnv(t) // the API key variable below must be unset
	// The variables are set (to anything): a field is explained by a
	// variable only when the user set it.
	set := newSettings([]Option{WithEnvironment(env{envAPIKeyEnv: "x", envBaseURL: "x", envClockDomainID: "x"}.get)})
	sources := append(set.envFieldNames(), benchtimeFieldNames(capacity.Workload{}, benchtime{n: 20000})...)
	unset := newSettings([]Option{WithEnvironment(nil)}).envFieldNames()
	for _, tc := range []struct {
		name string
		t    capacity.Target
		w    capacity.Workload
		want string
	}{
		{"api key variable", capacity.Target{BaseURL: "http://h/v1", APIKeyEnv: "ANVIL_TEST_UNSET_KEY_VARIABLE"},
			capacity.Workload{}, `Target.APIKeyEnv = "ANVIL_TEST_UNSET_KEY_VARIABLE": names an environment variable that is unset or empty (Target.APIKeyEnv comes from ANVIL_API_KEY_ENV)`},
		{"base URL without a scheme", capacity.Target{BaseURL: "admin:hunter2@gpu-box:8000"},
			capacity.Workload{}, `"gpu-box:8000": has no scheme: add http:// (or https://), as in http://gpu-box:8000 (Target.BaseURL comes from ANVIL_BASE_URL)`},
		{"clock domain", capacity.Target{BaseURL: "http://h/v1", ClockDomainID: "bad id!"},
			capacity.Workload{}, "(Target.ClockDomainID comes from ANVIL_CLOCK_DOMAIN_ID)"},
		{"requests from -benchtime", capacity.Target{BaseURL: "http://h/v1"},
			capacity.Workload{ContextTokens: 4096, Concurrency: 4, Requests: 20000}, "(Workload.Requests comes from -benchtime 20000x)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := capacity.Run(t.Context(), tc.t, tc.w)
			require.ErrorIs(t, err, capacity.ErrInvalidConfig)
			got := explainFields(err, sources...)
			require.ErrorIs(t, got, capacity.ErrInvalidConfig, "still wraps the cause")
			require.Contains(t, got.Error(), tc.want)
			require.NotContains(t, got.Error(), "hunter2", "the URL's credentials stay hidden")
			require.NotContains(t, explainFields(err, unset...).Error(), "comes from ANVIL_", "a field the code set")
		})
	}
	plain := errors.New("capacity: HTTP 500")
	require.Same(t, plain, explainFields(plain, sources...), "an error naming no field is unchanged")
	require.NoError(t, explainFields(nil, sources...))
	require.Nil(t, benchtimeFieldNames(capacity.Workload{Requests: 5}, benchtime{n: 20}), "a Workload that sizes itself")
	require.Equal(t, [][2]string{{"Workload.Duration", "-benchtime 2h0m0s"}},
		benchtimeFieldNames(capacity.Workload{}, benchtime{d: 2 * time.Hour}))
}

// TestFieldErrorsOfEveryPackage: the field errors of a tree are found
// whichever package made them: capacity's own, and package trace's,
// which errors.As takes for *capacity.FieldError.
func TestFieldErrorsOfEveryPackage(t *testing.T) {
	_, capErr := capacity.Workload{Concurrency: 20000}.Resolved()
	traceErr := trace.Format("csv").Check()
	require.Error(t, traceErr)
	got := fieldErrors(fmt.Errorf("run: %w", errors.Join(capErr, errors.New("plain"), traceErr)))
	var fields []string
	for _, fe := range got {
		fields = append(fields, fe.Pkg+" "+fe.Field)
	}
	require.Equal(t, []string{"capacity Workload.Concurrency", "trace format"}, fields)
}

// TestExtraBodyFromEnvironment: ANVIL_EXTRA_BODY fills Target.ExtraBody
// (numbers kept as written) unless the Target sets one.
func TestExtraBodyFromEnvironment(t *testing.T) {
	e := env{envExtraBody: `{"cache_prompt":false,"n_keep":12345678901234567890}`}
	got, err := newSettings([]Option{WithEnvironment(e.get)}).resolveTarget()
	require.NoError(t, err)
	require.Equal(t, map[string]any{"cache_prompt": false, "n_keep": json.Number("12345678901234567890")}, got.ExtraBody)
	b, err := json.Marshal(got.ExtraBody)
	require.NoError(t, err)
	require.JSONEq(t, `{"cache_prompt":false,"n_keep":12345678901234567890}`, string(b))

	got, err = newSettings([]Option{WithEnvironment(e.get), WithTarget(capacity.Target{ExtraBody: map[string]any{"id_slot": 0}})}).resolveTarget()
	require.NoError(t, err)
	require.Equal(t, map[string]any{"id_slot": 0}, got.ExtraBody, "the Target's ExtraBody wins")
}
