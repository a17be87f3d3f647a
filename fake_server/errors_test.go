package fakeserver_test

import (
	"errors"
	"math"
	"testing"
	"time"

	fakeserver "github.com/anvilbench/anvil/fake_server"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// faultWant is the Want of a fault name check.
var faultWant = "one of [drop empty_body endless extra_words foreign_marker http_400 http_429 http_500 http_503 ignore_max_tokens late_marker malformed_json omit_marker oversized_event reasoning_only slow_headers stall stream_error usage_total_mismatch wrong_content_type]"

// TestConfigValidate: every invalid field is reported as a *ConfigError
// naming the field, the value and the allowed range, and NewUnstarted
// panics with it.
func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*fakeserver.Config)
		want fakeserver.ConfigError
		msg  string
	}{
		{"chars", func(c *fakeserver.Config) { c.CharsPerToken = 100 },
			fakeserver.ConfigError{Field: "CharsPerToken", Value: 100.0, Want: "0.5..64"}, "fakeserver: CharsPerToken = 100: want 0.5..64"},
		{"spec", func(c *fakeserver.Config) { c.SpecTokens = fakeserver.Range{Min: 3, Max: 2} },
			fakeserver.ConfigError{Field: "SpecTokens", Value: fakeserver.Range{Min: 3, Max: 2}, Want: "1 <= Min <= Max"}, "fakeserver: SpecTokens = {3, 2}: want 1 <= Min <= Max"},
		{"reasoning field", func(c *fakeserver.Config) { c.Dialect.ReasoningField = "thoughts" },
			fakeserver.ConfigError{Field: "Dialect.ReasoningField", Value: "thoughts", Want: "reasoning_content or reasoning"}, `fakeserver: Dialect.ReasoningField = "thoughts": want reasoning_content or reasoning`},
		{"fault name", func(c *fakeserver.Config) { c.Faults.ByIndex = map[int]fakeserver.Fault{3: "boom", 5: "bang"} },
			fakeserver.ConfigError{Field: "Faults.ByIndex[3]", Value: "boom", Want: faultWant}, `fakeserver: Faults.ByIndex[3] = "boom": want ` + faultWant},
		{"probability key", func(c *fakeserver.Config) { c.Faults.Probability = map[fakeserver.Fault]float64{"boom": 0.1} },
			fakeserver.ConfigError{Field: "Faults.Probability", Value: "boom", Want: "keys " + faultWant}, ""},
		{"probability sum", func(c *fakeserver.Config) {
			c.Faults.Probability = map[fakeserver.Fault]float64{fakeserver.FaultDrop: 0.7, fakeserver.FaultStall: 0.7}
		}, fakeserver.ConfigError{Field: "Faults.Probability", Value: map[fakeserver.Fault]float64{fakeserver.FaultDrop: 0.7, fakeserver.FaultStall: 0.7},
			Want: "probabilities summing to <= 1 (sum 1.4)"}, "fakeserver: Faults.Probability = map[drop:0.7 stall:0.7]: want probabilities summing to <= 1 (sum 1.4)"},
		{"max seqs", func(c *fakeserver.Config) { c.MaxSeqs = -1 },
			fakeserver.ConfigError{Field: "MaxSeqs", Value: -1, Want: ">= 1"}, "fakeserver: MaxSeqs = -1: want >= 1"},
		{"chars NaN", func(c *fakeserver.Config) { c.CharsPerToken = math.NaN() },
			fakeserver.ConfigError{Field: "CharsPerToken", Value: math.NaN(), Want: "0.5..64"}, "fakeserver: CharsPerToken = NaN: want 0.5..64"},
		{"prefill Inf", func(c *fakeserver.Config) { c.PrefillTokensPerSecond = math.Inf(1) },
			fakeserver.ConfigError{Field: "PrefillTokensPerSecond", Value: math.Inf(1), Want: "a finite rate > 0"}, "fakeserver: PrefillTokensPerSecond = +Inf: want a finite rate > 0"},
		{"prefill negative", func(c *fakeserver.Config) { c.PrefillTokensPerSecond = -5 },
			fakeserver.ConfigError{Field: "PrefillTokensPerSecond", Value: -5.0, Want: "a finite rate > 0"}, ""},
		{"time scale NaN", func(c *fakeserver.Config) { c.TimeScale = math.NaN() },
			fakeserver.ConfigError{Field: "TimeScale", Value: math.NaN(), Want: "a finite factor > 0"}, ""},
		{"time scale negative", func(c *fakeserver.Config) { c.TimeScale = -1 },
			fakeserver.ConfigError{Field: "TimeScale", Value: -1.0, Want: "a finite factor > 0"}, "fakeserver: TimeScale = -1: want a finite factor > 0"},
		{"probability NaN", func(c *fakeserver.Config) {
			c.Faults.Probability = map[fakeserver.Fault]float64{fakeserver.FaultDrop: math.NaN()}
		}, fakeserver.ConfigError{Field: "Faults.Probability[drop]", Value: math.NaN(), Want: "0..1"}, "fakeserver: Faults.Probability[drop] = NaN: want 0..1"},
		{"slow headers", func(c *fakeserver.Config) { c.Faults.SlowHeaders = -time.Second },
			fakeserver.ConfigError{Field: "Faults.SlowHeaders", Value: -time.Second, Want: ">= 0"}, "fakeserver: Faults.SlowHeaders = -1s: want >= 0"},
		{"usage mode", func(c *fakeserver.Config) { c.Dialect.Usage = 7 },
			fakeserver.ConfigError{Field: "Dialect.Usage", Value: 7, Want: "0..2"}, "fakeserver: Dialect.Usage = 7: want 0..2"},
		{"oversize", func(c *fakeserver.Config) { c.Faults.OversizeBytes = -1 },
			fakeserver.ConfigError{Field: "Faults.OversizeBytes", Value: -1, Want: ">= 0"}, ""},
		{"answer range", func(c *fakeserver.Config) { c.AnswerTokens = fakeserver.Range{Min: -1, Max: 4} },
			fakeserver.ConfigError{Field: "AnswerTokens", Value: fakeserver.Range{Min: -1, Max: 4}, Want: "0 <= Min <= Max"}, "fakeserver: AnswerTokens = {-1, 4}: want 0 <= Min <= Max"},
		{"decode step", func(c *fakeserver.Config) { c.DecodeStep = -time.Millisecond },
			fakeserver.ConfigError{Field: "DecodeStep", Value: -time.Millisecond, Want: "> 0"}, "fakeserver: DecodeStep = -1ms: want > 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeserver.Fast()
			tc.edit(&c)
			err := c.Validate()
			var ce *fakeserver.ConfigError
			require.ErrorAs(t, err, &ce)
			if diff := cmp.Diff(tc.want, *ce, cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("ConfigError (-want +got):\n%s", diff)
			}
			if tc.msg != "" {
				assert.Equal(t, tc.msg, err.Error())
			}
			assert.PanicsWithError(t, err.Error(), func() { fakeserver.NewUnstarted(c) })
		})
	}
	for _, name := range fakeserver.ProfileNames() {
		c, err := fakeserver.Profile(name)
		require.NoError(t, err)
		require.NoError(t, c.Validate(), name)
	}
}

