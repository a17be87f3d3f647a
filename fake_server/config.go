package fakeserver

import (
	"cmp"
	"fmt"
	"math"
	"sort"
	"time"
)

// seedCharsPerToken is the tokenizer approximation of the profiles:
// characters of prompt text per prompt token. It is derived from the seed
// artifact (testdata/seed-capacity-v4-reasoning.json): a 65,536-token plan
// built at 3.0 characters per token is 196,608 characters of code-like
// filler, which the seed's model counted as 62,327 to 62,335 prompt tokens,
// 3.155 characters per token once the chat template's tokens are removed.
// A client that sizes prompts at 3.0 therefore sees fewer prompt tokens than
// it planned, as it would against the real engine.
const seedCharsPerToken = 3.155

// defaultMaxTraces is the Config.MaxTraces of the profiles: enough for any
// test, bounded for a long-running server.
const defaultMaxTraces = 10000

// seedTemplateTokens is the number of tokens the profiles add to
// every chat request for the chat template (role headers and turn markers).
const seedTemplateTokens = 9

// Range is an inclusive range of counts. A request draws one value uniformly
// from [Min, Max] with its own seeded generator. The zero Range means zero.
type Range struct {
	Min int `json:"min"` // smallest value drawn
	Max int `json:"max"` // largest value drawn
}

var _ fmt.Stringer = Range{}

// String formats r as "{Min, Max}".
func (r Range) String() string { return fmt.Sprintf("{%d, %d}", r.Min, r.Max) }

// check is r's validity as field: min <= Min <= Max.
func (r Range) check(field string, min int) check {
	return check{field, r, r.Min >= min && r.Max >= r.Min, fmt.Sprintf("%d <= Min <= Max", min)}
}

