// Command fakeserver serves the simulated OpenAI-compatible engine of package
// fakeserver on a TCP address, for benchmarks and clients outside Go tests.
//
//	go run ./fake_server/cmd/fakeserver -addr 127.0.0.1:8000 -profile reasoning
//	curl -N http://127.0.0.1:8000/v1/chat/completions \
//	  -d '{"model":"fake-reasoning","stream":true,"messages":[{"role":"user","content":"hi"}]}'
//	curl http://127.0.0.1:8000/fake/trace?index=0
//
// A profile sets every knob; the other flags override it when given. It
// stops cleanly on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"reflect"
	"strconv"
	"strings"
	"syscall"

	fakeserver "github.com/anvilbench/anvil/fake_server"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "fakeserver:", strings.TrimPrefix(err.Error(), "fakeserver: "))
		os.Exit(2)
	}
}

// knobFields ties each flag to the Config field that Config.Validate names
// in its errors. nonzero is set for a knob whose zero value Config replaces
// with a default: the range a flag must give, since a zero flag would
// otherwise silently become another value.
var knobFields = []struct{ flag, field, nonzero string }{
	{"model", "Model", "a non-empty model id"},
	{"max-model-len", "MaxModelLen", ">= 1"},
	{"chars-per-token", "CharsPerToken", "0.5..64"},
	{"template-tokens", "TemplateTokens", ""},
	{"prefill-tok-s", "PrefillTokensPerSecond", "a finite rate > 0"},
	{"max-batch-tokens", "MaxBatchTokens", ">= 1"},
	{"decode-step", "DecodeStep", "> 0"},
	{"decode-step-per-seq", "DecodeStepPerSeq", ""},
	{"max-seqs", "MaxSeqs", ">= 1"},
	{"spec-tokens", "SpecTokens", "1 <= MIN <= MAX"},
	{"block-tokens", "BlockTokens", ">= 1"},
	{"cache-tokens", "CacheTokens", ""},
	{"reasoning-tokens", "ReasoningTokens", ""},
	{"answer-tokens", "AnswerTokens", ""},
	{"time-scale", "TimeScale", "a finite factor > 0"},
	{"max-traces", "MaxTraces", ""},
	{"reasoning-field", "Dialect.ReasoningField", ""},
	{"keep-alive", "Dialect.KeepAlive", ""},
	{"fault-at", "Faults.ByIndex", ""},
	{"fault-prob", "Faults.Probability", ""},
	{"fault-after", "Faults.After", ">= 1"},
	{"retry-after", "Faults.RetryAfter", ">= 1"},
	{"stall", "Faults.Stall", "> 0"},
	{"slow-headers", "Faults.SlowHeaders", "> 0"},
	{"oversize-bytes", "Faults.OversizeBytes", ">= 1"},
}

// checkNonzero rejects a knob flag given as zero where Config would replace
// the zero with a default.
func checkNonzero(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		for _, k := range knobFields {
			if k.flag != f.Name || k.nonzero == "" || err != nil {
				continue
			}
			g, ok := f.Value.(flag.Getter)
			if !ok {
				continue
			}
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

// flagError names the flag of the Config field a Config.Validate error
// reports ("fakeserver: SpecTokens = {3, 1}: ..." becomes
// "-spec-tokens: SpecTokens = {3, 1}: ...").
func flagError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "fakeserver: ")
	field := msg
	if i := strings.IndexAny(msg, " =[:"); i >= 0 {
		field = msg[:i]
	}
	for _, k := range knobFields {
		if k.field == field {
			return fmt.Errorf("-%s: %s", k.flag, msg)
		}
	}
	return err
}

// pairs calls set with each KEY and VALUE of a comma-separated
// KEY=VALUE list; want describes the list in errors.
func pairs(s, want string, set func(k, v string) error) error {
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("%q: want %s", kv, want)
		}
		if err := set(k, v); err != nil {
			return err
		}
	}
	return nil
}

// faultIndexes parses "3=drop,7=http_429".
type faultIndexes map[int]fakeserver.Fault

func (f faultIndexes) String() string { return fmt.Sprint(map[int]fakeserver.Fault(f)) }

func (f faultIndexes) Set(s string) error {
	return pairs(s, "INDEX=FAULT,...", func(k, v string) error {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 {
			return fmt.Errorf("index %q: want INDEX=FAULT with INDEX >= 0", k)
		}
		fault, err := fakeserver.ParseFault(v)
		if err != nil {
			return err
		}
		f[i] = fault
		return nil
	})
}

