package tinyllama

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readCapture reads a capture of testdata/transcripts.
func readCapture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "transcripts", name))
	require.NoError(t, err)
	return b
}

// capturedCount is the first integer after key in a capture.
func capturedCount(t *testing.T, name, key string) int {
	t.Helper()
	m := regexp.MustCompile(`"` + key + `":(\d+)`).FindSubmatch(readCapture(t, name))
	require.NotNil(t, m, "%s has no %q", name, key)
	var n int
	_, err := fmt.Sscan(string(m[1]), &n)
	require.NoError(t, err)
	return n
}

// TestCountsAsCaptured pins the tokenizer and the template to every count
// llama.cpp b10573 answered in the captures: the token ids of /tokenize,
// the raw prompt with BOS of /v1/completions, one user message (52 tokens
// of template), a system message before it, and the 8,000- and
// 49,152-character prompts of code-like text.
func TestCountsAsCaptured(t *testing.T) {
	const s = "Say hello in five words."
	var code strings.Builder
	for i := range 1500 {
		fmt.Fprintf(&code, "def helper_%d(x): return compute(x, %d); ", i, i*7)
	}
	long := code.String()[:49152]

	var tok struct{ Tokens []int }
	require.NoError(t, json.Unmarshal(readCapture(t, "llamacpp-b10573-tokenize.json"), &tok))
	require.Equal(t, tok.Tokens, Tokenize("def helper_0(x): return compute(x, 0);"), "POST /tokenize, token for token")

	user := func(text string) []Message { return []Message{{"user", text}} }
	for _, tc := range []struct {
		capture, key string
		got          int
	}{
		{"llamacpp-b10573-completions-stream-usage.sse", "prompt_tokens", 1 + len(Tokenize(s))},
		{"llamacpp-b10573-stream-usage.sse", "prompt_tokens", ChatTokens(user(s))},
		{"llamacpp-b10573-chat-input-tokens.json", "input_tokens", ChatTokens(user(s))},
		{"llamacpp-b10573-messages-count-tokens-system.json", "input_tokens",
			ChatTokens([]Message{{"system", "Answer in one line."}, {"user", "Name three colours."}})},
		{"llamacpp-b10573-responses-input-tokens-messages.json", "input_tokens",
			ChatTokens([]Message{{"system", "Answer briefly."}, {"user", s}})},
		{"llamacpp-b10573-chat-stream-sse-ping.sse", "prompt_tokens", ChatTokens(user(long[:8000]))},
		{"llamacpp-b10573-stream-over-window.json", "n_prompt_tokens", ChatTokens(user(long))},
	} {
		require.Equal(t, capturedCount(t, tc.capture, tc.key), tc.got, tc.capture)
	}
	text := len(Tokenize(s)) - 1 // without the opening "▁": in the template the text follows a newline
	require.Equal(t, templateTokens, ChatTokens(user(s))-text)
}

func TestTokenizeMerges(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 1},              // the opening "▁"
		{"a", 1},             // "▁a"
		{"A", 2},             // "▁", "A": no "▁A"
		{"and", 1},           // "▁a", "▁an", "▁and"
		{"another", 6},       // "▁an" then o, t, h, e, r
		{"the", 3},           // "▁t", h, e: "▁th" is no piece
		{"x  y", 3},          // "▁x", "▁", "▁y"
		{"\n", 2},            // "▁", <0x0A>
		{"é", 3},             // "▁", two bytes
		{"def helper_0", 11}, // "▁d" e f "▁h" e l p e r _ 0
	} {
		require.Len(t, Tokenize(tc.text), tc.want, "%q", tc.text)
	}
}

func ExampleChatTokens() {
	msgs := []Message{{Role: "user", Content: "Say hello in five words."}}
	fmt.Println(Template(msgs))
	fmt.Println(ChatTokens(msgs), "tokens:", templateTokens, "of template")
	// Output:
	// <|im_start|>user
	// Say hello in five words.<|im_end|>
	// <|im_start|>assistant
	//
	// 71 tokens: 52 of template
}