// Config configures a Server: the simulated model, the engine's timing
// model, the wire dialect and the faults. Start from Fast, Profile or Slots
// and adjust fields, or write one by hand: the zero value of a field means
// its default. The engine's required fields (CharsPerToken,
// PrefillTokensPerSecond, DecodeStep, MaxSeqs, MaxBatchTokens, MaxModelLen,
// BlockTokens, TimeScale, SpecTokens, Model) default to the Fast profile's
// values, the string-named modes (Tokenizer, Dialect.Usage, Dialect.Role,
// Dialect.Gzip) to the first name their documentation lists, the
// FaultPlan's knobs as documented there, and zero Ranges mean "none".
type Config struct {
	// Model is the only model id served; other ids get a 404 model_not_found.
	// An empty model field in a request means this model.
	Model string
	// MaxModelLen is the context window in tokens reported by /v1/models and
	// enforced as prompt tokens + max tokens.
	MaxModelLen int

	// Tokenizer names the rule that counts prompt tokens. Every count the
	// server reports or enforces uses it: usage.prompt_tokens (plus
	// TemplateTokens), the context-length check, the prefix cache's blocks
	// and /tokenize.
	//
	// "bpe" (the default, empty) counts as a byte-pair-encoding tokenizer
	// does in shape: words, digits, punctuation and whitespace at
	// different costs, so the characters per token depend on the text
	// and no ratio learned on one kind of text predicts another
	// (CharsPerToken is not used). Text is cut as a pre-tokenizer cuts it:
	//
	//   - a run of n ASCII letters is ceil(n / 8) tokens, a run of n other
	//     ASCII characters (punctuation, symbols) ceil(n / 3); a single
	//     space before either is part of its first token;
	//   - each ASCII digit is a token;
	//   - a run of whitespace is one token;
	//   - every other character is a token.
	//
	// The reference's filler counts about as the seed artifact's model
	// counted it: the 196,608 characters of a 65,536-token plan are 62,275
	// tokens (3.16 characters per token; the seed's model, 62,327 with its
	// template), a 2,048-token plan 1,751 (3.51): the more digits its line
	// numbers have, the fewer characters per token. The line
	// "def helper_12():\n    return compute(12)  # routine specialist
	// context\n" (70 characters) is 20 tokens.
	//
	// "chars" counts a text of n characters (Unicode code points) as
	// ceil(n / CharsPerToken) tokens: a fixed ratio a client could learn
	// from one request.
	//
	// "words" counts by character class with short words (CharsPerToken
	// is not used). A text is cut into maximal runs; each run costs:
	//
	//   - letters (unicode.IsLetter, with the combining marks that follow
	//     one): ceil(n / 4) tokens for a run of n code points;
	//   - a decimal digit (unicode.IsDigit): 1 token each, so "12" is 2;
	//   - whitespace (unicode.IsSpace): 1 token per maximal run, so
	//     "\n    " is 1;
	//   - any other character (punctuation, symbols, "_"): 1 token each.
	//
	// The line above is 33 tokens, 2.1 characters per token; with 4-digit
	// numbers it is 74 characters in 37 tokens, 2.0 per token.
	Tokenizer string
	// CharsPerToken is the "chars" tokenizer's ratio: a text of n characters
	// (Unicode code points) is ceil(n / CharsPerToken) tokens.
	CharsPerToken float64
	// TemplateTokens are added to every chat prompt for the chat template.
	TemplateTokens int

	// PrefillTokensPerSecond is the prefill rate of uncached prompt tokens.
	PrefillTokensPerSecond float64
	// MaxBatchTokens bounds the prompt tokens prefilled in one engine step
	// (chunked prefill); a long prompt takes several steps.
	MaxBatchTokens int
	// DecodeStep is the duration of one decode step with one running
	// sequence; DecodeStepPerSeq is added for every further decoding sequence,
	// so aggregate throughput rises with concurrency while each stream slows.
	DecodeStep       time.Duration
	DecodeStepPerSeq time.Duration
	// MaxSeqs is the number of sequences the engine runs at once; later
	// requests wait in a FIFO admission queue.
	MaxSeqs int
	// SpecTokens is the number of tokens accepted per decode step
	// (speculative decoding); each step draws from the range, and each step's
	// tokens are sent in one chunk per kind. {1, 1} is plain decoding.
	SpecTokens Range
	// SpecDraftTokens, when positive, is the draft length of speculative
	// decoding (vLLM's num_speculative_tokens): /metrics then serves vLLM's
	// vllm:spec_decode_* counters, each decode step drafting this many
	// tokens and accepting all but one of the tokens it drew from
	// SpecTokens (the last is the target's own), so the acceptance rate
	// is (SpecTokens - 1) / SpecDraftTokens exactly for a fixed
	// SpecTokens. At least SpecTokens.Max - 1. Zero serves none.
	SpecDraftTokens int

	// TokensPerChunk, when positive, makes every streamed output chunk carry
	// exactly that many tokens, whatever the decode steps accept (a chunk is
	// sent when its last token is produced); only the last chunk of the
	// reasoning and of the content may be shorter. Zero sends each step's
	// tokens as one chunk per kind (see SpecTokens).
	TokensPerChunk int
	// StallEvery and StallFor make periodic stalls: when both are positive,
	// every StallEvery-th gap between a stream's output chunks (the gap
	// before output chunk StallEvery+1, 2*StallEvery+1, ...) is lengthened
	// by StallFor (simulated, so scaled by TimeScale), and every later chunk
	// is written that much later than the engine scheduled it (Chunk.Written
	// versus Chunk.Scheduled). The stall is silent: no keep-alive comment.
	// Non-streamed responses are not affected.
	StallEvery int
	StallFor   time.Duration

	// BlockTokens is the prefix cache block size in tokens; CacheTokens its
	// LRU capacity in tokens (0 disables the cache).
	BlockTokens int
	CacheTokens int

	// ReasoningTokens is how many reasoning tokens precede the answer
	// ({0, 0}: a non-reasoning model). AnswerTokens is the length of a free
	// answer (one not constrained by an "exactly N" instruction), marker
	// included.
	ReasoningTokens Range
	AnswerTokens    Range

	// EmbeddingDimension is the length of the vectors /v1/embeddings
	// answers, 0..65536; zero means 64. A request's "dimensions" may ask
	// for fewer.
	EmbeddingDimension int

	// TimeScale multiplies every simulated duration: 0.1 runs ten times
	// faster than the profile's model. Zero means 1.
	TimeScale float64
	// Seed makes the run deterministic: every request's draws come from a
	// generator seeded with (Seed, arrival index).
	Seed uint64

	// Nondeterministic draws every request's text from its arrival index,
	// so two identical requests at temperature 0 get different answers.
	// By default a request with "temperature": 0 draws from its prompt's
	// hash instead, so identical prompts get identical text, as greedy
	// decoding does (other temperatures always draw per request). It
	// also moves each embeddings answer's values a little (by about
	// 1e-3 of their spread) from one request to the next.
	Nondeterministic bool

	// SlotPrefill, when positive, replaces the batch engine with MaxSeqs
	// independent slots (a llama.cpp-like server): each admitted request's
	// prefill takes exactly SlotPrefill (scaled), whatever its length and
	// the prefix cache, then every decode step takes DecodeStep whatever the
	// other slots do; requests beyond MaxSeqs wait FIFO for a free slot.
	// MaxBatchTokens, PrefillTokensPerSecond and DecodeStepPerSeq are not
	// used. See Slots.
	SlotPrefill time.Duration

	// GPUs, when positive, serves the NVIDIA DCGM exporter's metrics of
	// that many simulated GPUs at GET /dcgm-exporter/metrics (in the
	// exporter's own text, gpu_metrics.go): power, the energy counter,
	// utilization, memory, clock and temperature of each. Every GPU draws
	// GPUIdleWatts at all times and GPUJoulesPerToken/GPUs for every token
	// the engine generates, so the energy the counters add up to over any
	// time is GPUIdleWatts x GPUs x seconds + GPUJoulesPerToken x tokens.
	// GPUModelName is their modelName label (empty: "NVIDIA H100 80GB
	// HBM3").
	GPUs              int
	GPUIdleWatts      float64
	GPUJoulesPerToken float64
	GPUModelName      string

	// IdleTimeout, when positive, is how long the listening servers keep an
	// idle keep-alive connection before closing it (http.Server.IdleTimeout),
	// so a client's handling of stale connections can be tested. Zero keeps
	// idle connections open.
	IdleTimeout time.Duration

	// Dialect selects the wire format details.
	Dialect Dialect
	// Faults selects misbehaviour per request.
	Faults FaultPlan

	// MaxTraces bounds the traces kept: the last MaxTraces requests' (0 keeps
	// all). The profiles keep 10,000, so a long-running server
	// stays bounded.
	MaxTraces int

	// Addr is the loopback address Start listens on when the Server's
	// Listener is nil; empty means "127.0.0.1:0".
	Addr string
}

