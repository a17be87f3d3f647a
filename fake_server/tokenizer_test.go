package fakeserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func words() Config {
	c := small()
	c.Tokenizer = tokenizerWords
	return c
}

// codeLine is one numbered line of the seed's code-like filler.
func codeLine(i int) string {
	return fmt.Sprintf("def helper_%d():\n    return compute(%d)  # routine specialist context\n", i, i)
}

func TestTokenizerWordsRule(t *testing.T) {
	cfg := words()
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"abcd", 1},
		{"abcde", 2},         // ceil(5/4)
		{"specialist", 3},    // ceil(10/4)
		{"12", 2},            // one per digit
		{"\n    \t", 1},      // one per whitespace run
		{"a b", 3},           // letter, space, letter
		{"helper_12()", 7},   // helper(2) _ 1 2 ( )
		{"héllo", 2},         // é is a letter
		{"e\u0301te", 1},     // a combining mark stays with its letter
		{"!!?", 3},           // one per punctuation character
		{"日本語です", 2},         // five letters
		{codeLine(12), 33},   // 70 characters
		{codeLine(1234), 37}, // 74 characters
	} {
		assert.Equal(t, tc.want, cfg.CountTokens(tc.text), "%q", tc.text)
	}
	chars := small()
	chars.Tokenizer = tokenizerChars
	assert.Equal(t, 23, chars.CountTokens(codeLine(12)), "ceil(70 / 3.155)")
}

func TestTokenizerBPERule(t *testing.T) {
	cfg := small()
	require.Equal(t, tokenizerBPE, cfg.withDefaults().Tokenizer, "the default")
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"abcdefgh", 1},      // ceil(8/8)
		{"abcdefghi", 2},     // ceil(9/8)
		{" return", 1},       // a space opens the word
		{"  return", 2},      // two spaces do not: a whitespace run
		{"a b", 2},           // "a", " b"
		{"2048", 4},          // one per digit
		{" 12", 3},           // the space before a digit is its own token
		{"():", 1},           // ceil(3/3)
		{"()):", 2},          // ceil(4/3)
		{" #", 1},            // a space opens punctuation too
		{"\n    \t", 1},      // one per whitespace run
		{"helper_12()", 5},   // helper _ 1 2 ()
		{"héllo", 3},         // h, é, llo
		{"日本語", 3},           // one per character outside ASCII
		{"a\xffb", 3},        // an invalid byte is a token
		{codeLine(12), 20},   // 70 characters, 3.5 per token
		{codeLine(1234), 24}, // 74 characters, 3.1 per token
	} {
		assert.Equal(t, tc.want, cfg.CountTokens(tc.text), "%q", tc.text)
	}
}

// TestTokenizerBPEHasNoFixedRatio: the default tokenizer counts kinds of
// text at different ratios, as a BPE tokenizer does: the reference's
// filler about as the seed's model did at 65,536 tokens, prose and digits
// far apart, and the ratio moves with the digits of the filler's numbers.
func TestTokenizerBPEHasNoFixedRatio(t *testing.T) {
	cfg := small()
	ratio := func(s string) float64 { return float64(len(s)) / float64(cfg.CountTokens(s)) }
	lines := func(from, n int) string {
		var b strings.Builder
		for i := from; i < from+n; i++ {
			b.WriteString(codeLine(i))
		}
		return b.String()
	}
	short, long := ratio(lines(0, 100)), ratio(lines(100000, 100))
	assert.InDelta(t, seedCharsPerToken, ratio(lines(1000, 2600)), 0.1, "4-digit lines: about the seed's ratio")
	assert.Greater(t, short/long, 1.2, "more digits, fewer characters per token: %.3f vs %.3f", short, long)
	prose := ratio(strings.Repeat("the server counted every prompt of the plan ", 50))
	digits := ratio(strings.Repeat("1234567890 ", 50))
	assert.Greater(t, prose, 4.0)
	assert.Less(t, digits, 1.2)
}

// TestTokenizerWordsHasNoFixedRatio: on the seed's code-like prompt the
// words tokenizer is far from any chars-per-token a client may assume,
// and its ratio moves with the digits of the text.
func TestTokenizerWordsHasNoFixedRatio(t *testing.T) {
	cfg := words()
	ratio := func(from, n int) float64 {
		var b strings.Builder
		for i := from; i < from+n; i++ {
			b.WriteString(codeLine(i))
		}
		return float64(len(b.String())) / float64(cfg.CountTokens(b.String()))
	}
	short, long := ratio(0, 100), ratio(100000, 100) // 1-2 digit and 6-digit numbers
	for _, r := range []float64{short, long} {
		assert.Less(t, r, 0.75*seedCharsPerToken, "far below the seed ratio")
		assert.Less(t, r, 0.75*3.0, "far below 3 characters per token")
	}
	assert.Greater(t, short/long, 1.08, "more digits, fewer characters per token: %.3f vs %.3f", short, long)
}

