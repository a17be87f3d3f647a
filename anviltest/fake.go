package anviltest

import (
	"fmt"
	"testing"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/traffic"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// defaultFakeProfile is the embedded fake server's profile when no base URL
// is configured: a reasoning model like the seed artifact's (7,800 tok/s
// prefill, speculative decoding at about 235 tok/s per stream, a few hundred
// reasoning tokens before each answer).
const defaultFakeProfile = "reasoning"

// replayFakeProfile is the embedded fake's profile for a trace replay
// (ANVIL_TRACE, or a traffic.Replay of WithTraffic) when none is named: a
// non-reasoning model. A row's output_length is the visible answer it
// recorded, sent as max_tokens; the reasoning default spends a few
// hundred tokens on thought first, so every shorter row ended with no
// visible content (26 of Mooncake's first 60 rows, 324 of Azure's 500).
const replayFakeProfile = "plain"

// defaultFakeTimeScale runs the embedded fake server at this fraction of
// its profile's real time (0.05: twenty times faster), so that the example
// benchmarks (go test -bench Capacity -run '^$' ./anviltest) finish in
// about a minute on two cores while keeping the profile's proportions.
// Reported latencies and rates are those of the scaled clock.
const defaultFakeTimeScale = 0.05

// Environment knobs of the embedded fake server, for experiments such as the
// decode-rate significance check (.ci/decode-significance.sh). Ignored when
// a base URL is configured.
const (
	// envFakeTimeScale overrides defaultFakeTimeScale (a positive number).
	envFakeTimeScale = "ANVIL_FAKE_TIME_SCALE"
	// envFakeDecodeStep overrides the profile's decode step with one running
	// sequence (a Go duration, before time scaling); a longer step is a
	// slower decode rate and changes nothing else.
	envFakeDecodeStep = "ANVIL_FAKE_DECODE_STEP"
)

// fakeEngine is the engine identity recorded for runs against the
// embedded fake server, followed by the profile name.
const fakeEngine = "anvil-fakeserver-"

// fakeConfig returns the embedded fake server's configuration from the
// options and the environment.
func (s *settings) fakeConfig() (fakeserver.Config, string, error) {
	e, err := s.env()
	if err != nil {
		return fakeserver.Config{}, "", err
	}
	name := s.fakeProfile
	if name == "" {
		name = e.fakeProfile
	}
	if name == "" && s.replaysTrace(e) {
		name = replayFakeProfile
	}
	if name == "" {
		name = defaultFakeProfile
	}
	cfg, err := fakeserver.Profile(name)
	if err != nil {
		return cfg, name, fmt.Errorf("anviltest: fake server profile %q: %w", name, err)
	}
	cfg.TimeScale = defaultFakeTimeScale
	if e.fakeTimeScale != 0 {
		cfg.TimeScale = e.fakeTimeScale
	}
	if e.fakeDecodeStep != 0 {
		cfg.DecodeStep = e.fakeDecodeStep
	}
	if err := cfg.Validate(); err != nil {
		return cfg, name, fmt.Errorf("anviltest: embedded fake server: %w", err)
	}
	return cfg, name, nil
}

// startFake starts the embedded fake server for b (closed by b.Cleanup)
// and points t at it. Identity fields t leaves empty name the fake.
func (s *settings) startFake(b testing.TB, t capacity.Target) (capacity.Target, error) {
	b.Helper()
	cfg, name, err := s.fakeConfig()
	if err != nil {
		return t, err
	}
	srv := fakeserver.New(cfg)
	b.Cleanup(srv.Close)
	t.BaseURL = srv.BaseURL()
	if t.Engine == "" {
		t.Engine = fakeEngine + name
	}
	if t.GPU == "" {
		t.GPU = "none"
	}
	why := ""
	if e, _ := s.env(); s.fakeProfile == "" && e.fakeProfile == "" && s.replaysTrace(e) {
		why = fmt.Sprintf(", the default for a trace replay: each row's output_length would end inside the %s profile's thought; %s names another",
			defaultFakeProfile, envFakeProfile)
	}
	b.Logf("no %s: using the embedded fake server (profile %s%s, time scale %g) at %s",
		envBaseURL, name, why, cfg.TimeScale, t.BaseURL)
	return t, nil
}

// replaysTrace reports whether the run replays a trace's rows, each with
// its recorded output length: a traffic.Replay of WithTraffic, else
// ANVIL_TRACE (its rows, or with ANVIL_SESSIONS=recorded its sessions).
func (s *settings) replaysTrace(e environment) bool {
	switch s.traffic.(type) {
	case nil:
		return e.traffic.path != ""
	case traffic.Replay, *traffic.Replay:
		return true
	}
	return false
}