// shared returns the knobs every profile has in common: the seed's
// tokenizer approximation and chat template, 8,192-token prefill chunks,
// 16-token cache blocks in a 1,048,576-token prefix cache, real time, seed
// 1, defaultMaxTraces traces and the default fault knobs (no fault is
// chosen).
func shared(model string, maxModelLen int) Config {
	return Config{
		Model:          model,
		MaxModelLen:    maxModelLen,
		CharsPerToken:  seedCharsPerToken,
		TemplateTokens: seedTemplateTokens,
		MaxBatchTokens: 8192,
		BlockTokens:    16,
		CacheTokens:    1 << 20,
		TimeScale:      1,
		Seed:           1,
		MaxTraces:      defaultMaxTraces,
		Faults:         defaultFaults(),
	}
}

// Fast returns the profile for tests, Profile("fast"): a fast model
// (fake-fast) with a few reasoning tokens, two-token speculative steps and
// a 32k window. Every profile counts prompt tokens at 3.155 characters per
// token plus 9 chat template tokens, as the seed artifact's model did
// (testdata/seed-capacity-v4-reasoning.json), keeps the last 10,000
// traces and has a 1,048,576-token prefix cache in 16-token blocks.
func Fast() Config {
	c := shared("fake-fast", 32768)
	c.PrefillTokensPerSecond = 1_000_000
	c.DecodeStep, c.DecodeStepPerSeq = time.Millisecond, 250*time.Microsecond
	c.MaxSeqs = 16
	c.SpecTokens = Range{1, 2}
	c.ReasoningTokens, c.AnswerTokens = Range{8, 16}, Range{8, 16}
	return c
}

