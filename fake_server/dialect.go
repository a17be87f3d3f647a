package fakeserver

import (
	"cmp"
	"maps"
	"slices"
	"time"
)

// The values of Dialect.Usage, Dialect.Role and Dialect.Gzip, as
// documented on those fields; the empty string is the first of each.
const (
	usageFinal      = "final"
	usageLastChoice = "last-choice"
	usageNone       = "none"

	roleChunk = "chunk"
	roleFirst = "first"
	roleEvery = "every"

	gzipOff        = "off"
	gzipIfAccepted = "if-accepted"
	gzipAlways     = "always"

	layoutReference = "reference"
	layoutOllama    = "ollama"
	layoutLlamaCpp  = "llamacpp"
)

// defaultContentType is the Content-Type of a stream when the Dialect names
// none.
const defaultContentType = "text/event-stream; charset=utf-8"

// Dialect is the set of wire details that differ between serving engines.
// The zero Dialect is vLLM's format without "logprobs" and "stop_reason";
// DialectByName returns the presets of the engines the repository has
// captures of.
type Dialect struct {
	// ReasoningField is the delta field carrying reasoning text:
	// "reasoning_content" (the default) or "reasoning".
	ReasoningField string
	// Usage places the usage object of a stream when the request set
	// stream_options.include_usage: "final" (the default, empty) sends it
	// in a last chunk with "choices": [] (vLLM, SGLang, OpenAI, ollama);
	// "last-choice" puts it inside the chunk with the finish_reason; "none"
	// never sends usage, even when asked, nor in a non-streamed response
	// (mock servers, some routers), which otherwise always has it.
	Usage string
	// OmitDone leaves out the terminal "data: [DONE]".
	OmitDone bool
	// Role places the assistant role: "chunk" (the default, empty) sends a
	// first chunk whose delta is {"role":"assistant","content":""} (vLLM),
	// just before the first token; "first" puts "role" after "content" in
	// the first token's delta (the @dwmkerr/mock-llm capture); "every"
	// starts every delta with "role":"assistant" and always carries
	// "content", possibly empty (the ollama capture).
	Role string
	// FinishChunk sends the finish_reason in a separate chunk with an empty
	// delta (ollama) instead of on the last token's chunk (vLLM).
	FinishChunk bool
	// NullLogprobs writes "logprobs":null in every choice (vLLM).
	NullLogprobs bool
	// StopReason writes "stop_reason":null after the finish_reason of the
	// choice that ends the response (vLLM; null because the fake's answers
	// end on their own, never on a stop string).
	StopReason bool
	// OmitCachedTokens leaves usage.prompt_tokens_details out.
	OmitCachedTokens bool
	// SystemFingerprint, when set, is written after "model".
	SystemFingerprint string
	// EscapeHTML escapes <, > and & as \u003c, \u003e, \u0026 (Go servers).
	EscapeHTML bool
	// CRLF ends SSE lines with "\r\n" instead of "\n".
	CRLF bool
	// KeepAlive, when positive, writes the SSE comment ": keep-alive" after
	// that much silence of the engine (queueing, prefill). A stall fault's
	// pause stays silent, so a client's stall detection can see it.
	KeepAlive time.Duration
	// ContentType of a stream; empty means
	// "text/event-stream; charset=utf-8".
	ContentType string
	// EventName, when set, precedes every data line with "event: NAME".
	EventName string
	// EventIDs precedes every data line with "id: N", N counting from 1.
	EventIDs bool
	// OmitTokenize answers POST /tokenize and /v1/tokenize with 404, as
	// servers without a tokenizer endpoint (ollama, OpenAI) do.
	OmitTokenize bool
	// OmitFinishReason leaves "finish_reason" out of every chunk (and of a
	// non-streamed choice); the stream otherwise ends as usual.
	OmitFinishReason bool
	// ThinkTags sends reasoning inside the content, as "<think>" + reasoning
	// + "</think>" (DeepSeek-R1 style servers without a reasoning parser),
	// instead of in ReasoningField. The tags add no tokens; the Trace still
	// records the reasoning chunks as Chunk.Kind "reasoning".
	ThinkTags bool
	// TruncatePrompt silently keeps the last MaxModelLen tokens of a longer
	// prompt (as ollama does with its context size): usage.prompt_tokens
	// reports MaxModelLen and no request is refused with
	// context_length_exceeded; a request without max_tokens may decode
	// its whole natural answer. An embeddings input is cut alike (as
	// Ollama's truncate, on by default, does).
	TruncatePrompt bool
	// HTMLErrors answers every bad request (invalid JSON, unknown model,
	// malformed messages, context too long, bad max_tokens, unknown fault
	// header) with 500 and an nginx-like HTML page instead of a 4xx
	// OpenAI JSON error, as a misbehaving gateway does.
	HTMLErrors bool
	// TokenizeSkew is added to every /tokenize count (never below 0), so
	// /tokenize disagrees with usage.prompt_tokens by that many tokens.
	TokenizeSkew int
	// OmitModelLen leaves every context length field ("max_model_len")
	// out of GET /v1/models.
	OmitModelLen bool
	// ServeProps serves llama.cpp's GET /props with
	// default_generation_settings.n_ctx = MaxModelLen.
	ServeProps bool
	// ServeOllamaPS serves ollama's GET /api/ps, whose one running model
	// has context_length = MaxModelLen.
	ServeOllamaPS bool
	// ServeOllamaShow serves ollama's POST /api/show, whose model_info has
	// "<arch>.context_length" = MaxModelLen (arch is "fake").
	ServeOllamaShow bool
	// Gzip says when a stream is compressed with Content-Encoding: gzip:
	// "off" (the default, empty) never; "if-accepted" when the request's
	// Accept-Encoding allows gzip (a "gzip" or "*" entry whose q is not 0);
	// "always" for every stream, even when the client asked for identity
	// or sent no Accept-Encoding (a misconfigured proxy). The compressor is
	// flushed after every event so the stream stays live; Trace.Chunks
	// count uncompressed bytes. Non-streamed bodies and errors are never
	// compressed.
	Gzip string
	// SplitData writes each JSON chunk over two "data:" lines, cut after
	// its first top-level comma; SSE joins them with a newline, which JSON
	// reads as whitespace.
	SplitData bool
	// Layout lays out the answers of /v1/responses, /v1/messages and
	// /v1/completions (chat's follow the knobs above):
	//
	//   - "reference" (the default, empty): the form of the API's owner,
	//     OpenAI's Responses and completions and Anthropic's Messages:
	//     Responses' full response objects with sequence numbers (as
	//     Ollama writes them), response.incomplete with
	//     incomplete_details.reason "max_output_tokens" when the limit
	//     stopped the answer, reasoning as response.reasoning_text.delta,
	//     the true cached and reasoning token counts; Messages'
	//     message_start with input_tokens (uncached), cache_read and
	//     cache_creation counts and a ping after it, a signature_delta
	//     closing a thinking block, message_delta with output_tokens;
	//     completions chunks laid out as chat's by Usage, FinishChunk,
	//     OmitDone, SystemFingerprint and OmitCachedTokens.
	//   - "ollama": Ollama 0.17.4's, byte for byte (the repository's
	//     captures): Responses always "completed", reasoning as
	//     response.reasoning_summary_text.delta, cached and reasoning
	//     tokens always 0; Messages' message_start input_tokens an
	//     estimate (a quarter of the request's characters) and the count in
	//     message_delta, no cache counts, no ping; completions chunks
	//     carrying usage of zeros before the usage chunk.
	//   - "llamacpp": llama.cpp b10573's, byte for byte: Responses events
	//     without sequence numbers and a "timings" object beside the
	//     completed response, always "completed"; Messages with
	//     input_tokens leaving out cache_read_input_tokens; completions
	//     with usage and timings on the finish chunk.
	Layout string
}

