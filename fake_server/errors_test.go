package fakeserver

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// faultWant is the Want of a fault name check.
var faultWant = "one of [drop empty_body endless extra_words foreign_marker http_400 http_429 http_500 http_503 ignore_max_tokens late_marker malformed_json omit_marker oversized_event reasoning_only slow_headers stall stream_error usage_total_mismatch vector_count vector_dimension vector_nan wrong_content_type]"

// TestConfigValidate: every invalid field is reported as a *ConfigError
// naming the field, the value and the allowed range, and NewUnstarted
// panics with it.
func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want ConfigError
		msg  string
	}{
		{"chars", func(c *Config) { c.CharsPerToken = 100 },
			ConfigError{Field: "CharsPerToken", Value: 100.0, Want: "0.5..64"}, "fakeserver: CharsPerToken = 100: want 0.5..64"},
		{"spec", func(c *Config) { c.SpecTokens = Range{Min: 3, Max: 2} },
			ConfigError{Field: "SpecTokens", Value: Range{Min: 3, Max: 2}, Want: "1 <= Min <= Max"}, "fakeserver: SpecTokens = {3, 2}: want 1 <= Min <= Max"},
		{"reasoning field", func(c *Config) { c.Dialect.ReasoningField = "thoughts" },
			ConfigError{Field: "Dialect.ReasoningField", Value: "thoughts", Want: "reasoning_content or reasoning"}, `fakeserver: Dialect.ReasoningField = "thoughts": want reasoning_content or reasoning`},
		{"fault name", func(c *Config) { c.Faults.ByIndex = map[int]Fault{3: "boom", 5: "bang"} },
			ConfigError{Field: "Faults.ByIndex[3]", Value: "boom", Want: faultWant}, `fakeserver: Faults.ByIndex[3] = "boom": want ` + faultWant},
		{"probability key", func(c *Config) { c.Faults.Probability = map[Fault]float64{"boom": 0.1} },
			ConfigError{Field: "Faults.Probability", Value: "boom", Want: "keys " + faultWant}, ""},
		{"probability sum", func(c *Config) {
			c.Faults.Probability = map[Fault]float64{faultDrop: 0.7, faultStall: 0.7}
		}, ConfigError{Field: "Faults.Probability", Value: map[Fault]float64{faultDrop: 0.7, faultStall: 0.7},
			Want: "probabilities summing to <= 1 (sum 1.4)"}, "fakeserver: Faults.Probability = map[drop:0.7 stall:0.7]: want probabilities summing to <= 1 (sum 1.4)"},
		{"max seqs", func(c *Config) { c.MaxSeqs = -1 },
			ConfigError{Field: "MaxSeqs", Value: -1, Want: ">= 1"}, "fakeserver: MaxSeqs = -1: want >= 1"},
		{"chars NaN", func(c *Config) { c.CharsPerToken = math.NaN() },
			ConfigError{Field: "CharsPerToken", Value: math.NaN(), Want: "0.5..64"}, "fakeserver: CharsPerToken = NaN: want 0.5..64"},
		{"prefill Inf", func(c *Config) { c.PrefillTokensPerSecond = math.Inf(1) },
			ConfigError{Field: "PrefillTokensPerSecond", Value: math.Inf(1), Want: "a finite rate > 0"}, "fakeserver: PrefillTokensPerSecond = +Inf: want a finite rate > 0"},
		{"prefill negative", func(c *Config) { c.PrefillTokensPerSecond = -5 },
			ConfigError{Field: "PrefillTokensPerSecond", Value: -5.0, Want: "a finite rate > 0"}, ""},
		{"time scale NaN", func(c *Config) { c.TimeScale = math.NaN() },
			ConfigError{Field: "TimeScale", Value: math.NaN(), Want: "a finite factor > 0"}, ""},
		{"time scale negative", func(c *Config) { c.TimeScale = -1 },
			ConfigError{Field: "TimeScale", Value: -1.0, Want: "a finite factor > 0"}, "fakeserver: TimeScale = -1: want a finite factor > 0"},
		{"probability NaN", func(c *Config) {
			c.Faults.Probability = map[Fault]float64{faultDrop: math.NaN()}
		}, ConfigError{Field: "Faults.Probability[drop]", Value: math.NaN(), Want: "0..1"}, "fakeserver: Faults.Probability[drop] = NaN: want 0..1"},
		{"slow headers", func(c *Config) { c.Faults.SlowHeaders = -time.Second },
			ConfigError{Field: "Faults.SlowHeaders", Value: -time.Second, Want: ">= 0"}, "fakeserver: Faults.SlowHeaders = -1s: want >= 0"},
		{"usage mode", func(c *Config) { c.Dialect.Usage = "first" },
			ConfigError{Field: "Dialect.Usage", Value: "first", Want: "final, last-choice or none"},
			`fakeserver: Dialect.Usage = "first": want final, last-choice or none`},
		{"oversize", func(c *Config) { c.Faults.OversizeBytes = -1 },
			ConfigError{Field: "Faults.OversizeBytes", Value: -1, Want: ">= 0"}, ""},
		{"answer range", func(c *Config) { c.AnswerTokens = Range{Min: -1, Max: 4} },
			ConfigError{Field: "AnswerTokens", Value: Range{Min: -1, Max: 4}, Want: "0 <= Min <= Max"}, "fakeserver: AnswerTokens = {-1, 4}: want 0 <= Min <= Max"},
		{"decode step", func(c *Config) { c.DecodeStep = -time.Millisecond },
			ConfigError{Field: "DecodeStep", Value: -time.Millisecond, Want: "> 0"}, "fakeserver: DecodeStep = -1ms: want > 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Fast()
			tc.edit(&c)
			err := c.Validate()
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			if diff := cmp.Diff(tc.want, *ce, cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("ConfigError (-want +got):\n%s", diff)
			}
			if tc.msg != "" {
				assert.Equal(t, tc.msg, err.Error())
			}
			assert.PanicsWithError(t, err.Error(), func() { NewUnstarted(c) })
		})
	}
	for _, name := range ProfileNames() {
		c, err := Profile(name)
		require.NoError(t, err)
		require.NoError(t, c.Validate(), name)
	}
}

// TestLookupErrors: unknown profile, dialect and fault names are
// ConfigErrors too.
func TestLookupErrors(t *testing.T) {
	_, perr := Profile("huge")
	_, derr := DialectByName("tgi")
	_, ferr := ParseFault("boom")
	for _, tc := range []struct {
		err  error
		want ConfigError
		msg  string
	}{
		{perr, ConfigError{Field: "Profile", Value: "huge", Want: "one of [fast plain reasoning]"}, `fakeserver: Profile = "huge": want one of [fast plain reasoning]`},
		{derr, ConfigError{Field: "Dialect", Value: "tgi", Want: "vllm, ollama or mock-llm"}, `fakeserver: Dialect = "tgi": want vllm, ollama or mock-llm`},
		{ferr, ConfigError{Field: "Fault", Value: "boom", Want: faultWant}, `fakeserver: Fault = "boom": want ` + faultWant},
	} {
		var ce *ConfigError
		require.True(t, errors.As(tc.err, &ce), "%v", tc.err)
		if diff := cmp.Diff(tc.want, *ce); diff != "" {
			t.Errorf("ConfigError (-want +got):\n%s", diff)
		}
		assert.Equal(t, tc.msg, tc.err.Error())
	}
}