// tokenizeCount posts body to path and decodes the answer.
func tokenizeCount(t *testing.T, srv *Server, path, body string) (int, map[string]json.RawMessage) {
	t.Helper()
	resp, err := srv.Client().Post(srv.URL+path, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var m map[string]json.RawMessage
	if resp.StatusCode == http.StatusOK {
		require.NoError(t, json.Unmarshal(data, &m), "%s", data)
	}
	return resp.StatusCode, m
}

// TestTokenizeEqualsUsage: /tokenize with messages counts exactly the
// usage.prompt_tokens of a chat request with the same messages, for each
// tokenizer; a prompt and llama.cpp's content count the text alone.
func TestTokenizeEqualsUsage(t *testing.T) {
	var long strings.Builder
	for i := range 40 {
		long.WriteString(codeLine(i * 37))
	}
	msgs := map[string]string{
		"user":          `[{"role":"user","content":` + quote(long.String()) + `}]`,
		"system + user": `[{"role":"system","content":"You are terse."},{"role":"user","content":"Summarize 12 lines, exactly."}]`,
		"text parts":    `[{"role":"user","content":[{"type":"text","text":"part one, "},{"type":"text","text":"part 2"}]}]`,
	}
	for _, tok := range []string{tokenizerChars, tokenizerWords} {
		for name, m := range msgs {
			t.Run(string(tok)+"/"+name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					cfg := small()
					cfg.Tokenizer = tok
					srv := NewInMemory(cfg)
					defer srv.Close()
					resp, err := srv.Client().Post(srv.URL+"/v1/chat/completions", "application/json",
						strings.NewReader(`{"stream":true,"stream_options":{"include_usage":true},"max_tokens":8,"messages":`+m+`}`))
					require.NoError(t, err)
					body, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					require.NoError(t, err)
					usage := decode(body).usage.Usage.PromptTokens
					for _, req := range []struct{ path, body string }{
						{"/tokenize", `{"model":"fake-fast","messages":` + m + `}`},
						{"/v1/tokenize", `{"messages":` + m + `,"add_generation_prompt":true,"add_special_tokens":false}`},
					} {
						status, got := tokenizeCount(t, srv, req.path, req.body)
						require.Equal(t, http.StatusOK, status)
						var count, maxLen int
						var ids []int
						require.NoError(t, json.Unmarshal(got["count"], &count))
						require.NoError(t, json.Unmarshal(got["max_model_len"], &maxLen))
						require.NoError(t, json.Unmarshal(got["tokens"], &ids))
						assert.Equal(t, usage, count, "%s count = usage.prompt_tokens", req.path)
						assert.Len(t, ids, count)
						assert.Equal(t, cfg.MaxModelLen, maxLen)
					}
					synctest.Wait()
					tr, _ := srv.Trace(0)
					assert.Equal(t, usage, tr.PromptTokens)
				})
			})
		}
		t.Run(string(tok)+"/prompt and content", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := small()
				cfg.Tokenizer = tok
				srv := NewInMemory(cfg)
				defer srv.Close()
				text := long.String()
				want := cfg.CountTokens(text)
				_, vllm := tokenizeCount(t, srv, "/tokenize", `{"prompt":`+quote(text)+`,"add_special_tokens":true}`)
				_, llama := tokenizeCount(t, srv, "/tokenize", `{"content":`+quote(text)+`,"add_special":false}`)
				var count int
				var vids, lids []int
				require.NoError(t, json.Unmarshal(vllm["count"], &count))
				require.NoError(t, json.Unmarshal(vllm["tokens"], &vids))
				require.NoError(t, json.Unmarshal(llama["tokens"], &lids))
				assert.Equal(t, want, count)
				assert.Equal(t, []string{"tokens"}, keys(llama), "llama.cpp answers only tokens")
				if diff := cmp.Diff(vids, lids); diff != "" {
					t.Errorf("llama.cpp ids differ from vLLM's (-vllm +llama):\n%s", diff)
				}
			})
		})
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func keys(m map[string]json.RawMessage) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// TestTokenizeOmitted: with Dialect.OmitTokenize both routes answer 404.
func TestTokenizeOmitted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := small()
		cfg.Dialect.OmitTokenize = true
		srv := NewInMemory(cfg)
		defer srv.Close()
		for _, path := range []string{"/tokenize", "/v1/tokenize"} {
			status, _ := tokenizeCount(t, srv, path, `{"prompt":"hi"}`)
			assert.Equal(t, http.StatusNotFound, status, path)
		}
	})
}

// TestWordsTokenizerLimitsAndCache: the context-length check and the
// prefix cache count with the configured tokenizer.
func TestWordsTokenizerLimitsAndCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := words()
		cfg.MaxModelLen = 100
		srv := NewInMemory(cfg)
		defer srv.Close()
		// 50 digits: 16 tokens at 3.155 characters per token, 50 in words.
		digits := strings.Repeat("1234567890", 5)
		resp, body, err := post(t, srv, streamBody(digits, 50), nil)
		require.NoError(t, err)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		assert.Contains(t, string(body), "you requested 109 tokens (59 in the messages, 50 in the completion)")

		// "user\n" is 2 tokens, then 64 digits and "\n": 67 tokens, 4 full
		// 16-token blocks, cached the second time.
		prompt := strings.Repeat("7", 64)
		for range 2 {
			resp, _, err = post(t, srv, streamBody(prompt, 4), nil)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode)
		}
		synctest.Wait()
		first, _ := srv.Trace(1)
		second, _ := srv.Trace(2)
		assert.Equal(t, 64+9, second.PromptTokens)
		assert.Equal(t, 0, first.CachedTokens)
		assert.Equal(t, 64, second.CachedTokens)
	})
}
