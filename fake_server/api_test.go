package fakeserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// apiBody is a request body of an API asking for prompt with a limit of
// maxTokens, streamed or not.
func apiBody(api, prompt string, maxTokens int, stream bool) map[string]any {
	msgs := []map[string]any{{"role": "user", "content": prompt}}
	switch api {
	case "responses":
		return map[string]any{"input": prompt, "max_output_tokens": maxTokens, "stream": stream}
	case "messages":
		return map[string]any{"messages": msgs, "max_tokens": maxTokens, "stream": stream}
	case "completions":
		return map[string]any{"prompt": prompt, "max_tokens": maxTokens, "stream": stream, "stream_options": map[string]any{"include_usage": true}}
	}
	return map[string]any{"messages": msgs, "max_tokens": maxTokens, "stream": stream, "stream_options": map[string]any{"include_usage": true}}
}

// apiPath is the route of an API.
func apiPath(api string) string {
	if api == "chat" {
		return "/v1/chat/completions"
	}
	return "/v1/" + api
}

// told is what a streamed answer of any API tells a client.
type told struct {
	reasoning, text string
	prompt, output  int // usage, prompt with the cache read
	cached          int
	end             string // chat's and completions' finish reason, Responses' final status, Messages' stop reason
	errors          []string
}

// tell reads a stream of api the way a client does.
func tell(t *testing.T, api string, body []byte) told {
	t.Helper()
	var r told
	for _, ev := range sseEvents(t, body) {
		if ev.data == "[DONE]" {
			continue
		}
		var e struct {
			Type     string          `json:"type"`
			Delta    json.RawMessage `json:"delta"`
			Error    json.RawMessage `json:"error"`
			Response *struct {
				Status string `json:"status"`
				Usage  *struct {
					InputTokens        int `json:"input_tokens"`
					OutputTokens       int `json:"output_tokens"`
					InputTokensDetails struct {
						CachedTokens int `json:"cached_tokens"`
					} `json:"input_tokens_details"`
				} `json:"usage"`
			} `json:"response"`
			Message *struct {
				Usage map[string]int `json:"usage"`
			} `json:"message"`
			Usage   json.RawMessage `json:"usage"`
			Choices []struct {
				Text         string  `json:"text"`
				FinishReason *string `json:"finish_reason"`
				Delta        struct {
					Content          string `json:"content"`
					ReasoningContent string `json:"reasoning_content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if !json.Valid([]byte(ev.data)) || json.Unmarshal([]byte(ev.data), &e) != nil {
			r.errors = append(r.errors, "malformed: "+ev.data)
			continue
		}
		if e.Error != nil || ev.name == "error" || e.Type == "response.failed" {
			r.errors = append(r.errors, ev.data)
		}
		var delta string
		_ = json.Unmarshal(e.Delta, &delta)
		switch api {
		case "responses":
			switch e.Type {
			case "response.output_text.delta":
				r.text += delta
			case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
				r.reasoning += delta
			case "response.completed", "response.incomplete":
				u := e.Response.Usage
				r.prompt, r.output, r.cached, r.end = u.InputTokens, u.OutputTokens, u.InputTokensDetails.CachedTokens, e.Response.Status
			}
		case "messages":
			var d struct {
				Type, Text, Thinking string
				StopReason           string `json:"stop_reason"`
			}
			_ = json.Unmarshal(e.Delta, &d)
			r.text, r.reasoning = r.text+d.Text, r.reasoning+d.Thinking
			if d.StopReason != "" {
				r.end = d.StopReason
			}
			var u map[string]int
			if e.Message != nil {
				u = e.Message.Usage
			} else {
				_ = json.Unmarshal(e.Usage, &u)
			}
			if n, ok := u["input_tokens"]; ok {
				r.prompt, r.cached = n+u["cache_read_input_tokens"], u["cache_read_input_tokens"]
			}
			if n, ok := u["output_tokens"]; ok {
				r.output = n
			}
		default:
			for _, c := range e.Choices {
				r.text += c.Text + c.Delta.Content
				r.reasoning += c.Delta.ReasoningContent
				if c.FinishReason != nil {
					r.end = *c.FinishReason
				}
			}
			var u map[string]any
			if json.Unmarshal(e.Usage, &u) == nil && u["prompt_tokens"] != nil && u["prompt_tokens"].(float64) > 0 {
				r.prompt, r.output = int(u["prompt_tokens"].(float64)), int(u["completion_tokens"].(float64))
			}
		}
	}
	return r
}

// TestAPIsShareTheEngine sends one prompt over chat, Responses and
// Messages to three servers of one config: the same prompt tokens, the
// same answer (reasoning and text, token for token), the same times; and
// over completions, the same prompt text without the chat template and
// without reasoning.
func TestAPIsShareTheEngine(t *testing.T) {
	got := map[string]told{}
	traces := map[string]Trace{}
	for _, api := range []string{"chat", "responses", "messages", "completions"} {
		synctest.Test(t, func(t *testing.T) {
			cfg := small()
			cfg.Dialect.Layout = layoutReference
			srv := NewInMemory(cfg)
			defer srv.Close()
			status, hdr, body := postJSON(t, srv, apiPath(api), apiBody(api, goldenPrompt, 64, true), nil)
			require.Equal(t, 200, status, "%s: %s", api, body)
			assert.Equal(t, defaultContentType, hdr.Get("Content-Type"))
			got[api] = tell(t, api, body)
			synctest.Wait()
			tr, ok := srv.Trace(0)
			require.True(t, ok)
			require.Equal(t, api, tr.API)
			traces[api] = tr
		})
	}
	chat := traces["chat"]
	require.Positive(t, chat.ReasoningTokens)
	for _, api := range []string{"responses", "messages"} {
		tr := traces[api]
		assert.Equal(t, chat.PromptTokens, tr.PromptTokens, api)
		assert.Equal(t, chat.ReasoningTokens, tr.ReasoningTokens, api)
		assert.Equal(t, chat.ContentTokens, tr.ContentTokens, api)
		assert.Equal(t, chat.PrefillDone, tr.PrefillDone, api)
		assert.Equal(t, chat.FirstReasoning, tr.FirstReasoning, api)
		assert.Equal(t, chat.FirstContent, tr.FirstContent, api)
		assert.Equal(t, got["chat"].text, got[api].text, api)
		assert.Equal(t, got["chat"].reasoning, got[api].reasoning, api)
		assert.Equal(t, chat.PromptTokens, got[api].prompt, api)
		assert.Equal(t, chat.CompletionTokens, got[api].output, api)
	}
	assert.Equal(t, "stop", got["chat"].end)
	assert.Equal(t, "completed", got["responses"].end)
	assert.Equal(t, "end_turn", got["messages"].end)
	comp := traces["completions"]
	assert.Equal(t, chat.PromptTokens-small().TemplateTokens, comp.PromptTokens, "no chat template")
	assert.Zero(t, comp.ReasoningTokens, "a raw prompt does not reason")
	assert.Equal(t, comp.PromptTokens, got["completions"].prompt)
	assert.Equal(t, got["chat"].text, got["completions"].text, "the same answer to the same instructions")
}

// TestAPILimits checks each API's token limit and how each says the
// limit stopped the answer.
func TestAPILimits(t *testing.T) {
	for _, tc := range []struct {
		api, layout, end string
	}{
		{"responses", layoutReference, "incomplete"},
		{"responses", layoutOllama, "completed"},
		{"responses", layoutLlamaCpp, "completed"},
		{"messages", layoutReference, "max_tokens"},
		{"messages", layoutLlamaCpp, "max_tokens"},
		{"completions", layoutReference, "length"},
		{"completions", layoutOllama, "length"},
	} {
		t.Run(tc.api+"-"+tc.layout, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := small()
				cfg.Dialect.Layout = tc.layout
				srv := NewInMemory(cfg)
				defer srv.Close()
				status, _, body := postJSON(t, srv, apiPath(tc.api), apiBody(tc.api, goldenPrompt, 2, true), nil)
				require.Equal(t, 200, status, "%s", body)
				r := tell(t, tc.api, body)
				assert.Equal(t, 2, r.output)
				assert.Equal(t, tc.end, r.end)
			})
		})
	}
}

// TestAPIRequests checks what each API reads of a request.
func TestAPIRequests(t *testing.T) {
	for _, tc := range []struct {
		name   string
		api    string
		body   map[string]any
		status int
		check  func(t *testing.T, tr Trace)
	}{
		{name: "responses input items and instructions", api: "responses", status: 200,
			body: map[string]any{"instructions": "Answer briefly.", "max_output_tokens": 4,
				"input": []any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "Hi there."}}}}},
			check: func(t *testing.T, tr Trace) {
				cfg := small()
				assert.Equal(t, cfg.countTokens("Answer briefly.")+cfg.countTokens("Hi there.")+cfg.TemplateTokens, tr.PromptTokens)
			}},
		{name: "responses effort none", api: "responses", status: 200,
			body:  map[string]any{"input": "Hi.", "reasoning": map[string]any{"effort": "none"}},
			check: func(t *testing.T, tr Trace) { assert.Zero(t, tr.ReasoningTokens) }},
		{name: "responses without input", api: "responses", status: 400, body: map[string]any{"max_output_tokens": 4}},
		{name: "responses with another item", api: "responses", status: 400, body: map[string]any{"input": []any{map[string]any{"type": "function_call_output"}}}},
		{name: "messages system blocks", api: "messages", status: 200,
			body: map[string]any{"max_tokens": 4, "system": []any{map[string]any{"type": "text", "text": "Answer in one line."}},
				"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Name three colours."}}}}},
			check: func(t *testing.T, tr Trace) {
				cfg := small()
				assert.Equal(t, cfg.countTokens("Answer in one line.")+cfg.countTokens("Name three colours.")+cfg.TemplateTokens, tr.PromptTokens)
			}},
		{name: "messages thinking disabled", api: "messages", status: 200,
			body:  map[string]any{"max_tokens": 8, "thinking": map[string]any{"type": "disabled"}, "messages": []any{map[string]any{"role": "user", "content": "Hi."}}},
			check: func(t *testing.T, tr Trace) { assert.Zero(t, tr.ReasoningTokens) }},
		{name: "messages without max_tokens", api: "messages", status: 400, body: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "Hi."}}}},
		{name: "completions default limit", api: "completions", status: 200, body: map[string]any{"prompt": goldenPrompt},
			check: func(t *testing.T, tr Trace) { assert.Equal(t, defaultCompletionTokens, tr.MaxTokens) }},
		{name: "completions one-prompt batch", api: "completions", status: 200, body: map[string]any{"prompt": []string{"Hi."}}},
		{name: "completions batch", api: "completions", status: 400, body: map[string]any{"prompt": []string{"Hi.", "Ho."}}},
		{name: "responses over the window", api: "responses", status: 400,
			body: map[string]any{"input": strings.Repeat("word ", small().MaxModelLen), "max_output_tokens": 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := NewInMemory(small())
				defer srv.Close()
				status, _, body := postJSON(t, srv, apiPath(tc.api), tc.body, nil)
				require.Equal(t, tc.status, status, "%s", body)
				synctest.Wait()
				tr, ok := srv.Trace(0)
				require.True(t, ok)
				if tc.check != nil {
					tc.check(t, tr)
				}
			})
		})
	}
}

// TestAPIErrors checks each API's error shape, under each layout.
func TestAPIErrors(t *testing.T) {
	for _, tc := range []struct {
		api, layout string
		want        string // a prefix of the body
	}{
		{"responses", layoutReference, `{"error":{"message":"Rate limit reached`},
		{"responses", layoutOllama, `{"error":{"message":"Rate limit reached for requests. Please retry after the time given in Retry-After.","type":"api_error"`},
		{"responses", layoutLlamaCpp, `{"error":{"code":429,"message":"Rate limit reached`},
		{"messages", layoutReference, `{"type":"error","error":{"type":"rate_limit_error","message":"Rate limit reached`},
		{"messages", layoutOllama, `{"type":"error","error":{"type":"rate_limit_error","message":"Rate limit reached`},
		{"messages", layoutLlamaCpp, `{"error":{"code":429,`},
		{"completions", layoutReference, `{"error":{"message":"Rate limit reached`},
		{"completions", layoutLlamaCpp, `{"error":{"code":429,`},
	} {
		t.Run(tc.api+"-"+tc.layout, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := small()
				cfg.Dialect.Layout = tc.layout
				srv := NewInMemory(cfg)
				defer srv.Close()
				status, hdr, body := postJSON(t, srv, apiPath(tc.api), apiBody(tc.api, "Hi.", 4, true), map[string]string{faultHeader: string(faultHTTP429)})
				assert.Equal(t, http.StatusTooManyRequests, status)
				assert.Equal(t, "1", hdr.Get("Retry-After"))
				assert.True(t, strings.HasPrefix(string(body), tc.want), "%s", body)
			})
		})
	}
}

// TestAPIStreamFaults checks the stream faults on every streaming API,
// each in the API's own form.
func TestAPIStreamFaults(t *testing.T) {
	for _, api := range []string{"responses", "messages", "completions"} {
		for _, layout := range []string{layoutReference, layoutOllama, layoutLlamaCpp} {
			t.Run(api+"-"+layout, func(t *testing.T) {
				run := func(t *testing.T, fault Fault) (told, Trace, error) {
					var r told
					var tr Trace
					var rerr error
					synctest.Test(t, func(t *testing.T) {
						cfg := small()
						cfg.Dialect.Layout = layout
						cfg.Faults.Stall = 5 * time.Second
						srv := NewInMemory(cfg)
						defer srv.Close()
						b, err := json.Marshal(apiBody(api, goldenPrompt, 64, true))
						require.NoError(t, err)
						resp, data, err := postRaw(t, srv, apiPath(api), b, map[string]string{faultHeader: string(fault)})
						require.Equal(t, 200, resp.StatusCode)
						rerr = err
						if err == nil {
							r = tell(t, api, data)
						}
						synctest.Wait()
						tr, _ = srv.Trace(0)
					})
					return r, tr, rerr
				}
				r, tr, err := run(t, faultStreamError)
				require.NoError(t, err)
				require.Len(t, r.errors, 1, "one in-stream error")
				assert.Contains(t, r.errors[0], streamErrorMessage)
				assert.Equal(t, chunkError, tr.Chunks[len(tr.Chunks)-1-doneAfterError(api, layout)].Kind)

				r, _, err = run(t, faultMalformedJSON)
				require.NoError(t, err)
				require.Len(t, r.errors, 1)
				assert.True(t, strings.HasPrefix(r.errors[0], "malformed: "), r.errors[0])

				r, _, err = run(t, faultOversized)
				require.NoError(t, err)
				assert.Greater(t, len(r.text), 1<<20)

				_, tr, err = run(t, faultDrop)
				require.Error(t, err)
				assert.Equal(t, endDropped, tr.End)

				r, tr, err = run(t, faultStall)
				require.NoError(t, err)
				assert.Positive(t, r.output)
				var gap time.Duration
				for i := 1; i < len(tr.Chunks); i++ {
					gap = max(gap, tr.Chunks[i].Written-tr.Chunks[i-1].Written)
				}
				assert.Equal(t, 5*time.Second, gap)

				r, _, err = run(t, faultReasoningOnly)
				require.NoError(t, err)
				if api != "completions" {
					assert.Empty(t, r.text)
					assert.NotEmpty(t, r.reasoning)
				}
			})
		}
	}
}

// doneAfterError is the events written after the stream_error fault's
// error: chat's and completions' [DONE] in the layouts that send it.
func doneAfterError(api, layout string) int {
	if api == "completions" && layout != layoutLlamaCpp {
		return 1
	}
	return 0
}

// TestMessagesKeepAlive checks that a Messages stream keeps alive with
// ping events, and that the reference layout pings after message_start.
func TestMessagesKeepAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := small()
		cfg.Dialect.KeepAlive = 100 * time.Microsecond
		cfg.PrefillTokensPerSecond = 100_000
		srv := NewInMemory(cfg)
		defer srv.Close()
		status, _, body := postJSON(t, srv, "/v1/messages", apiBody("messages", goldenPrompt, 8, true), nil)
		require.Equal(t, 200, status)
		evs := sseEvents(t, body)
		require.Equal(t, "ping", evs[0].name, "silence during the prefill")
		pings := 0
		for _, ev := range evs {
			if ev.name == "ping" {
				pings++
				assert.JSONEq(t, `{"type":"ping"}`, ev.data)
			}
		}
		assert.Greater(t, pings, 1)
	})
}