// reasoningProfile is Profile("reasoning"): like the seed artifact's reasoning model
// (qwen3-class with speculative decoding on one GPU): prefill 7,800 tok/s,
// 17 ms decode steps accepting 1 to 7 tokens (about 235 tok/s per stream
// alone), a few hundred reasoning tokens, a 262,144-token window.
func reasoningProfile() Config {
	c := shared("fake-reasoning", 262144)
	c.PrefillTokensPerSecond = 7800
	c.DecodeStep, c.DecodeStepPerSeq = 17*time.Millisecond, 3*time.Millisecond
	c.MaxSeqs = 64
	c.SpecTokens = Range{1, 7}
	c.ReasoningTokens, c.AnswerTokens = Range{230, 480}, Range{24, 48}
	return c
}

// plainProfile is Profile("plain"): a non-reasoning 8B-class model without
// speculative decoding, prefill 12,000 tok/s, about 90 tok/s per stream
// alone, a 131,072-token window.
func plainProfile() Config {
	c := shared("fake-plain", 131072)
	c.PrefillTokensPerSecond = 12000
	c.DecodeStep, c.DecodeStepPerSeq = 11*time.Millisecond, time.Millisecond
	c.MaxSeqs = 128
	c.SpecTokens = Range{1, 1}
	c.AnswerTokens = Range{16, 64}
	return c
}

var profiles = map[string]func() Config{
	"fast":      Fast,
	"reasoning": reasoningProfile,
	"plain":     plainProfile,
}

