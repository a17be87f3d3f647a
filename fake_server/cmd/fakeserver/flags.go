package main

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// The help sections, in the order -h prints them.
const (
	groupServer  = "Server"
	groupEngine  = "Engine (the simulated model and its timing)"
	groupDialect = "Dialect (wire format details)"
	groupFaults  = "Faults (misbehaviour per request)"
)

var groups = []string{groupServer, groupEngine, groupDialect, groupFaults}

// knob is one flag: its name, help section and text, the Config field it
// sets and the flag.Value bound to that field. field is the
// fakeserver.ConfigError.Field that Config.Validate reports for it (a map
// field also matches its entries, "Faults.Probability[drop]"). nonzero is
// set for a knob whose zero value Config replaces with a default: the range
// a flag must give, since a zero flag would otherwise silently become
// another value. Every default is the Config's value (the profile's,
// after the dialect preset), so -h shows what the server will use.
type knob struct {
	name, group, usage string
	field, nonzero     string
	bind               binder
}

// cfgP names a Config field for the table; the binders take its address.
type cfgP = *fakeserver.Config

// knobTable is every flag of the command.
var knobTable = []knob{
	{"addr", groupServer, "TCP address to listen on", "Addr", "", stringField(func(c cfgP) *string { return &c.Addr })},
	{"profile", groupServer, "profile: " + strings.Join(fakeserver.ProfileNames(), ", ") + "; sets every knob, read before the other flags", "Profile", "", nil},
	{"idle-timeout", groupServer, "close keep-alive connections idle this long (0: never)", "IdleTimeout", "", durationField(func(c cfgP) *time.Duration { return &c.IdleTimeout })},
	{"max-traces", groupServer, "traces kept for /fake/trace (0: all)", "MaxTraces", "", intField(func(c cfgP) *int { return &c.MaxTraces })},

	{"model", groupEngine, "model id served", "Model", "a non-empty model id", stringField(func(c cfgP) *string { return &c.Model })},
	{"max-model-len", groupEngine, "context window in tokens", "MaxModelLen", ">= 1", intField(func(c cfgP) *int { return &c.MaxModelLen })},
	{"tokenizer", groupEngine, "prompt token counting rule: bpe (words, digits, punctuation and whitespace at different costs), chars (a fixed -chars-per-token ratio) or words (by character class)", "Tokenizer", "",
		enumField(func(c cfgP) *string { return &c.Tokenizer }, "bpe", "chars", "words")},
	{"chars-per-token", groupEngine, "characters per token of the chars tokenizer", "CharsPerToken", "0.5..64", floatField(func(c cfgP) *float64 { return &c.CharsPerToken })},
	{"template-tokens", groupEngine, "chat template tokens added to every prompt", "TemplateTokens", "", intField(func(c cfgP) *int { return &c.TemplateTokens })},
	{"prefill-tok-s", groupEngine, "prefill rate of uncached prompt tokens", "PrefillTokensPerSecond", "a finite rate > 0", floatField(func(c cfgP) *float64 { return &c.PrefillTokensPerSecond })},
	{"max-batch-tokens", groupEngine, "prompt tokens prefilled per engine step", "MaxBatchTokens", ">= 1", intField(func(c cfgP) *int { return &c.MaxBatchTokens })},
	{"decode-step", groupEngine, "decode step with one sequence", "DecodeStep", "> 0", durationField(func(c cfgP) *time.Duration { return &c.DecodeStep })},
	{"decode-step-per-seq", groupEngine, "added to the decode step per further sequence", "DecodeStepPerSeq", "", durationField(func(c cfgP) *time.Duration { return &c.DecodeStepPerSeq })},
	{"max-seqs", groupEngine, "sequences running at once; the rest queue", "MaxSeqs", ">= 1", intField(func(c cfgP) *int { return &c.MaxSeqs })},
	{"spec-tokens", groupEngine, "tokens accepted per decode step", "SpecTokens", "1 <= MIN <= MAX", rangeField(func(c cfgP) *fakeserver.Range { return &c.SpecTokens })},
	{"tokens-per-chunk", groupEngine, "tokens in every streamed output chunk (0: each decode step's tokens)", "TokensPerChunk", "", intField(func(c cfgP) *int { return &c.TokensPerChunk })},
	{"stall-every", groupEngine, "lengthen every Nth gap between output chunks by -stall-for (0: never)", "StallEvery", "", intField(func(c cfgP) *int { return &c.StallEvery })},
	{"stall-for", groupEngine, "length of the periodic stall", "StallFor", "", durationField(func(c cfgP) *time.Duration { return &c.StallFor })},
	{"block-tokens", groupEngine, "prefix cache block size in tokens", "BlockTokens", ">= 1", intField(func(c cfgP) *int { return &c.BlockTokens })},
	{"cache-tokens", groupEngine, "prefix cache capacity in tokens (0 disables)", "CacheTokens", "", intField(func(c cfgP) *int { return &c.CacheTokens })},
	{"reasoning-tokens", groupEngine, "reasoning tokens per answer", "ReasoningTokens", "", rangeField(func(c cfgP) *fakeserver.Range { return &c.ReasoningTokens })},
	{"answer-tokens", groupEngine, "free answer tokens", "AnswerTokens", "", rangeField(func(c cfgP) *fakeserver.Range { return &c.AnswerTokens })},
	{"embedding-dimension", groupEngine, "length of the /v1/embeddings vectors (0: 64)", "EmbeddingDimension", "0..65536", intField(func(c cfgP) *int { return &c.EmbeddingDimension })},
	{"slot-prefill", groupEngine, "run -max-seqs independent slots whose prefill takes exactly this and whose decode steps take -decode-step (0: batch engine)", "SlotPrefill", "", durationField(func(c cfgP) *time.Duration { return &c.SlotPrefill })},
	{"nondeterministic", groupEngine, "different text for identical requests even at temperature 0", "Nondeterministic", "", boolField(func(c cfgP) *bool { return &c.Nondeterministic })},
	{"time-scale", groupEngine, "multiplier of every simulated duration", "TimeScale", "a finite factor > 0", floatField(func(c cfgP) *float64 { return &c.TimeScale })},
	{"seed", groupEngine, "seed of every draw", "Seed", "", uintField(func(c cfgP) *uint64 { return &c.Seed })},

	{"dialect", groupDialect, "dialect preset: " + strings.Join(fakeserver.DialectNames(), ", ") + "; read before the -dialect-... flags", "Dialect", "", nil},
	{"dialect-reasoning-field", groupDialect, "reasoning delta field: reasoning_content or reasoning (empty: reasoning_content)", "Dialect.ReasoningField", "", stringField(func(c cfgP) *string { return &c.Dialect.ReasoningField })},
	{"dialect-usage", groupDialect, "usage placement", "Dialect.Usage", "", enumField(func(c cfgP) *string { return &c.Dialect.Usage }, "final", "last-choice", "none")},
	{"dialect-role", groupDialect, "assistant role placement", "Dialect.Role", "", enumField(func(c cfgP) *string { return &c.Dialect.Role }, "chunk", "first", "every")},
	{"dialect-omit-done", groupDialect, "leave out data: [DONE]", "Dialect.OmitDone", "", boolField(func(c cfgP) *bool { return &c.Dialect.OmitDone })},
	{"dialect-finish-chunk", groupDialect, "finish_reason in a separate empty chunk", "Dialect.FinishChunk", "", boolField(func(c cfgP) *bool { return &c.Dialect.FinishChunk })},
	{"dialect-null-logprobs", groupDialect, `write "logprobs":null`, "Dialect.NullLogprobs", "", boolField(func(c cfgP) *bool { return &c.Dialect.NullLogprobs })},
	{"dialect-omit-cached-tokens", groupDialect, "leave out usage.prompt_tokens_details", "Dialect.OmitCachedTokens", "", boolField(func(c cfgP) *bool { return &c.Dialect.OmitCachedTokens })},
	{"dialect-system-fingerprint", groupDialect, "system_fingerprint value (empty: none)", "Dialect.SystemFingerprint", "", stringField(func(c cfgP) *string { return &c.Dialect.SystemFingerprint })},
	{"dialect-escape-html", groupDialect, "escape <, >, & in JSON strings", "Dialect.EscapeHTML", "", boolField(func(c cfgP) *bool { return &c.Dialect.EscapeHTML })},
	{"dialect-crlf", groupDialect, "end SSE lines with CRLF", "Dialect.CRLF", "", boolField(func(c cfgP) *bool { return &c.Dialect.CRLF })},
	{"dialect-keep-alive", groupDialect, "send ': keep-alive' after this much silence (0: never)", "Dialect.KeepAlive", "", durationField(func(c cfgP) *time.Duration { return &c.Dialect.KeepAlive })},
	{"dialect-content-type", groupDialect, "stream Content-Type (empty: text/event-stream; charset=utf-8)", "Dialect.ContentType", "", stringField(func(c cfgP) *string { return &c.Dialect.ContentType })},
	{"dialect-event-name", groupDialect, "precede data lines with 'event: NAME' (empty: none)", "Dialect.EventName", "", stringField(func(c cfgP) *string { return &c.Dialect.EventName })},
	{"dialect-event-ids", groupDialect, "precede data lines with 'id: N'", "Dialect.EventIDs", "", boolField(func(c cfgP) *bool { return &c.Dialect.EventIDs })},
	{"dialect-omit-tokenize", groupDialect, "answer /tokenize and /v1/tokenize with 404", "Dialect.OmitTokenize", "", boolField(func(c cfgP) *bool { return &c.Dialect.OmitTokenize })},
	{"dialect-omit-finish-reason", groupDialect, "leave finish_reason out of every chunk", "Dialect.OmitFinishReason", "", boolField(func(c cfgP) *bool { return &c.Dialect.OmitFinishReason })},
	{"dialect-think-tags", groupDialect, "send reasoning inside the content as <think>...</think>", "Dialect.ThinkTags", "", boolField(func(c cfgP) *bool { return &c.Dialect.ThinkTags })},
	{"dialect-truncate-prompt", groupDialect, "keep the last -max-model-len tokens of a longer prompt instead of answering 400", "Dialect.TruncatePrompt", "", boolField(func(c cfgP) *bool { return &c.Dialect.TruncatePrompt })},
	{"dialect-html-errors", groupDialect, "answer bad requests with 500 and an HTML page", "Dialect.HTMLErrors", "", boolField(func(c cfgP) *bool { return &c.Dialect.HTMLErrors })},
	{"dialect-tokenize-skew", groupDialect, "tokens added to every /tokenize count", "Dialect.TokenizeSkew", "", intField(func(c cfgP) *int { return &c.Dialect.TokenizeSkew })},
	{"dialect-omit-model-len", groupDialect, "leave max_model_len out of /v1/models", "Dialect.OmitModelLen", "", boolField(func(c cfgP) *bool { return &c.Dialect.OmitModelLen })},
	{"dialect-serve-props", groupDialect, "serve llama.cpp's GET /props (n_ctx)", "Dialect.ServeProps", "", boolField(func(c cfgP) *bool { return &c.Dialect.ServeProps })},
	{"dialect-serve-ollama-ps", groupDialect, "serve ollama's GET /api/ps (context_length)", "Dialect.ServeOllamaPS", "", boolField(func(c cfgP) *bool { return &c.Dialect.ServeOllamaPS })},
	{"dialect-serve-ollama-show", groupDialect, "serve ollama's POST /api/show (model_info.<arch>.context_length)", "Dialect.ServeOllamaShow", "", boolField(func(c cfgP) *bool { return &c.Dialect.ServeOllamaShow })},
	{"dialect-gzip", groupDialect, "gzip streams: off, if-accepted (Accept-Encoding allows gzip), always", "Dialect.Gzip", "", enumField(func(c cfgP) *string { return &c.Dialect.Gzip }, "off", "if-accepted", "always")},
	{"dialect-split-data", groupDialect, "write each JSON chunk over two data: lines", "Dialect.SplitData", "", boolField(func(c cfgP) *bool { return &c.Dialect.SplitData })},
	{"dialect-layout", groupDialect, "layout of /v1/responses, /v1/messages and /v1/completions: reference (OpenAI's, Anthropic's), ollama or llamacpp", "Dialect.Layout", "",
		enumField(func(c cfgP) *string { return &c.Dialect.Layout }, "reference", "ollama", "llamacpp")},

	{"fault-at", groupFaults, "faults by request index; a FAULT is one of " + faultNames(), "Faults.ByIndex", "", faultIndexes},
	{"fault-prob", groupFaults, "fault probabilities, summing to <= 1", "Faults.Probability", "", faultProbs},
	{"fault-after", groupFaults, "output chunks before a mid-stream fault", "Faults.After", ">= 1", intField(func(c cfgP) *int { return &c.Faults.After })},
	{"fault-retry-after", groupFaults, "Retry-After seconds of http_429", "Faults.RetryAfter", ">= 1", intField(func(c cfgP) *int { return &c.Faults.RetryAfter })},
	{"fault-stall", groupFaults, "pause of the stall fault", "Faults.Stall", "> 0", durationField(func(c cfgP) *time.Duration { return &c.Faults.Stall })},
	{"fault-slow-headers", groupFaults, "header delay of the slow_headers fault", "Faults.SlowHeaders", "> 0", durationField(func(c cfgP) *time.Duration { return &c.Faults.SlowHeaders })},
	{"fault-oversize-bytes", groupFaults, "content size of the oversized_event fault", "Faults.OversizeBytes", ">= 1", intField(func(c cfgP) *int { return &c.Faults.OversizeBytes })},
}