// faultProbs parses "drop=0.01,http_503=0.02".
type faultProbs map[fakeserver.Fault]float64

func (f faultProbs) String() string { return fmt.Sprint(map[fakeserver.Fault]float64(f)) }

func (f faultProbs) Set(s string) error {
	return pairs(s, "FAULT=PROBABILITY,...", func(k, v string) error {
		p, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("probability %q: want FAULT=PROBABILITY with PROBABILITY in 0..1", v)
		}
		fault, err := fakeserver.ParseFault(k)
		if err != nil {
			return err
		}
		f[fault] = p
		return nil
	})
}

// rangeFlag parses "MIN,MAX" or "N".
type rangeFlag struct{ r *fakeserver.Range }

func (f rangeFlag) String() string {
	if f.r == nil {
		return ""
	}
	return fmt.Sprintf("%d,%d", f.r.Min, f.r.Max)
}

// Get implements flag.Getter.
func (f rangeFlag) Get() any { return *f.r }

func (f rangeFlag) Set(s string) error {
	lo, hi, ok := strings.Cut(s, ",")
	if !ok {
		hi = lo
	}
	a, err1 := strconv.Atoi(lo)
	b, err2 := strconv.Atoi(hi)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("%q: want MIN,MAX or N", s)
	}
	*f.r = fakeserver.Range{Min: a, Max: b}
	return nil
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
	// The knob flags default to the chosen profile and dialect, so those two
	// are looked up first.
	profile, dialect := preset(args, "profile", "reasoning"), preset(args, "dialect", "vllm")
	cfg, err := fakeserver.Profile(profile)
	if err != nil {
		return err
	}
	if cfg.Dialect, err = fakeserver.DialectByName(dialect); err != nil {
		return err
	}
	fs := flag.NewFlagSet("fakeserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8000", "TCP address to listen on")
	fs.String("profile", profile, "profile: "+strings.Join(fakeserver.ProfileNames(), ", ")+"; sets every knob")
	fs.String("dialect", dialect, "dialect preset: vllm, ollama, mock-llm")
	knobs(fs, &cfg)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: the command takes only flags (see -h)", fs.Arg(0))
	}
	if err := checkNonzero(fs); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return flagError(err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := fakeserver.NewUnstarted(cfg)
	srv.Listener = ln
	srv.Start()
	fmt.Fprintf(stderr, "fakeserver: serving model %q (profile %s, dialect %s) at %s/v1\n", cfg.Model, profile, dialect, srv.URL)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	fmt.Fprintln(stderr, "fakeserver: shutting down")
	srv.Close()
	return nil
}

// preset returns the last value of flag -name (or --name) in args, or def.
// The command takes no positional arguments, so any word may be a value.
func preset(args []string, name, def string) string {
	for i := 0; i < len(args); i++ {
		if args[i] == "--" {
			break
		}
		a := strings.TrimPrefix(strings.TrimPrefix(args[i], "-"), "-")
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			def = v
		} else if a == name && i+1 < len(args) {
			def = args[i+1]
			i++
		}
	}
	return def
}