// ProfileNames lists the names Profile accepts, sorted.
func ProfileNames() []string {
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Profile returns the named profile, the Config of a simulated model:
//
//	fast       Fast: the profile for tests
//	reasoning  like the seed artifact's reasoning model (qwen3-class with
//	           speculative decoding on one GPU): fake-reasoning, prefill
//	           7,800 tok/s, 17 ms decode steps accepting 1 to 7 tokens (about
//	           235 tok/s per stream alone), a few hundred reasoning tokens, a
//	           262,144-token window
//	plain      a non-reasoning 8B-class model without speculative decoding:
//	           fake-plain, prefill 12,000 tok/s, about 90 tok/s per stream
//	           alone, a 131,072-token window
//
// Another name is a *ConfigError with Field "Profile".
func Profile(name string) (Config, error) {
	f, ok := profiles[name]
	if !ok {
		return Config{}, &ConfigError{Field: "Profile", Value: name, Want: fmt.Sprintf("one of %v", ProfileNames())}
	}
	return f(), nil
}

// withDefaults fills zero required fields from Fast.
func (c Config) withDefaults() Config {
	d := Fast()
	c.Model = cmp.Or(c.Model, d.Model)
	c.MaxModelLen = cmp.Or(c.MaxModelLen, d.MaxModelLen)
	c.Tokenizer = cmp.Or(c.Tokenizer, tokenizerBPE)
	c.Dialect = c.Dialect.withDefaults()
	c.CharsPerToken = cmp.Or(c.CharsPerToken, d.CharsPerToken)
	c.PrefillTokensPerSecond = cmp.Or(c.PrefillTokensPerSecond, d.PrefillTokensPerSecond)
	c.MaxBatchTokens = cmp.Or(c.MaxBatchTokens, d.MaxBatchTokens)
	c.DecodeStep = cmp.Or(c.DecodeStep, d.DecodeStep)
	c.MaxSeqs = cmp.Or(c.MaxSeqs, d.MaxSeqs)
	c.SpecTokens = cmp.Or(c.SpecTokens, Range{1, 1})
	c.BlockTokens = cmp.Or(c.BlockTokens, d.BlockTokens)
	c.TimeScale = cmp.Or(c.TimeScale, 1)
	c.Addr = cmp.Or(c.Addr, "127.0.0.1:0")
	c.Faults = c.Faults.withDefaults()
	return c
}

// Validate reports the first invalid field of c after defaults are applied,
// naming the field, its value and the allowed range.
func (c Config) Validate() error {
	c = c.withDefaults()
	finite := func(x float64) bool { return !math.IsInf(x, 0) }
	err := firstInvalid(
		check{"MaxModelLen", c.MaxModelLen, c.MaxModelLen >= 1, ">= 1"},
		check{"Tokenizer", c.Tokenizer, oneOf(c.Tokenizer, tokenizerBPE, tokenizerChars, tokenizerWords),
			"bpe, chars or words"},
		// The comparisons are written so that NaN fails them.
		check{"CharsPerToken", c.CharsPerToken, c.CharsPerToken >= 0.5 && c.CharsPerToken <= 64, "0.5..64"},
		check{"TemplateTokens", c.TemplateTokens, c.TemplateTokens >= 0, ">= 0"},
		check{"PrefillTokensPerSecond", c.PrefillTokensPerSecond,
			c.PrefillTokensPerSecond > 0 && finite(c.PrefillTokensPerSecond), "a finite rate > 0"},
		check{"MaxBatchTokens", c.MaxBatchTokens, c.MaxBatchTokens >= 1, ">= 1"},
		check{"DecodeStep", c.DecodeStep, c.DecodeStep > 0, "> 0"},
		check{"DecodeStepPerSeq", c.DecodeStepPerSeq, c.DecodeStepPerSeq >= 0, ">= 0"},
		check{"MaxSeqs", c.MaxSeqs, c.MaxSeqs >= 1, ">= 1"},
		check{"TokensPerChunk", c.TokensPerChunk, c.TokensPerChunk >= 0, ">= 0"},
		check{"StallEvery", c.StallEvery, c.StallEvery >= 0, ">= 0"},
		check{"StallFor", c.StallFor, c.StallFor >= 0, ">= 0"},
		check{"SlotPrefill", c.SlotPrefill, c.SlotPrefill >= 0, ">= 0"},
		check{"IdleTimeout", c.IdleTimeout, c.IdleTimeout >= 0, ">= 0"},
		check{"BlockTokens", c.BlockTokens, c.BlockTokens >= 1, ">= 1"},
		check{"CacheTokens", c.CacheTokens, c.CacheTokens >= 0, ">= 0"},
		check{"MaxTraces", c.MaxTraces, c.MaxTraces >= 0, ">= 0"},
		check{"SpecDraftTokens", c.SpecDraftTokens, c.SpecDraftTokens == 0 || c.SpecDraftTokens >= c.SpecTokens.Max-1, "0 or at least SpecTokens.Max - 1"},
		check{"GPUs", c.GPUs, c.GPUs >= 0 && c.GPUs <= maxGPUs, fmt.Sprintf("0..%d", maxGPUs)},
		check{"GPUIdleWatts", c.GPUIdleWatts, c.GPUIdleWatts >= 0 && finite(c.GPUIdleWatts), "a finite power >= 0"},
		check{"GPUJoulesPerToken", c.GPUJoulesPerToken, c.GPUJoulesPerToken >= 0 && finite(c.GPUJoulesPerToken), "a finite energy >= 0"},
		check{"TimeScale", c.TimeScale, c.TimeScale > 0 && finite(c.TimeScale), "a finite factor > 0"},
		c.SpecTokens.check("SpecTokens", 1),
		c.ReasoningTokens.check("ReasoningTokens", 0),
		c.AnswerTokens.check("AnswerTokens", 0),
		check{"EmbeddingDimension", c.EmbeddingDimension, c.EmbeddingDimension >= 0 && c.EmbeddingDimension <= maxEmbeddingDimension, "0..65536"},
	)
	if err != nil {
		return err
	}
	if err := c.Dialect.validate(); err != nil {
		return err
	}
	return c.Faults.validate()
}

// scaled converts a simulated duration to the server's clock.
func (c *Config) scaled(d time.Duration) time.Duration {
	if c.TimeScale == 1 {
		return d
	}
	return time.Duration(float64(d) * c.TimeScale)
}

// prefillTime is the simulated time to prefill n uncached tokens.
func (c *Config) prefillTime(n int) time.Duration {
	ns := float64(n) * 1e9 / c.PrefillTokensPerSecond
	return c.scaled(time.Duration(ns + 0.5))
}

// decodeTime is the duration of a decode step with n decoding sequences.
func (c *Config) decodeTime(n int) time.Duration {
	if n == 0 {
		return 0
	}
	return c.scaled(c.DecodeStep + time.Duration(n-1)*c.DecodeStepPerSeq)
}
