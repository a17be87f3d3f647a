package client

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// dialectStream is what the client finds in a real capture of an API
// beside chat.
type dialectStream struct {
	events, content, reasoning int
	text                       string
	finish                     []string
	prompt, completion, cached *int
	terminal                   bool
	invalidType, invalid       string // invalid: a part of the message
}

// repeatCutText is the answer Ollama cut at its token repeat limit
// (testdata/transcripts/README.md): 31 " more" in a row end it.
var repeatCutText = ` w all8 w all8-6KKKKKK8q{KKK vQ86\A"? dA i? ally i? all all o v zCKK8 mKKKKKK more^ more e. all aboveKKKK8? l eKKKKKK more eK` +
	strings.Repeat(" more", 31)

// TestDialectsRealCaptures reads every captured stream of Responses,
// Messages and completions with its dialect, byte for byte as captured,
// and checks what the client finds: the first visible token and the
// reasoning where capacity/PROTOCOL.md#apis says, the usage, the finish
// and the end.
func TestDialectsRealCaptures(t *testing.T) {
	const peg = "does not match the expected peg-native format"
	for _, tt := range []struct {
		file string
		d    Dialect
		want dialectStream
	}{
		{"ollama-0.17.4-responses-stream-string.sse", Responses, dialectStream{events: 16, content: 8, text: " or o forK def d lG",
			prompt: new(21), completion: new(8), cached: new(0), terminal: true}},
		{"ollama-0.17.4-responses-stream-messages.sse", Responses, dialectStream{events: 12, content: 4, text: " or o forK",
			prompt: new(21), completion: new(4), cached: new(0), terminal: true}},
		{"llamacpp-b10573-responses-stream-string.sse", Responses, dialectStream{events: 16, content: 8, text: "dfF{A|$ l",
			prompt: new(71), completion: new(8), cached: new(0), terminal: true}},
		{"llamacpp-b10573-responses-stream-messages.sse", Responses, dialectStream{events: 12, content: 4, text: "dfF{",
			prompt: new(71), completion: new(4), cached: new(70), terminal: true}},
		{"llamacpp-b10573-responses-stream-instructions-items.sse", Responses, dialectStream{events: 12, content: 4, text: "u q##",
			prompt: new(115), completion: new(4), cached: new(14), terminal: true}},
		{"llamacpp-b10573-responses-stream-sse-ping.sse", Responses, dialectStream{events: 10, content: 2, text: " on h",
			prompt: new(7301), completion: new(2), cached: new(0), terminal: true}},
		{"llamacpp-b10573-responses-unknown-model.sse", Responses, dialectStream{events: 12, content: 4, text: "dfF{",
			prompt: new(71), completion: new(4), cached: new(70), terminal: true}},
		{"llamacpp-b10573-split-utf8-responses-stream.sse", Responses, dialectStream{events: 21, content: 5, text: "ér x od",
			prompt: new(71), completion: new(6), cached: new(70), terminal: true}},
		{"llamacpp-b10573-think-responses-stream.sse", Responses, dialectStream{events: 11, reasoning: 6,
			prompt: new(79), completion: new(6), cached: new(78), terminal: true}},
		{"llamacpp-b10573-bytebias-responses-stream.sse", Responses, dialectStream{events: 15,
			invalidType: ErrorTypeServerError, invalid: "in-stream error object: The model produced output that " + peg}},

		{"ollama-0.17.4-messages-stream.sse", Messages, dialectStream{events: 13, content: 8, text: " or o forK def d lG",
			finish: []string{"max_tokens"}, prompt: new(21), completion: new(8), terminal: true}},
		{"ollama-0.17.4-messages-stream-system.sse", Messages, dialectStream{events: 9, content: 4, text: "&{- will",
			finish: []string{"max_tokens"}, prompt: new(19), completion: new(4), terminal: true}},
		{"ollama-0.17.4-messages-stream-no-headers.sse", Messages, dialectStream{events: 13, content: 8, text: " or o forK def d lG",
			finish: []string{"max_tokens"}, prompt: new(21), completion: new(8), terminal: true}},
		{"llamacpp-b10573-messages-stream.sse", Messages, dialectStream{events: 13, content: 8, text: "dfF{A|$ l",
			finish: []string{"max_tokens"}, prompt: new(71), completion: new(8), cached: new(70), terminal: true}},
		{"llamacpp-b10573-messages-stream-system.sse", Messages, dialectStream{events: 9, content: 4, text: " q###",
			finish: []string{"max_tokens"}, prompt: new(112), completion: new(4), cached: new(14), terminal: true}},
		{"llamacpp-b10573-messages-bad-messages.sse", Messages, dialectStream{events: 12, content: 7, text: "4 irQ it z[",
			finish: []string{"max_tokens"}, prompt: new(24), completion: new(8), cached: new(14), terminal: true}},
		{"llamacpp-b10573-split-utf8-messages-stream.sse", Messages, dialectStream{events: 9, content: 5, text: "ér x od",
			finish: []string{"max_tokens"}, completion: new(6), terminal: true}},
		{"llamacpp-b10573-think-messages-stream.sse", Messages, dialectStream{events: 12, reasoning: 6,
			finish: []string{"max_tokens"}, prompt: new(79), completion: new(6), cached: new(78), terminal: true}},
		// Cut by Ollama's token repeat limit after the 31st " more" in a
		// row: no stop reason, no output count, no message_stop (the
		// chat completions stream of the same prompt, below, is cut alike).
		{"ollama-0.17.4-messages-stream-repeat-cut.sse", Messages, dialectStream{events: 109, content: 107, text: repeatCutText,
			prompt: new(14), completion: new(0)}},
		{"ollama-0.17.4-stream-repeat-cut.sse", ChatCompletions, dialectStream{events: 107, content: 107, text: repeatCutText}},
		{"llamacpp-b10573-bytebias-messages-stream.sse", Messages, dialectStream{events: 1,
			invalidType: ErrorTypeServerError, invalid: "in-stream error event: The model produced output that " + peg}},

		{"ollama-0.17.4-completions-stream-usage.sse", Completions, dialectStream{events: 11, content: 8, text: " or o forK def d lG",
			finish: []string{"length"}, prompt: new(21), completion: new(8), terminal: true}},
		{"ollama-0.17.4-completions-stream-nousage.sse", Completions, dialectStream{events: 6, content: 4, text: " or o forK",
			finish: []string{"length"}, terminal: true}},
		{"llamacpp-b10573-completions-stream-usage.sse", Completions, dialectStream{events: 10, content: 8, text: ". l this l this# o for",
			finish: []string{"length"}, prompt: new(21), completion: new(8), cached: new(0), terminal: true}},
		{"llamacpp-b10573-completions-stream-nousage.sse", Completions, dialectStream{events: 6, content: 4, text: ". l this l",
			finish: []string{"length"}, prompt: new(21), completion: new(4), cached: new(20), terminal: true}},
		{"llamacpp-b10573-completions-stream-two-prompts.sse", Completions, dialectStream{events: 10, content: 6, text: ".& l{ this-",
			finish: []string{"length", "length"}, prompt: new(19), completion: new(3), cached: new(2), terminal: true}},
		{"llamacpp-b10573-split-utf8-completions-stream.sse", Completions, dialectStream{events: 7, content: 5, text: "éj have allt",
			finish: []string{"length"}, prompt: new(21), completion: new(6), cached: new(0), terminal: true}},
		{"llamacpp-b10573-bytebias-completions-stream.sse", Completions, dialectStream{events: 1,
			invalidType: ErrorTypeServerError, invalid: "in-stream error object: {\"code\":500"}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(transcripts, tt.file))
			require.NoError(t, err)
			res := &streamResult{}
			readStream(newTrackedBody(bytes.NewReader(b), nil), res, tt.d.NewDecoder())
			got := dialectStream{events: res.events, content: res.contentChunks, reasoning: res.reasoningChunks,
				text: res.capture.String(), finish: res.finishReasons, prompt: wireIntPtr(res.usage.Prompt),
				completion: wireIntPtr(res.usage.Completion), cached: wireIntPtr(res.usage.Cached),
				terminal: res.terminal, invalidType: res.invalidType}
			if tt.want.invalid != "" {
				require.Contains(t, res.invalid, tt.want.invalid)
				got.invalid = tt.want.invalid
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(dialectStream{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
