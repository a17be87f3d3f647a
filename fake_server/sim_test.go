package fakeserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exact is a config with round numbers: one character per token, no
// template tokens, 1,000 prompt tokens prefill in 1 ms, 1 ms decode steps of
// one token, 2 reasoning tokens, 3-token free answers.
func exact() Config {
	c := Fast()
	c.Tokenizer, c.CharsPerToken = tokenizerChars, 1 // a character a token
	c.TemplateTokens = 0
	c.PrefillTokensPerSecond = 1_000_000
	c.DecodeStep = time.Millisecond
	c.SpecTokens = Range{Min: 1, Max: 1}
	c.ReasoningTokens = Range{Min: 2, Max: 2}
	c.AnswerTokens = Range{Min: 3, Max: 3}
	return c
}

// stampedPost streams a request and stamps every SSE data event with the
// (fake) time since the request was sent.
func stampedPost(t *testing.T, srv *Server, body chatBody) []time.Duration {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	start := time.Now()
	resp, err := srv.Client().Post(srv.URL+"/v1/chat/completions", "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	var stamps []time.Duration
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			break
		}
		if strings.HasPrefix(line, "data: ") {
			stamps = append(stamps, time.Since(start))
		}
	}
	return stamps
}

// TestTimelineExact: under synctest the client sees every chunk exactly
// when the trace says it was written, and the trace follows the model:
// prefill 1 ms, then one token per 1 ms step.
func TestTimelineExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := NewInMemory(exact())
		defer srv.Close()
		// "user\n" + 995 characters + "\n": 995 prompt tokens, 0.995 ms of prefill.
		stamps := stampedPost(t, srv, streamBody(strings.Repeat("y", 995), 64))
		synctest.Wait()
		tr, _ := srv.Trace(0)
		require.Equal(t, 995, tr.PromptTokens)
		var written []time.Duration
		for _, c := range tr.Chunks {
			written = append(written, c.Written)
		}
		assert.Equal(t, written, stamps, "client stamps equal server write offsets")
		p := 995 * time.Microsecond
		want := []time.Duration{p, p, p + ms(1), p + ms(2), p + ms(3), p + ms(4), p + ms(4), p + ms(4)}
		if diff := cmp.Diff(want, written); diff != "" {
			t.Errorf("write offsets (-want +got):\n%s", diff)
		}
		assert.Equal(t, p, tr.PrefillDone)
		assert.Equal(t, p, tr.FirstReasoning)
		assert.Equal(t, p+ms(2), tr.FirstContent)
		assert.Equal(t, p+ms(4), tr.Last)
		for _, c := range tr.Chunks {
			assert.Equal(t, c.Scheduled, c.Written, "%s chunk: on the fake clock nothing is late", c.Kind)
		}
	})
}

// TestPrefixCacheReported: a repeated prompt hits the cache for all its full
// 16-token blocks, usage reports it, and prefill covers only the rest.
func TestPrefixCacheReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := NewInMemory(exact())
		defer srv.Close()
		prompt := strings.Repeat("z", 1000) // "user\n"+1000+"\n" = 1006 bytes: 62 blocks
		var cached []int
		for range 2 {
			_, body, err := post(t, srv, streamBody(prompt, 64), nil)
			require.NoError(t, err)
			cached = append(cached, decode(body).usage.Usage.PromptTokensDetails.CachedTokens)
		}
		_, body, err := post(t, srv, streamBody("other"+prompt, 64), nil)
		require.NoError(t, err)
		cached = append(cached, decode(body).usage.Usage.PromptTokensDetails.CachedTokens)
		assert.Equal(t, []int{0, 992, 0}, cached)
		synctest.Wait()
		tr, _ := srv.Trace(1)
		assert.Equal(t, 992, tr.CachedTokens)
		assert.Equal(t, 8*time.Microsecond, tr.PrefillDone, "8 uncached tokens")
	})
}