// postRaw posts body to path and returns the response, its body and the
// error that ended reading it.
func postRaw(t *testing.T, srv *Server, path string, body []byte, hdr map[string]string) (*http.Response, []byte, error) {
	t.Helper()
	req, err := http.NewRequest("POST", srv.URL+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, rerr := io.ReadAll(resp.Body)
	return resp, data, rerr
}

// TestAPIGoldens pins the fake's own answers of every API in every
// layout, streamed and not (TestDialectGoldens pins chat's).
func TestAPIGoldens(t *testing.T) {
	type variant struct {
		name string
		body map[string]any
	}
	for _, api := range []string{"responses", "messages", "completions", "embeddings"} {
		for _, layout := range []string{layoutReference, layoutOllama, layoutLlamaCpp} {
			variants := []variant{
				{"", apiBody(api, goldenPrompt, 64, true)},
				{"-body", apiBody(api, goldenPrompt, 64, false)},
				{"-limit", apiBody(api, goldenPrompt, 5, true)},
			}
			if api == "embeddings" {
				variants = []variant{
					{"", map[string]any{"input": []string{"def helper_0(x): return compute(x, 0);", "The quick brown fox."}, "dimensions": 4}},
					{"-base64", map[string]any{"input": "The quick brown fox.", "dimensions": 4, "encoding_format": "base64"}},
				}
			}
			for _, v := range variants {
				name := api + "-" + layout + v.name
				t.Run(name, func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						cfg := small()
						cfg.Dialect.Layout = layout
						srv := NewInMemory(cfg)
						defer srv.Close()
						b, err := json.Marshal(v.body)
						require.NoError(t, err)
						resp, data, err := postRaw(t, srv, apiPath(api), b, map[string]string{requestIDHeader: "golden-" + name})
						require.NoError(t, err)
						golden(t, name+".txt", transcript(resp, data))
					})
				})
			}
		}
	}
}