// TestLookupErrors: unknown profile, dialect and fault names are
// ConfigErrors too.
func TestLookupErrors(t *testing.T) {
	_, perr := fakeserver.Profile("huge")
	_, derr := fakeserver.DialectByName("tgi")
	_, ferr := fakeserver.ParseFault("boom")
	for _, tc := range []struct {
		err  error
		want fakeserver.ConfigError
		msg  string
	}{
		{perr, fakeserver.ConfigError{Field: "Profile", Value: "huge", Want: "one of [fast plain reasoning]"}, `fakeserver: Profile = "huge": want one of [fast plain reasoning]`},
		{derr, fakeserver.ConfigError{Field: "Dialect", Value: "tgi", Want: "vllm, ollama or mock-llm"}, `fakeserver: Dialect = "tgi": want vllm, ollama or mock-llm`},
		{ferr, fakeserver.ConfigError{Field: "Fault", Value: "boom", Want: faultWant}, `fakeserver: Fault = "boom": want ` + faultWant},
	} {
		var ce *fakeserver.ConfigError
		require.True(t, errors.As(tc.err, &ce), "%v", tc.err)
		if diff := cmp.Diff(tc.want, *ce); diff != "" {
			t.Errorf("ConfigError (-want +got):\n%s", diff)
		}
		assert.Equal(t, tc.msg, tc.err.Error())
	}
}