// knobs registers a flag for every Config knob.
func knobs(fs *flag.FlagSet, c *fakeserver.Config) {
	fs.StringVar(&c.Model, "model", c.Model, "model id served")
	fs.IntVar(&c.MaxModelLen, "max-model-len", c.MaxModelLen, "context window in tokens")
	fs.Float64Var(&c.CharsPerToken, "chars-per-token", c.CharsPerToken, "tokenizer approximation: characters per token")
	fs.IntVar(&c.TemplateTokens, "template-tokens", c.TemplateTokens, "chat template tokens added to every prompt")
	fs.Float64Var(&c.PrefillTokensPerSecond, "prefill-tok-s", c.PrefillTokensPerSecond, "prefill rate of uncached prompt tokens")
	fs.IntVar(&c.MaxBatchTokens, "max-batch-tokens", c.MaxBatchTokens, "prompt tokens prefilled per engine step")
	fs.DurationVar(&c.DecodeStep, "decode-step", c.DecodeStep, "decode step with one sequence")
	fs.DurationVar(&c.DecodeStepPerSeq, "decode-step-per-seq", c.DecodeStepPerSeq, "added to the decode step per further sequence")
	fs.IntVar(&c.MaxSeqs, "max-seqs", c.MaxSeqs, "sequences running at once; the rest queue")
	fs.Var(rangeFlag{&c.SpecTokens}, "spec-tokens", "tokens accepted per decode step: MIN,MAX")
	fs.IntVar(&c.BlockTokens, "block-tokens", c.BlockTokens, "prefix cache block size in tokens")
	fs.IntVar(&c.CacheTokens, "cache-tokens", c.CacheTokens, "prefix cache capacity in tokens (0 disables)")
	fs.Var(rangeFlag{&c.ReasoningTokens}, "reasoning-tokens", "reasoning tokens per answer: MIN,MAX")
	fs.Var(rangeFlag{&c.AnswerTokens}, "answer-tokens", "free answer tokens: MIN,MAX")
	fs.Float64Var(&c.TimeScale, "time-scale", c.TimeScale, "multiplier of every simulated duration")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "seed of every draw")
	fs.IntVar(&c.MaxTraces, "max-traces", 10000, "traces kept for /fake/trace (0: all)")
	d := &c.Dialect
	fs.StringVar(&d.ReasoningField, "reasoning-field", d.ReasoningField, "reasoning delta field: reasoning_content or reasoning")
	usage := map[string]fakeserver.UsageMode{"final": fakeserver.UsageFinalChunk, "last-choice": fakeserver.UsageInLastChoice, "none": fakeserver.UsageOmitted}
	fs.Func("usage", "usage placement: final, last-choice, none", func(s string) error {
		m, ok := usage[s]
		if !ok {
			return fmt.Errorf("%q: want final, last-choice or none", s)
		}
		d.Usage = m
		return nil
	})
	role := map[string]fakeserver.RoleMode{"chunk": fakeserver.RoleOnlyChunk, "first": fakeserver.RoleInFirstDelta, "every": fakeserver.RoleInEveryDelta}
	fs.Func("role", "role placement: chunk, first, every", func(s string) error {
		m, ok := role[s]
		if !ok {
			return fmt.Errorf("%q: want chunk, first or every", s)
		}
		d.Role = m
		return nil
	})
	fs.BoolVar(&d.OmitDone, "omit-done", d.OmitDone, "leave out data: [DONE]")
	fs.BoolVar(&d.FinishChunk, "finish-chunk", d.FinishChunk, "finish_reason in a separate empty chunk")
	fs.BoolVar(&d.NullLogprobs, "null-logprobs", d.NullLogprobs, `write "logprobs":null`)
	fs.BoolVar(&d.OmitCachedTokens, "omit-cached-tokens", d.OmitCachedTokens, "leave out usage.prompt_tokens_details")
	fs.StringVar(&d.SystemFingerprint, "system-fingerprint", d.SystemFingerprint, "system_fingerprint value (empty: none)")
	fs.BoolVar(&d.EscapeHTML, "escape-html", d.EscapeHTML, "escape <, >, & in JSON strings")
	fs.BoolVar(&d.CRLF, "crlf", d.CRLF, "end SSE lines with CRLF")
	fs.DurationVar(&d.KeepAlive, "keep-alive", d.KeepAlive, "send ': keep-alive' after this much silence (0: never)")
	fs.StringVar(&d.ContentType, "content-type", d.ContentType, "stream Content-Type (empty: "+fakeserver.DefaultContentType+")")
	fs.StringVar(&d.EventName, "event-name", d.EventName, "precede data lines with 'event: NAME' (empty: none)")
	fs.BoolVar(&d.EventIDs, "event-ids", d.EventIDs, "precede data lines with 'id: N'")
	fs.BoolVar(&d.SplitData, "split-data", d.SplitData, "write each JSON chunk over two data: lines")
	f := &c.Faults
	f.ByIndex, f.Probability = faultIndexes{}, faultProbs{}
	fs.Var(faultIndexes(f.ByIndex), "fault-at", "faults by request index: INDEX=FAULT,...")
	fs.Var(faultProbs(f.Probability), "fault-prob", "fault probabilities: FAULT=P,...")
	fs.IntVar(&f.After, "fault-after", f.After, "output chunks before a mid-stream fault")
	fs.IntVar(&f.RetryAfter, "retry-after", f.RetryAfter, "Retry-After seconds of http_429")
	fs.DurationVar(&f.Stall, "stall", f.Stall, "pause of the stall fault")
	fs.DurationVar(&f.SlowHeaders, "slow-headers", f.SlowHeaders, "header delay of the slow_headers fault")
	fs.IntVar(&f.OversizeBytes, "oversize-bytes", f.OversizeBytes, "content size of the oversized_event fault")
}
