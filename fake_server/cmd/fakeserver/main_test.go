package main

import (
	"bufio"
	"context"
	"flag"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	fakeserver "github.com/anvilbench/anvil/fake_server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServe runs the command on a free port, streams one completion with a
// per-request fault flag applied, and stops it by cancelling the context.
func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-profile", "fast", "-dialect", "ollama",
			"-reasoning-tokens", "0", "-fault-at", "1=http_503", "-dialect-crlf"}, pw)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	require.True(t, lines.Scan())
	url := regexp.MustCompile(`http://\S+/v1`).FindString(lines.Text())
	require.NotEmpty(t, url, lines.Text())
	go func() { _, _ = io.Copy(io.Discard, pr) }()

	post := func() *http.Response {
		resp, err := http.Post(url+"/chat/completions", "application/json",
			strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"exactly 2 words code"}]}`))
		require.NoError(t, err)
		return resp
	}
	resp := post()
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.Contains(t, string(body), `"delta":{"role":"assistant","content":"code"}`)
	assert.True(t, strings.HasSuffix(string(body), "data: [DONE]\r\n\r\n"), "CRLF framing")
	assert.NotContains(t, string(body), `"reasoning"`)

	resp = post()
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "-fault-at 1=http_503")

	cancel()
	require.NoError(t, <-done)
}

func TestFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-profile", "huge"}, `-profile: Profile = "huge": want one of [fast plain reasoning]`},
		{[]string{"-dialect", "tgi"}, `-dialect: Dialect = "tgi": want vllm, ollama or mock-llm`},
		{[]string{"-fault-at", "x=drop"}, `index "x": want INDEX=FAULT with INDEX >= 0`},
		{[]string{"-fault-at", "3"}, `"3": want INDEX=FAULT,...`},
		{[]string{"-fault-prob", "drop=often"}, `probability "often": want FAULT=PROBABILITY with PROBABILITY in 0..1`},
		{[]string{"-fault-prob", "boom=0.1"}, `Fault = "boom": want one of`},
		{[]string{"-dialect-usage", "sometimes"}, `"sometimes": want one of final, last-choice, none`},
		{[]string{"-tokenizer", "sentencepiece"}, `"sentencepiece": want one of bpe, chars, words`},
		{[]string{"-max-seqs", "many"}, `invalid value "many" for flag -max-seqs`},
		// Validate's errors name the flag as well as the field.
		{[]string{"-fault-prob", "drop=2"}, "-fault-prob: Faults.Probability[drop] = 2: want 0..1"},
		{[]string{"-fault-prob", "drop=0.6,stall=0.6"}, "-fault-prob: Faults.Probability = map[drop:0.6 stall:0.6]: want probabilities summing to <= 1 (sum 1.2)"},
		{[]string{"-spec-tokens", "3,1"}, "-spec-tokens: SpecTokens = {3, 1}: want 1 <= Min <= Max"},
		{[]string{"-chars-per-token", "NaN"}, "-chars-per-token: CharsPerToken = NaN: want 0.5..64"},
		{[]string{"-fault-prob", "drop=NaN"}, "-fault-prob: Faults.Probability[drop] = NaN: want 0..1"},
		{[]string{"-time-scale", "-1"}, "-time-scale: TimeScale = -1: want a finite factor > 0"},
		{[]string{"-dialect-keep-alive", "-1s"}, "-dialect-keep-alive: Dialect.KeepAlive = -1s: want >= 0"},
		{[]string{"-dialect-reasoning-field", "thoughts"}, `-dialect-reasoning-field: Dialect.ReasoningField = "thoughts": want reasoning_content or reasoning`},
		{[]string{"-stall-for", "-1s"}, "-stall-for: StallFor = -1s: want >= 0"},
		{[]string{"-idle-timeout", "-1s"}, "-idle-timeout: IdleTimeout = -1s: want >= 0"},
		{[]string{"-dialect-gzip", "br"}, `"br": want one of always, if-accepted, off`},
		{[]string{"-max-traces", "-1"}, "-max-traces: MaxTraces = -1: want >= 0"},
		// A zero that Config would replace with a default is refused.
		{[]string{"-prefill-tok-s", "0"}, "-prefill-tok-s 0: want a finite rate > 0"},
		{[]string{"-time-scale", "-0"}, "-time-scale -0: want a finite factor > 0"},
		{[]string{"-fault-stall", "0s"}, "-fault-stall 0s: want > 0"},
		{[]string{"-spec-tokens", "0"}, "-spec-tokens 0,0: want 1 <= MIN <= MAX"},
		{[]string{"-model", ""}, `-model "": want a non-empty model id`},
		{[]string{"-addr", "127.0.0.1:0", "serve"}, `unexpected argument "serve"`},
	} {
		err := run(context.Background(), tc.args, io.Discard)
		require.Error(t, err, "%v", tc.args)
		assert.Contains(t, err.Error(), tc.want, "%v", tc.args)
	}
}

// TestFlagErrorIsConfigError: a Validate error reaches the caller as the
// *fakeserver.ConfigError, matched with errors.As, not by its text.
func TestFlagErrorIsConfigError(t *testing.T) {
	err := run(context.Background(), []string{"-max-seqs", "-3"}, io.Discard)
	var ce *fakeserver.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, fakeserver.ConfigError{Field: "MaxSeqs", Value: -3, Want: ">= 1"}, *ce)
	var fe *flagError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "max-seqs", fe.flag)
}

// TestKnobTable: every Config field a knob names maps back to that knob,
// every binder's default is the Config's value, and the flag names keep
// their section's prefix.
func TestKnobTable(t *testing.T) {
	cfg := fakeserver.Fast()
	fs := flag.NewFlagSet("fakeserver", flag.ContinueOnError)
	profile, dialect := "fast", "vllm"
	register(fs, &cfg, map[string]*string{"profile": &profile, "dialect": &dialect})
	seen := map[string]bool{}
	for _, k := range knobTable {
		require.False(t, seen[k.name], "-%s twice", k.name)
		seen[k.name] = true
		require.NotNil(t, fs.Lookup(k.name), "-%s", k.name)
		got, ok := flagFor(k.field)
		require.True(t, ok, "%s", k.field)
		assert.Equal(t, k.name, got.name, "field %s", k.field)
		assert.Contains(t, groups, k.group, "-%s", k.name)
		switch k.group {
		case groupFaults:
			assert.True(t, strings.HasPrefix(k.name, "fault-"), "-%s", k.name)
		case groupDialect:
			assert.True(t, strings.HasPrefix(k.name, "dialect"), "-%s", k.name)
		}
		if strings.HasPrefix(k.field, "Faults.") {
			assert.Equal(t, groupFaults, k.group, "-%s", k.name)
		}
		if strings.HasPrefix(k.field, "Dialect.") {
			assert.Equal(t, groupDialect, k.group, "-%s", k.name)
		}
	}
	assert.Equal(t, strconv.Itoa(cfg.MaxTraces), fs.Lookup("max-traces").DefValue)
	assert.Equal(t, strconv.Itoa(cfg.MaxSeqs), fs.Lookup("max-seqs").DefValue)
	assert.Equal(t, cfg.Faults.Stall.String(), fs.Lookup("fault-stall").DefValue)
}

// TestHelpGrouped: -h prints the sections in order, each flag under its
// own section, in table order.
func TestHelpGrouped(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run(context.Background(), []string{"-h"}, &out))
	help := out.String()
	var starts []int // the offset of each section header, then the end
	for _, g := range groups {
		i := strings.Index(help, "\n"+g+":\n")
		require.Greater(t, i, -1, "section %q:\n%s", g, help)
		if len(starts) > 0 {
			require.Greater(t, i, starts[len(starts)-1], "section %q in order", g)
		}
		starts = append(starts, i)
	}
	starts = append(starts, len(help))
	pos := -1
	for _, k := range knobTable {
		i := strings.Index(help, "\n  -"+k.name+" ")
		if i < 0 {
			i = strings.Index(help, "\n  -"+k.name+"\n")
		}
		require.Greater(t, i, pos, "-%s after the previous flag", k.name)
		pos = i
		g := slices.Index(groups, k.group)
		assert.True(t, starts[g] < i && i < starts[g+1], "-%s under %q", k.name, k.group)
	}
	assert.Contains(t, help, "  -max-traces int\n    \ttraces kept for /fake/trace (0: all) (default 10000)")
}

// TestFlagsSetConfig: each flag sets its Config field.
func TestFlagsSetConfig(t *testing.T) {
	for _, tc := range []struct {
		args []string
		get  func(c *fakeserver.Config) any
		want any
	}{
		{[]string{"-tokenizer", "words"}, func(c *fakeserver.Config) any { return c.Tokenizer }, "words"},
		{[]string{"-dialect-omit-tokenize"}, func(c *fakeserver.Config) any { return c.Dialect.OmitTokenize }, true},
		{[]string{"-dialect", "ollama", "-dialect-usage", "last-choice"}, func(c *fakeserver.Config) any { return c.Dialect.Usage }, "last-choice"},
		{[]string{"-fault-at", "3=drop,7=http_429"}, func(c *fakeserver.Config) any { return c.Faults.ByIndex },
			map[int]fakeserver.Fault{3: "drop", 7: "http_429"}},
		{[]string{"-tokens-per-chunk", "4"}, func(c *fakeserver.Config) any { return c.TokensPerChunk }, 4},
		{[]string{"-stall-every", "8", "-stall-for", "250ms"}, func(c *fakeserver.Config) any { return [2]any{c.StallEvery, c.StallFor} }, [2]any{8, 250 * time.Millisecond}},
		{[]string{"-idle-timeout", "30s"}, func(c *fakeserver.Config) any { return c.IdleTimeout }, 30 * time.Second},
		{[]string{"-slot-prefill", "150ms"}, func(c *fakeserver.Config) any { return c.SlotPrefill }, 150 * time.Millisecond},
		{[]string{"-nondeterministic"}, func(c *fakeserver.Config) any { return c.Nondeterministic }, true},
		{[]string{"-dialect-omit-finish-reason"}, func(c *fakeserver.Config) any { return c.Dialect.OmitFinishReason }, true},
		{[]string{"-dialect-think-tags"}, func(c *fakeserver.Config) any { return c.Dialect.ThinkTags }, true},
		{[]string{"-dialect-truncate-prompt"}, func(c *fakeserver.Config) any { return c.Dialect.TruncatePrompt }, true},
		{[]string{"-dialect-html-errors"}, func(c *fakeserver.Config) any { return c.Dialect.HTMLErrors }, true},
		{[]string{"-dialect-tokenize-skew", "-2"}, func(c *fakeserver.Config) any { return c.Dialect.TokenizeSkew }, -2},
		{[]string{"-dialect-omit-model-len"}, func(c *fakeserver.Config) any { return c.Dialect.OmitModelLen }, true},
		{[]string{"-dialect-serve-props", "-dialect-serve-ollama-ps", "-dialect-serve-ollama-show"}, func(c *fakeserver.Config) any {
			return [3]bool{c.Dialect.ServeProps, c.Dialect.ServeOllamaPS, c.Dialect.ServeOllamaShow}
		}, [3]bool{true, true, true}},
		{[]string{"-dialect-gzip", "if-accepted"}, func(c *fakeserver.Config) any { return c.Dialect.Gzip }, "if-accepted"},
		{[]string{"-fault-prob", "ignore_max_tokens=0.5,usage_total_mismatch=0.25"}, func(c *fakeserver.Config) any { return c.Faults.Probability },
			map[fakeserver.Fault]float64{"ignore_max_tokens": 0.5, "usage_total_mismatch": 0.25}},
		{[]string{"-profile", "plain"}, func(c *fakeserver.Config) any { return c.Model }, "fake-plain"},
		{nil, func(c *fakeserver.Config) any { return c.Addr }, "127.0.0.1:8000"},
	} {
		cfg, _, err := parseFlags(tc.args, io.Discard)
		require.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.want, tc.get(cfg), "%v", tc.args)
	}
}

// TestEnumFlagsMatchConfig: the names each enumerated flag lists are the
// ones Config.Validate accepts for its field, and Validate rejects a name
// the flag does not list, so the command and the package agree.
func TestEnumFlagsMatchConfig(t *testing.T) {
	for _, name := range []string{"tokenizer", "dialect-usage", "dialect-role", "dialect-gzip"} {
		cfg := fakeserver.Fast()
		fs := flag.NewFlagSet("fakeserver", flag.ContinueOnError)
		profile, dialect := "fast", "vllm"
		register(fs, &cfg, map[string]*string{"profile": &profile, "dialect": &dialect})
		f := fs.Lookup(name)
		require.NotNil(t, f, "-%s", name)
		names := strings.Split(f.Value.(flagValue).argName(), "|")
		require.Greater(t, len(names), 1, "-%s lists its names", name)
		for _, n := range names {
			require.NoError(t, f.Value.Set(n), "-%s %s", name, n)
			require.NoError(t, cfg.Validate(), "-%s %s", name, n)
		}
		p := f.Value.(scalar[enumName]).p
		*p = "unlisted"
		var ce *fakeserver.ConfigError
		require.ErrorAs(t, cfg.Validate(), &ce, "-%s unlisted", name)
		k, ok := flagFor(ce.Field)
		require.True(t, ok, "%s", ce.Field)
		assert.Equal(t, name, k.name)
		for _, n := range names {
			assert.Contains(t, ce.Want, n, "-%s", name)
		}
	}
}