// presetValue is the flag.Value of -profile and -dialect: preset reads
// them from the arguments before the other flags are registered, so
// parsing them again only checks nothing.
type presetValue struct{ s *string }

var _ flag.Value = presetValue{}

func (v presetValue) String() string {
	if v.s == nil {
		return ""
	}
	return *v.s
}
func (v presetValue) Set(s string) error { *v.s = s; return nil }
func (v presetValue) Get() any           { return *v.s }
func (v presetValue) argName() string    { return "name" }

// register adds every knob to fs, bound to c; presets holds the values of
// the knobs without a binder (-profile, -dialect).
func register(fs *flag.FlagSet, c *fakeserver.Config, presets map[string]*string) {
	for _, k := range knobTable {
		var v flagValue
		if k.bind == nil {
			v = presetValue{presets[k.name]}
		} else {
			v = k.bind(c)
		}
		fs.Var(v, k.name, k.usage)
	}
	fs.Usage = func() { printUsage(fs.Output(), fs) }
}

// printUsage writes the help: one section per group, flags in table order.
func printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, "Usage: fakeserver [flags]")
	fmt.Fprintln(w, "\nServes the simulated OpenAI-compatible engine of package fakeserver.")
	fmt.Fprintln(w, "A -profile and a -dialect preset set every knob; the other flags override them.")
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g)
		for _, k := range knobTable {
			if k.group != g {
				continue
			}
			f := fs.Lookup(k.name)
			line := "  -" + f.Name
			if a := f.Value.(flagValue).argName(); a != "" {
				line += " " + a
			}
			fmt.Fprintln(w, line)
			usage := f.Usage
			switch _, isString := f.Value.(flag.Getter).Get().(string); {
			case f.DefValue == "" || f.DefValue == "false":
			case isString:
				usage += fmt.Sprintf(" (default %q)", f.DefValue)
			default:
				usage += fmt.Sprintf(" (default %s)", f.DefValue)
			}
			fmt.Fprintf(w, "    \t%s\n", usage)
		}
	}
}