// dialectVLLM is vLLM's OpenAI server format.
func dialectVLLM() Dialect { return Dialect{NullLogprobs: true, StopReason: true} }

// dialectOllama is ollama 0.17's /v1 format, as in the repository's testdata/transcripts.
func dialectOllama() Dialect {
	return Dialect{
		ReasoningField:    "reasoning",
		Role:              roleEvery,
		FinishChunk:       true,
		OmitCachedTokens:  true,
		SystemFingerprint: "fp_ollama",
		EscapeHTML:        true,
		ContentType:       "text/event-stream",
		Layout:            layoutOllama,
	}
}

// dialectMockLLM is the @dwmkerr/mock-llm format: no usage, role in the
// first delta, finish_reason on the last content chunk.
func dialectMockLLM() Dialect {
	return Dialect{
		Usage:       usageNone,
		Role:        roleFirst,
		ContentType: "text/event-stream",
	}
}

var dialects = map[string]func() Dialect{
	"vllm":     dialectVLLM,
	"ollama":   dialectOllama,
	"mock-llm": dialectMockLLM,
}

// DialectByName returns the named dialect preset:
//
//	vllm      vLLM's OpenAI server: "logprobs":null and "stop_reason":null
//	          in every choice
//	ollama    ollama 0.17's /v1, as in the repository's testdata/transcripts:
//	          the "reasoning" field, the role in every delta, a separate
//	          finish chunk, no cached tokens, system_fingerprint
//	          "fp_ollama", HTML-escaped JSON, Content-Type text/event-stream,
//	          and its Responses, Messages and completions (Layout "ollama")
//	mock-llm  @dwmkerr/mock-llm: no usage, the role in the first delta,
//	          finish_reason on the last content chunk
//
// Another name is a *ConfigError with Field "Dialect".
func DialectByName(name string) (Dialect, error) {
	f, ok := dialects[name]
	if !ok {
		return Dialect{}, &ConfigError{Field: "Dialect", Value: name, Want: "vllm, ollama or mock-llm"}
	}
	return f(), nil
}