// TestTokenBudget: max_tokens, max_completion_tokens (which wins) and
// ignore_eos decide the length and the finish reason.
func TestTokenBudget(t *testing.T) {
	for _, tc := range []struct {
		name       string
		body       string
		completion int
		reasoning  string
		content    string
		finish     string
	}{
		{"natural", `"max_tokens":64`, 5, "2", "3", "stop"},
		{"cut in answer", `"max_tokens":4`, 4, "2", "2", "length"},
		{"cut in reasoning", `"max_tokens":1`, 1, "1", "0", "length"},
		{"max_completion_tokens wins", `"max_tokens":64,"max_completion_tokens":3`, 3, "2", "1", "length"},
		{"ignore_eos", `"max_tokens":12,"ignore_eos":true`, 12, "2", "10", "length"},
		{"no limit", `"max_tokens":null`, 5, "2", "3", "stop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := NewInMemory(exact())
				defer srv.Close()
				body := `{"messages":[{"role":"user","content":"hello"}],"stream":true,"stream_options":{"include_usage":true},` + tc.body + `}`
				resp, err := srv.Client().Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
				require.NoError(t, err)
				var buf bytes.Buffer
				_, err = buf.ReadFrom(resp.Body)
				require.NoError(t, err)
				resp.Body.Close()
				d := decode(buf.Bytes())
				assert.Equal(t, tc.completion, d.usage.Usage.CompletionTokens)
				assert.Equal(t, tc.finish, d.finish)
				synctest.Wait()
				tr, _ := srv.Trace(0)
				assert.Equal(t, tc.reasoning+"/"+tc.content, fmt.Sprintf("%d/%d", tr.ReasoningTokens, tr.ContentTokens))
			})
		})
	}
}

// TestDeterministic: the same seed gives the same bytes; another seed not.
func TestDeterministic(t *testing.T) {
	run := func(seed uint64) string {
		var out string
		synctest.Test(t, func(t *testing.T) {
			cfg := Fast()
			cfg.Seed = seed
			srv := NewInMemory(cfg)
			defer srv.Close()
			for range 3 {
				_, body, err := post(t, srv, streamBody("summarize the code", 64), nil)
				require.NoError(t, err)
				out += string(body)
			}
		})
		return out
	}
	a := run(3)
	assert.Equal(t, a, run(3))
	assert.NotEqual(t, a, run(4))
}

// TestSeedLikeRequest replays the seed artifact's shape on the reasoning
// profile: a 65,536-token plan built at 3.0 characters per token comes back
// as about 62,330 prompt tokens (the seed's model counted 62,327 to 62,335;
// the default tokenizer counts within 0.1 % of it), prefilled at 7,800 tok/s, with a few
// hundred reasoning tokens before a marker-first answer.
func TestSeedLikeRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := NewInMemory(reasoningProfile())
		defer srv.Close()
		tail := "\n# request 0: summarize the above in one line. Begin your answer with ANVIL_REQ_1717_00000."
		var b strings.Builder
		for i := 0; b.Len() < 65536*3-len(tail); i++ {
			fmt.Fprintf(&b, "def helper_%d():\n    return compute(%d)  # routine specialist context\n", i, i)
		}
		prompt := b.String()[:65536*3-len(tail)] + tail
		_, body, err := post(t, srv, streamBody(prompt, 8192), nil)
		require.NoError(t, err)
		d := decode(body)
		u := d.usage.Usage
		assert.InEpsilon(t, 62330, u.PromptTokens, 0.001, "prompt tokens")
		assert.True(t, strings.HasPrefix(d.content, "ANVIL_REQ_1717_00000 "), d.content)
		synctest.Wait()
		tr, _ := srv.Trace(0)
		assert.GreaterOrEqual(t, tr.ReasoningTokens, 230)
		assert.LessOrEqual(t, tr.ReasoningTokens, 480)
		var wantPrefill time.Duration // chunks of MaxBatchTokens, each rounded to 1 ns
		for left := u.PromptTokens; left > 0; left -= 8192 {
			wantPrefill += time.Duration(float64(min(left, 8192))*1e9/7800 + 0.5)
		}
		assert.Equal(t, wantPrefill, tr.PrefillDone, "TTFO is the prefill time on an idle engine")
		rate := float64(tr.CompletionTokens-1) / (tr.Last - tr.FirstReasoning).Seconds()
		assert.InDelta(t, 235, rate, 40, "decode tok/s of one stream")
	})
}

// TestNonStreamAndHeaders: non-streamed answers carry the same text and
// usage; X-Request-Id is echoed and recorded.
func TestNonStreamAndHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := NewInMemory(exact())
		defer srv.Close()
		body := streamBody("Reply with exactly 4 words: code", 64)
		body.Stream, body.StreamOptions = false, nil
		resp, data, err := post(t, srv, body, map[string]string{requestIDHeader: "req-42"})
		require.NoError(t, err)
		assert.Equal(t, "req-42", resp.Header.Get(requestIDHeader))
		var c struct {
			Choices []struct {
				Message struct{ Content, ReasoningContent string } `json:"message"`
			} `json:"choices"`
			Usage struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		require.NoError(t, json.Unmarshal(data, &c))
		assert.Equal(t, "code code code code", c.Choices[0].Message.Content)
		assert.Equal(t, 6, c.Usage.CompletionTokens)
		synctest.Wait()
		tr, ok := srv.TraceByRequestID("req-42")
		require.True(t, ok)
		assert.Equal(t, 4, tr.Words)
		assert.Equal(t, http.StatusOK, tr.Status)
	})
}
