package chunk

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
)

func str(s string) Text { return Text{Kind: String, Bytes: []byte(s)} }

func integer(v int64) Int { return Int{Kind: IntInteger, Value: v} }

// delta wraps members of a delta in a one-choice chunk.
func delta(members string) string { return `{"choices":[{"delta":{` + members + `}}]}` }

// usage wraps members of usage in a chunk without choices.
func usage(members string) string { return `{"choices":[],"usage":{` + members + `}}` }

func oneChoice(c Choice) *Chunk { return &Chunk{Choices: []Choice{c}} }

func prompt(n Int) *Chunk { return &Chunk{Usage: Usage{Present: true, PromptTokens: n}} }

var chunkCmp = cmpopts.EquateEmpty()

type errKind int

const (
	noErr errKind = iota
	notObject
	trailing
	syntaxErr
	unexpectedEOF
	typeErr
)

func classifyErr(err error) errKind {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return noErr
	case errors.Is(err, ErrNotObject):
		return notObject
	case errors.Is(err, ErrTrailingData):
		return trailing
	case errors.As(err, &se):
		return syntaxErr
	case errors.Is(err, io.ErrUnexpectedEOF):
		return unexpectedEOF
	case errors.As(err, &te):
		return typeErr
	}
	return -1
}

// edgeCases are the payloads whose decoding the package documents; each
// also seeds the fuzz test.
var edgeCases = []struct {
	name     string
	data     string
	want     *Chunk
	err      errKind
	fallback bool // decoded by encoding/json
}{
	{name: "vllm content", data: `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"ANV"},"logprobs":null,"finish_reason":null}]}`,
		want: &Chunk{Object: str("chat.completion.chunk"), Choices: []Choice{{Content: str("ANV"), FinishReason: Text{Kind: Null}}}}},
	{name: "vllm error object", data: `{"object":"error","message":"The model \u0060x\u0060 does not exist.","type":"NotFoundError","param":null,"code":404}`,
		want: &Chunk{Object: str("error"), Message: str("The model `x` does not exist.")}},
	{name: "message not a string", data: `{"object":"error","message":{"text":"x"}}`, want: &Chunk{Object: str("error"), Message: Text{Kind: Object}}},
	{name: "llama.cpp timings", data: `{"choices":[],"timings":{"cache_n":0,"prompt_n":71,"prompt_ms":9.5,"predicted_n":8,"predicted_ms":12.25}}`,
		want: &Chunk{Timings: []byte(`{"cache_n":0,"prompt_n":71,"prompt_ms":9.5,"predicted_n":8,"predicted_ms":12.25}`)}},
	{name: "null timings", data: `{"timings":null,"object":null}`, want: &Chunk{Object: Text{Kind: Null}}},
	{name: "role and empty content", data: delta(`"role":"assistant","content":""`),
		want: oneChoice(Choice{Role: str("assistant"), Content: str("")})},
	{name: "escapes", data: delta(`"content":"a\nb\"c\\d\/e\u00e9\t\b\f\r"`),
		want: oneChoice(Choice{Content: str("a\nb\"c\\d/e\u00e9\t\b\f\r")})},
	{name: "NUL escape", data: delta(`"content":"\u0000x"`), want: oneChoice(Choice{Content: str("\x00x")})},
	{name: "surrogate pair", data: delta(`"content":"\ud83d\ude00"`), want: oneChoice(Choice{Content: str("\U0001F600")})},
	{name: "lone high surrogate", data: delta(`"content":"\ud83dx"`), want: oneChoice(Choice{Content: str("\uFFFDx")})},
	{name: "high surrogate then other escape", data: delta(`"content":"\ud800\u0041"`), want: oneChoice(Choice{Content: str("\uFFFDA")})},
	{name: "two high surrogates then low", data: delta(`"content":"\ud800\ud800\udc00"`), want: oneChoice(Choice{Content: str("\uFFFD\U00010000")})},
	{name: "lone low surrogate", data: delta(`"content":"\udc00"`), want: oneChoice(Choice{Content: str("\uFFFD")})},
	{name: "invalid UTF-8 kept without escapes", data: delta("\"content\":\"a\xff\xe2\x82b\""), want: oneChoice(Choice{Content: str("a\xff\xe2\x82b")})},
	{name: "invalid UTF-8 replaced with escapes", data: delta("\"content\":\"a\xff\xe2\x82b\\n\""), want: oneChoice(Choice{Content: str("a\uFFFD\uFFFD\uFFFDb\n")})},
	{name: "encoded U+FFFD kept", data: delta("\"content\":\"\xef\xbf\xbd\\n\""), want: oneChoice(Choice{Content: str("\uFFFD\n")})},
	{name: "content number", data: delta(`"content":5`), want: oneChoice(Choice{Content: Text{Kind: Number}})},
	{name: "content object", data: delta(`"content":{"text":"x"}`), want: oneChoice(Choice{Content: Text{Kind: Object}})},
	{name: "content array", data: delta(`"content":[{"type":"text","text":"x"}]`), want: oneChoice(Choice{Content: Text{Kind: Array}})},
	{name: "content null", data: delta(`"content":null`), want: oneChoice(Choice{Content: Text{Kind: Null}})},
	{name: "content bool", data: delta(`"content":true`), want: oneChoice(Choice{Content: Text{Kind: Bool}})},
	{name: "duplicate content: the last", data: delta(`"content":"a","content":"b"`), want: oneChoice(Choice{Content: str("b")}), fallback: true},
	{name: "folded name", data: delta(`"Content":"a"`), want: oneChoice(Choice{Content: str("a")}), fallback: true},
	{name: "upper-case unknown name", data: `{"ID":"x","choices":[{"delta":{"content":"a"}}]}`, want: oneChoice(Choice{Content: str("a")})},
	{name: "escaped name", data: delta(`"con\u0074ent":"a"`), want: oneChoice(Choice{Content: str("a")}), fallback: true},
	{name: "Kelvin sign folds to k", data: usage("\"prompt_to\u212aens\":7"), want: prompt(integer(7)), fallback: true},
	{name: "reasoning", data: delta(`"reasoning_content":"think","reasoning":""`), want: oneChoice(Choice{ReasoningContent: true})},
	{name: "ollama reasoning", data: delta(`"role":"assistant","content":"","reasoning":"r"`),
		want: oneChoice(Choice{Role: str("assistant"), Content: str(""), Reasoning: true})},
	{name: "reasoning not a string", data: delta(`"reasoning_content":5,"reasoning":{"a":"bc"}`), want: oneChoice(Choice{})},
	{name: "finish reason", data: `{"choices":[{"delta":{},"finish_reason":"stop"}]}`, want: oneChoice(Choice{FinishReason: str("stop")})},
	{name: "several choices", data: `{"choices":[{"delta":{"content":"a\n"}},null,{"delta":null,"finish_reason":"length"},{"delta":{"content":"b\t"}}]}`,
		want: &Chunk{Choices: []Choice{{Content: str("a\n")}, {}, {FinishReason: str("length")}, {Content: str("b\t")}}}},
	{name: "choices null", data: `{"choices":null}`, want: &Chunk{}},
	{name: "duplicate choices merge", data: `{"choices":[{"delta":{"content":"a"}},{}],"choices":[{"finish_reason":"stop"}]}`,
		want: oneChoice(Choice{Content: str("a"), FinishReason: str("stop")}), fallback: true},
	{name: "usage", data: usage(`"prompt_tokens":64,"completion_tokens":13,"total_tokens":77,"prompt_tokens_details":{"cached_tokens":32},"completion_tokens_details":{"reasoning_tokens":3}`),
		want: &Chunk{Usage: Usage{Present: true, PromptTokens: integer(64), CompletionTokens: integer(13), TotalTokens: integer(77), CachedTokens: integer(32)}}},
	{name: "usage null", data: `{"choices":[],"usage":null}`, want: &Chunk{}},
	{name: "usage empty", data: `{"usage":{}}`, want: &Chunk{Usage: Usage{Present: true}}},
	{name: "details null", data: usage(`"prompt_tokens_details":null`), want: &Chunk{Usage: Usage{Present: true}}},
	{name: "count null", data: usage(`"prompt_tokens":null`), want: prompt(Int{Kind: IntNull})},
	{name: "count negative", data: usage(`"prompt_tokens":-5`), want: prompt(integer(-5))},
	{name: "count minus zero", data: usage(`"prompt_tokens":-0`), want: prompt(integer(0))},
	{name: "count max", data: usage(`"prompt_tokens":9223372036854775807`), want: prompt(integer(1<<63 - 1))},
	{name: "count min", data: usage(`"prompt_tokens":-9223372036854775808`), want: prompt(integer(-1 << 63))},
	{name: "count above max", data: usage(`"prompt_tokens":9223372036854775808`), want: prompt(Int{Kind: IntOutOfRange})},
	{name: "count below min", data: usage(`"prompt_tokens":-9223372036854775809`), want: prompt(Int{Kind: IntOutOfRange})},
	{name: "count of 30 digits", data: usage(`"prompt_tokens":123456789012345678901234567890`), want: prompt(Int{Kind: IntOutOfRange})},
	{name: "count fraction", data: usage(`"prompt_tokens":1.0`), want: prompt(Int{Kind: IntNotInteger})},
	{name: "count exponent", data: usage(`"prompt_tokens":1e3`), want: prompt(Int{Kind: IntNotInteger})},
	{name: "count huge", data: usage(`"prompt_tokens":1e400`), want: prompt(Int{Kind: IntNotInteger})},
	{name: "count of 20 digits and a fraction", data: usage(`"prompt_tokens":20000000000000000000.0`), want: prompt(Int{Kind: IntNotInteger})},
	{name: "count of 20 digits and an exponent", data: usage(`"prompt_tokens":-20000000000000000000e0`), want: prompt(Int{Kind: IntNotInteger})},
	{name: "count quoted, 20 digits and a fraction", data: usage(`"prompt_tokens":"20000000000000000000.5"`), want: prompt(Int{Kind: IntNotInteger, Quoted: true})},
	{name: "count quoted", data: usage(`"prompt_tokens":"12"`), want: prompt(Int{Kind: IntInteger, Value: 12, Quoted: true})},
	{name: "count quoted escaped", data: usage(`"prompt_tokens":"\u0031\u0032"`), want: prompt(Int{Kind: IntInteger, Value: 12, Quoted: true})},
	{name: "count quoted fraction", data: usage(`"prompt_tokens":"1.5"`), want: prompt(Int{Kind: IntNotInteger, Quoted: true})},
	{name: "count quoted space", data: usage(`"prompt_tokens":" 1"`), want: prompt(Int{Kind: IntNotNumber})},
	{name: "count quoted text", data: usage(`"prompt_tokens":"many"`), want: prompt(Int{Kind: IntNotNumber})},
	{name: "count bool", data: usage(`"prompt_tokens":true`), want: prompt(Int{Kind: IntNotNumber})},
	{name: "count object", data: usage(`"prompt_tokens":{"n":1}`), want: prompt(Int{Kind: IntNotNumber})},
	{name: "error object", data: `{"error":{"message":"out of memory","code":500}}`, want: &Chunk{Error: []byte(`{"message":"out of memory","code":500}`)}},
	{name: "error null", data: `{"error":null,"choices":[]}`, want: &Chunk{}},
	{name: "error false counts", data: `{"error":false}`, want: &Chunk{Error: []byte(`false`)}},
	{name: "error keeps inner white space", data: `{"error": { "message" : "x" } }`, want: &Chunk{Error: []byte(`{ "message" : "x" }`)}},
	{name: "deep unknown member", data: `{"x":` + strings.Repeat(`[{"a":`, 200) + `1` + strings.Repeat(`}]`, 200) + `,"choices":[{"delta":{"content":"a"}}]}`,
		want: oneChoice(Choice{Content: str("a")})},
	{name: "empty containers skipped", data: `{"x":[{},[],{"a":[]},[[]]],"choices":[{"delta":{"content":"a"}}]}`, want: oneChoice(Choice{Content: str("a")})},
	{name: "empty object closing an array", data: `{"":[{}}]}`, err: syntaxErr, fallback: true},
	{name: "deeper than the fast path", data: `{"x":` + strings.Repeat(`[`, jsonpick.MaxFastDepth+1) + strings.Repeat(`]`, jsonpick.MaxFastDepth+1) + `,"choices":[{"delta":{"content":"a"}}]}`,
		want: oneChoice(Choice{Content: str("a")}), fallback: true},
	{name: "white space everywhere", data: " \t\n{ \"choices\" : [ { \"delta\" : { \"content\" : \"a\" } } ] }\r\n\u00a0",
		want: oneChoice(Choice{Content: str("a")})},
	{name: "vertical tab before the object", data: "\v{}", want: &Chunk{}},
	{name: "empty object", data: `{}`, want: &Chunk{}},

	{name: "empty", data: "  ", err: notObject},
	{name: "array", data: `[{}]`, err: notObject},
	{name: "string", data: `"{}"`, err: notObject},
	{name: "two objects", data: `{} {}`, err: trailing},
	{name: "garbage after", data: `{"choices":[]}x`, err: trailing},
	{name: "syntax error", data: `{"choices":[}`, err: syntaxErr, fallback: true},
	{name: "leading zero", data: `{"created":01}`, err: syntaxErr, fallback: true},
	{name: "bad escape", data: `{"id":"\x"}`, err: syntaxErr, fallback: true},
	{name: "control character in string", data: "{\"id\":\"a\tb\"}", err: syntaxErr, fallback: true},
	{name: "mismatched brackets", data: `{"x":[{]}`, err: syntaxErr, fallback: true},
	{name: "cut", data: `{"choices":[`, err: unexpectedEOF, fallback: true},
	{name: "cut after a comma", data: `{"id":"x",`, err: unexpectedEOF, fallback: true},
	{name: "cut after a comma in a choice", data: `{"choices":[{"index":0,`, err: unexpectedEOF, fallback: true},
	{name: "cut in string", data: `{"choices":[{"delta":{"content":"\u00`, err: unexpectedEOF, fallback: true},
	{name: "choices not an array", data: `{"choices":{}}`, err: typeErr, fallback: true},
	{name: "type error before trailing data", data: `{"choices":5} x`, err: typeErr, fallback: true},
	{name: "choice not an object", data: `{"choices":["a"]}`, err: typeErr, fallback: true},
	{name: "delta not an object", data: `{"choices":[{"delta":"a"}]}`, err: typeErr, fallback: true},
	{name: "usage not an object", data: `{"usage":[]}`, err: typeErr, fallback: true},
	{name: "details not an object", data: usage(`"prompt_tokens_details":0`), err: typeErr, fallback: true},
	{name: "syntax error after a type error", data: `{"choices":5,"x":tru}`, err: syntaxErr, fallback: true},
}

func TestDecode(t *testing.T) {
	for _, tc := range edgeCases {
		t.Run(tc.name, func(t *testing.T) {
			var d Decoder
			got, err := d.Decode([]byte(tc.data))
			require.Equal(t, tc.err, classifyErr(err), "error %v", err)
			if tc.err == noErr {
				if diff := cmp.Diff(tc.want, got, chunkCmp); diff != "" {
					t.Errorf("Decode(%q) (-want +got):\n%s", tc.data, diff)
				}
			} else {
				require.Nil(t, got)
			}
			if tc.fallback != (d.fallbacks == 1) {
				t.Errorf("decoded by encoding/json: %v, want %v", d.fallbacks == 1, tc.fallback)
			}
			// The documented result is encoding/json's.
			ref := decodeReference([]byte(tc.data))
			require.True(t, sameError(err, ref.err), "error %v, encoding/json's %v", err, ref.err)
			if diff := cmp.Diff(ref.chunk, got, chunkCmp); diff != "" {
				t.Errorf("disagrees with encoding/json (-json +fast):\n%s", diff)
			}
		})
	}
}