// DialectNames lists the names DialectByName accepts, sorted.
func DialectNames() []string { return slices.Sorted(maps.Keys(dialects)) }

func (d Dialect) validate() error {
	rf := d.ReasoningField
	return firstInvalid(
		check{"Dialect.ReasoningField", rf, rf == "" || rf == "reasoning_content" || rf == "reasoning",
			"reasoning_content or reasoning"},
		check{"Dialect.Usage", d.Usage, oneOf(d.Usage, usageFinal, usageLastChoice, usageNone),
			"final, last-choice or none"},
		check{"Dialect.Role", d.Role, oneOf(d.Role, roleChunk, roleFirst, roleEvery), "chunk, first or every"},
		check{"Dialect.KeepAlive", d.KeepAlive, d.KeepAlive >= 0, ">= 0"},
		check{"Dialect.Gzip", d.Gzip, oneOf(d.Gzip, gzipOff, gzipIfAccepted, gzipAlways), "off, if-accepted or always"},
		check{"Dialect.Layout", d.Layout, oneOf(d.Layout, layoutReference, layoutOllama, layoutLlamaCpp), "reference, ollama or llamacpp"},
	)
}

// withDefaults spells out the defaults of the empty mode fields.
func (d Dialect) withDefaults() Dialect {
	d.Usage = cmp.Or(d.Usage, usageFinal)
	d.Role = cmp.Or(d.Role, roleChunk)
	d.Gzip = cmp.Or(d.Gzip, gzipOff)
	d.Layout = cmp.Or(d.Layout, layoutReference)
	return d
}

// oneOf reports whether s is one of the names.
func oneOf(s string, names ...string) bool { return slices.Contains(names, s) }

func (d *Dialect) reasoningField() string {
	if d.ReasoningField == "" {
		return "reasoning_content"
	}
	return d.ReasoningField
}

func (d *Dialect) contentType() string {
	if d.ContentType == "" {
		return defaultContentType
	}
	return d.ContentType
}