// checkNonzero rejects a knob flag given as zero where Config would replace
// the zero with a default.
func checkNonzero(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		for _, k := range knobTable {
			if k.name != f.Name || k.nonzero == "" || err != nil {
				continue
			}
			g := f.Value.(flag.Getter)
			zero := reflect.ValueOf(g.Get()).IsZero()
			if x, ok := g.Get().(float64); ok {
				zero = x == 0 // -0 too
			}
			if zero {
				v := f.Value.String()
				if _, ok := g.Get().(string); ok {
					v = strconv.Quote(v)
				}
				err = fmt.Errorf("-%s %s: want %s", f.Name, v, k.nonzero)
			}
		}
	})
	return err
}

// flagFor returns the knob whose Config field a ConfigError names: the
// field itself or, for a map field, one of its entries.
func flagFor(field string) (knob, bool) {
	for _, k := range knobTable {
		if field == k.field || strings.HasPrefix(field, k.field+"[") {
			return k, true
		}
	}
	return knob{}, false
}

// flagError is a fakeserver.ConfigError reported with the flag that sets
// the field: "-spec-tokens: SpecTokens = {3, 1}: want 1 <= Min <= Max".
type flagError struct {
	flag string
	err  *fakeserver.ConfigError
}

var _ error = (*flagError)(nil)

func (e *flagError) Error() string {
	return "-" + e.flag + ": " + strings.TrimPrefix(e.err.Error(), "fakeserver: ")
}

func (e *flagError) Unwrap() error { return e.err }

// faultNames lists the fault names for the help.
func faultNames() string {
	var names []string
	for _, f := range fakeserver.Faults() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}
