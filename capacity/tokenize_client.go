package capacity

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/anvilbench/anvil/capacity/internal/jsonstr"
)

// This file is the client of a server's tokenizer endpoint, which exact
// sizing (prompt_sizing.go) uses to count prompts
// (capacity/PROTOCOL.md#exact-token-sizing).

// tokenizePath is the tokenizer route of vLLM, SGLang and the llama.cpp
// server, tried at the API root (Target.BaseURL without its trailing
// "/v1") and under it (root + "/v1/tokenize").
const tokenizePath = "/tokenize"

// maxTokenizeAnswer bounds the bytes read of a /tokenize answer: a token
// id list for the largest prompt (MaxContextTokens ids of up to 7 digits
// and a comma) fits.
const maxTokenizeAnswer = 16 << 20

// tokenizeShape is a request body a tokenizer endpoint accepts.
type tokenizeShape int

const (
	// shapeMessages is vLLM's and SGLang's chat form,
	// {"model", "messages", "add_generation_prompt": true}: the count
	// includes the chat template, as usage.prompt_tokens does.
	shapeMessages tokenizeShape = iota
	// shapePrompt is the completions form {"model", "prompt"}: bare text.
	shapePrompt
	// shapeContent is llama.cpp's {"content"}, answered {"tokens": [...]}.
	shapeContent
)

// tokenizer counts prompts with one endpoint and body shape.
type tokenizer struct {
	cl         *client // the run's client: its transport and headers
	url, path  string
	head, tail []byte // the body is head + the JSON-quoted prompt + tail
}

// newTokenizer prepares the bodies of shape for the target's model and
// the workload's thinking control (sent as chat_template_kwargs in the chat
// form, so the template counted is the one the chat requests apply).
func newTokenizer(cl *client, rawURL string, shape tokenizeShape, t Target, w Workload) (*tokenizer, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("capacity: tokenizer URL: %w", err)
	}
	model, err := json.Marshal(t.Model)
	if err != nil {
		return nil, err
	}
	tk := &tokenizer{cl: cl, url: rawURL, path: u.Path}
	switch shape {
	case shapeMessages:
		tk.head = fmt.Appendf(nil, `{"model":%s,"messages":[{"role":"user","content":`, model)
		tk.tail = []byte(`}],"add_generation_prompt":true`)
		if kw, ok := bodyFields(t, w)["chat_template_kwargs"]; ok {
			b, err := json.Marshal(kw)
			if err != nil {
				return nil, err
			}
			tk.tail = fmt.Appendf(tk.tail, `,"chat_template_kwargs":%s`, b)
		}
		tk.tail = append(tk.tail, '}')
	case shapePrompt:
		tk.head = fmt.Appendf(nil, `{"model":%s,"prompt":`, model)
		tk.tail = []byte(`}`)
	case shapeContent:
		tk.head = []byte(`{"content":`)
		tk.tail = []byte(`}`)
	}
	return tk, nil
}

// tokenizeAnswer is what the client reads of a /tokenize answer: vLLM's
// and SGLang's "count", or the length of "tokens" (llama.cpp).
type tokenizeAnswer struct {
	Count  *int              `json:"count"`
	Tokens []json.RawMessage `json:"tokens"`
}

// tokenizeStatusError is an answer of the endpoint other than 200.
type tokenizeStatusError struct{ status int }

func (e *tokenizeStatusError) Error() string { return fmt.Sprintf("HTTP %d", e.status) }

// count returns the endpoint's token count of prompt, within
// Workload.Timeout.
func (tk *tokenizer) count(ctx context.Context, prompt []byte) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, tk.cl.timeout)
	defer cancel()
	body := append(jsonstr.Append(append([]byte(nil), tk.head...), prompt, jsonstr.Go), tk.tail...)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tk.url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	for k, vs := range tk.cl.tmpl.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	resp, err := tk.cl.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%w: POST %s: %s", ErrPromptSizing, tk.path, tk.cl.secrets.scrub(unwrapURLError(err).Error()))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenizeAnswer))
	if err != nil {
		return 0, fmt.Errorf("%w: POST %s: reading the answer: %s", ErrPromptSizing, tk.path, tk.cl.secrets.scrub(err.Error()))
	}
	if resp.StatusCode != http.StatusOK {
		return 0, &tokenizeStatusError{resp.StatusCode}
	}
	var a tokenizeAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return 0, fmt.Errorf("%w: POST %s: the answer is not JSON: %s", ErrPromptSizing, tk.path, tk.cl.secrets.scrub(err.Error()))
	}
	switch {
	case a.Count != nil && *a.Count >= 0:
		return *a.Count, nil
	case a.Count != nil:
		return 0, fmt.Errorf("%w: POST %s: \"count\" = %d: want a count >= 0", ErrPromptSizing, tk.path, *a.Count)
	case a.Tokens != nil:
		return len(a.Tokens), nil
	}
	return 0, fmt.Errorf("%w: POST %s: the answer has neither \"count\" nor \"tokens\": %s", ErrPromptSizing, tk.path, serverExcerpt(tk.cl.secrets.scrub(string(raw))))
}

// tokenizeURLs are the tokenizer URLs tried for a base URL, in order: at
// the API root (the base URL without a trailing "/v1"), then under /v1.
func tokenizeURLs(baseURL string) []string {
	base := strings.TrimRight(baseURL, "/")
	root := strings.TrimSuffix(base, "/v1")
	out := []string{root + tokenizePath, root + "/v1" + tokenizePath}
	if b := base + tokenizePath; b != out[0] && b != out[1] {
		out = append(out, b)
	}
	return out
}

// tokenizeProbe is the text discovery counts: a filler line.
var tokenizeProbe = appendLines(nil, 0, 64)

// discoverTokenizer finds the server's tokenizer endpoint: the first URL
// of tokenizeURLs and shape (chat form first) that answers 200 with a
// positive count of tokenizeProbe. A 404 or 405 skips the URL's other
// shapes. It returns nil when no endpoint answers (the server has none),
// and an error only when ctx ends.
func discoverTokenizer(ctx context.Context, cl *client, t Target, w Workload) (*tokenizer, error) {
	for _, u := range tokenizeURLs(t.BaseURL) {
		for _, shape := range []tokenizeShape{shapeMessages, shapePrompt, shapeContent} {
			tk, err := newTokenizer(cl, u, shape, t, w)
			if err != nil {
				return nil, err
			}
			n, err := tk.count(ctx, tokenizeProbe)
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%w: %w", ErrPromptSizing, context.Cause(ctx))
			}
			if err == nil && n > 0 {
				return tk, nil
			}
			var se *tokenizeStatusError
			if errors.As(err, &se) && (se.status == http.StatusNotFound || se.status == http.StatusMethodNotAllowed) {
				break // no such route
			}
		}
	}
	return nil, nil
}
