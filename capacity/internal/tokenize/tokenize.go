// Package tokenize is the client of a server's tokenizer endpoint, which
// a capacity run's exact sizing uses to count prompts
// (capacity/PROTOCOL.md#exact-token-sizing): vLLM's and SGLang's
// /tokenize in the chat form (the count includes the chat template, as
// usage.prompt_tokens does) or the completions form, llama.cpp's
// {"content"} form and its templated count through /apply-template.
// Discover finds the first URL and form that counts a probe text; a
// Tokenizer then counts prompts (Count) and conversations
// (CountMessages) with it, through the run's client and its headers.
package tokenize

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/jsonstr"
	"github.com/anvilbench/anvil/capacity/internal/prompt"
)

// ErrSizing is wrapped by every error of a count: exact sizing could not
// learn the server's tokenizer (capacity's errPromptSizing).
var ErrSizing = errors.New("capacity: exact prompt sizing failed")

// tokenizePath is the tokenizer route of vLLM, SGLang and the llama.cpp
// server, tried at the API root (Target.BaseURL without its trailing
// "/v1") and under it (root + "/v1/tokenize").
const tokenizePath = "/tokenize"

// idempotencyKey is the header whose presence (without a value, so it is
// not sent) makes net/http's Transport retry a POST on a fresh connection
// when a reused one fails before the answer (see http.Transport).
const idempotencyKey = "Idempotency-Key"

// applyTemplatePath is llama.cpp's chat-template route, beside its
// /tokenize: POST {"messages": [...]} answers {"prompt": <the templated
// text>}, which /tokenize then counts with {"content", "add_special": true}
// as the server counts a chat request (BOS included).
const applyTemplatePath = "/apply-template"

// maxTokenizeAnswer bounds the bytes read of a /tokenize answer: a token
// id list for the largest prompt (maxContextTokens ids of up to 7 digits
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
	// shapeContent is llama.cpp's {"content"}, answered {"tokens": [...]}:
	// bare text, without the chat template.
	shapeContent
	// shapeTemplate is llama.cpp's templated count: POST /apply-template
	// with the chat form, then /tokenize {"content": its prompt,
	// "add_special": true}. llama.cpp answers the chat form at /tokenize
	// itself with an empty list ({"tokens": []}): it reads only content.
	shapeTemplate
)

// tokenizeShapes are the shapes discovery tries at each URL, in order.
var tokenizeShapes = [...]tokenizeShape{shapeMessages, shapeTemplate, shapePrompt, shapeContent}

// bareShapes are the shapes of an API whose prompt is bare text, without
// a chat template (completions, embeddings): the text as the request
// sends it.
var bareShapes = [...]tokenizeShape{shapePrompt, shapeContent}

// shapesOf are the shapes discovery tries for cfg.
func shapesOf(cfg Config) []tokenizeShape {
	if cfg.Bare {
		return bareShapes[:]
	}
	return tokenizeShapes[:]
}

// A Tokenizer counts prompts with one endpoint and body shape.
type Tokenizer struct {
	cl          *client.Client // the run's client: its transport and headers
	timeout     time.Duration  // each count's (Config.Timeout)
	url, path   string
	templateURL string // shapeTemplate: the /apply-template URL
	head, tail  []byte // the body is head + the JSON-quoted prompt + tail
	// chat is set for the chat forms (shapeMessages, shapeTemplate),
	// whose counts include the chat template: the body of a conversation
	// is chatHead + its messages as a JSON array + chatTail.
	chat               bool
	chatHead, chatTail []byte
	// probeRatio is the characters per token of the discovery probe's
	// count: the first guess of a search.
	probeRatio float64
}

// Config is what the counts of a run send: its model, the thinking
// control of its chat requests and the time each count may take.
type Config struct {
	// BaseURL is the API root (Target.BaseURL): the tokenizer is looked
	// for beside it (tokenizeURLs).
	BaseURL string
	Model   string
	// Thinking, when not nil, is sent as chat_template_kwargs'
	// enable_thinking in the chat form, so the template counted is the
	// one the chat requests apply (client.ChatCompletions).
	Thinking *bool
	// Timeout bounds each count (Workload.Timeout).
	Timeout time.Duration
	// Bare: the requests send their prompt as bare text, with no chat
	// template (Target.API completions or embeddings); it is counted as
	// such (bareShapes).
	Bare bool
}

// newTokenizer prepares the bodies of shape for cfg.
func newTokenizer(cl *client.Client, rawURL string, shape tokenizeShape, cfg Config) (*Tokenizer, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("capacity: tokenizer URL: %w", err)
	}
	model, err := json.Marshal(cfg.Model)
	if err != nil {
		return nil, err
	}
	tk := &Tokenizer{cl: cl, timeout: cfg.Timeout, url: rawURL, path: u.Path}
	switch shape {
	case shapeTemplate:
		tk.templateURL = strings.TrimSuffix(rawURL, tokenizePath) + applyTemplatePath
		tk.path = u.Path + " (after " + strings.TrimSuffix(u.Path, tokenizePath) + applyTemplatePath + ")"
		fallthrough
	case shapeMessages:
		tk.chat = true
		tk.chatHead = fmt.Appendf(nil, `{"model":%s,"messages":`, model)
		tk.chatTail = []byte(`,"add_generation_prompt":true`)
		if cfg.Thinking != nil {
			tk.chatTail = fmt.Appendf(tk.chatTail, `,"chat_template_kwargs":{"enable_thinking":%t}`, *cfg.Thinking)
		}
		tk.chatTail = append(tk.chatTail, '}')
		tk.head = append(slices.Clip(tk.chatHead), `[{"role":"user","content":`...)
		tk.tail = append([]byte(`}]`), tk.chatTail...)
	case shapePrompt:
		tk.head = fmt.Appendf(nil, `{"model":%s,"prompt":`, model)
		tk.tail = []byte(`}`)
	case shapeContent:
		tk.head = []byte(`{"content":`)
		tk.tail = []byte(`}`)
		if cfg.Bare {
			// llama.cpp's count of a bare prompt as it sends one (BOS
			// included).
			tk.tail = []byte(`,"add_special":true}`)
		}
	}
	return tk, nil
}

// Path is the route the counts go to, as errors and the artifact name it
// ("/tokenize", or for llama.cpp's templated count "/tokenize (after
// /apply-template)").
func (tk *Tokenizer) Path() string { return tk.path }

// Chat reports whether the counts are of the chat form, the chat
// template included (CountMessages counts a conversation).
func (tk *Tokenizer) Chat() bool { return tk.chat }

// ProbeRatio is the characters per token of Discover's probe count: the
// first guess of a search.
func (tk *Tokenizer) ProbeRatio() float64 { return tk.probeRatio }

// tokenizeAnswer is what the client reads of a /tokenize answer: vLLM's
// and SGLang's "count", or the length of "tokens" (llama.cpp), decoded
// only without a count.
type tokenizeAnswer struct {
	Count  *int            `json:"count"`
	Tokens json.RawMessage `json:"tokens"`
}

// tokenizeStatusError is an answer of the endpoint other than 200; path
// is the route that gave it.
type tokenizeStatusError struct {
	path   string
	status int
}

func (e *tokenizeStatusError) Error() string {
	return fmt.Sprintf("POST %s: HTTP %d", e.path, e.status)
}

// Count returns the endpoint's token count of prompt, within
// Config.Timeout (each request).
func (tk *Tokenizer) Count(ctx context.Context, prompt []byte) (int, error) {
	return tk.countBody(ctx, append(jsonstr.Append(append([]byte(nil), tk.head...), prompt, jsonstr.Go), tk.tail...))
}

// CountMessages returns a chat form's count of a conversation, template
// included; Chat must report true.
func (tk *Tokenizer) CountMessages(ctx context.Context, msgs []client.Message) (int, error) {
	type wireMessage struct { // as the chat requests write a message
		Content string `json:"content"`
		Role    string `json:"role"`
	}
	wire := make([]wireMessage, len(msgs))
	for i, m := range msgs {
		wire[i] = wireMessage{Role: m.Role, Content: m.Content}
	}
	b, err := json.Marshal(wire)
	if err != nil {
		return 0, err
	}
	return tk.countBody(ctx, append(append(slices.Clip(tk.chatHead), b...), tk.chatTail...))
}

// countBody posts a body of tk's form and reads its count.
func (tk *Tokenizer) countBody(ctx context.Context, body []byte) (int, error) {
	if tk.templateURL != "" {
		raw, err := tk.post(ctx, tk.templateURL, body)
		if err != nil {
			return 0, err
		}
		var a struct {
			Prompt *string `json:"prompt"`
		}
		if err := json.Unmarshal(raw, &a); err != nil || a.Prompt == nil {
			return 0, fmt.Errorf("%w: POST %s: the answer has no string \"prompt\": %s", ErrSizing, applyTemplatePath, client.Excerpt(tk.cl.Scrub(string(raw))))
		}
		body = append(jsonstr.Append([]byte(`{"content":`), []byte(*a.Prompt), jsonstr.Go), `,"add_special":true}`...)
	}
	raw, err := tk.post(ctx, tk.url, body)
	if err != nil {
		return 0, err
	}
	var a tokenizeAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return 0, fmt.Errorf("%w: POST %s: the answer is not JSON: %s", ErrSizing, tk.path, tk.cl.Scrub(err.Error()))
	}
	switch {
	case a.Count != nil && *a.Count >= 0:
		return *a.Count, nil
	case a.Count != nil:
		return 0, fmt.Errorf("%w: POST %s: \"count\" = %d: want a count >= 0", ErrSizing, tk.path, *a.Count)
	case a.Tokens != nil && string(a.Tokens) != "null":
		var ids []json.RawMessage
		if err := json.Unmarshal(a.Tokens, &ids); err != nil {
			return 0, fmt.Errorf("%w: POST %s: \"tokens\" is not a list: %s", ErrSizing, tk.path, tk.cl.Scrub(err.Error()))
		}
		return len(ids), nil
	}
	return 0, fmt.Errorf("%w: POST %s: the answer has neither \"count\" nor \"tokens\": %s", ErrSizing, tk.path, client.Excerpt(tk.cl.Scrub(string(raw))))
}

// post sends body to rawURL with the run's headers and returns a 200
// answer's body (at most maxTokenizeAnswer bytes).
func (tk *Tokenizer) post(ctx context.Context, rawURL string, body []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, tk.timeout)
	defer cancel()
	req, err := tk.cl.NewRequest(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	// A count changes nothing on the server: marked idempotent (the key
	// present, no value, so nothing is sent), the transport sends it again
	// on a fresh connection when a kept-alive one was closed under it, as
	// llama.cpp closes every connection after a streamed answer.
	req.Header[idempotencyKey] = nil
	path := req.URL.Path
	resp, err := tk.cl.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: POST %s: %s", ErrSizing, path, tk.cl.Scrub(client.UnwrapURLError(err).Error()))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenizeAnswer))
	if err != nil {
		return nil, fmt.Errorf("%w: POST %s: reading the answer: %s", ErrSizing, path, tk.cl.Scrub(err.Error()))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &tokenizeStatusError{path: path, status: resp.StatusCode}
	}
	return raw, nil
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
var tokenizeProbe = prompt.AppendLines(nil, 0, 64)

// Discover finds the server's tokenizer endpoint: the first URL
// of tokenizeURLs and shape (tokenizeShapes: chat form first, then
// llama.cpp's templated count; bareShapes for a bare prompt) that answers 200 with a positive count of
// tokenizeProbe (an empty token list is no count). A 404 or 405 of the
// URL itself skips its other shapes. It returns nil when no endpoint
// answers (the server has none), and an error only when ctx ends.
func Discover(ctx context.Context, cl *client.Client, cfg Config) (*Tokenizer, error) {
	for _, u := range tokenizeURLs(cfg.BaseURL) {
		for _, shape := range shapesOf(cfg) {
			tk, err := newTokenizer(cl, u, shape, cfg)
			if err != nil {
				return nil, err
			}
			n, err := tk.Count(ctx, tokenizeProbe)
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%w: %w", ErrSizing, context.Cause(ctx))
			}
			if err == nil && n > 0 {
				tk.probeRatio = float64(len(tokenizeProbe)) / float64(n)
				return tk, nil
			}
			var se *tokenizeStatusError
			if errors.As(err, &se) && strings.HasSuffix(se.path, tokenizePath) &&
				(se.status == http.StatusNotFound || se.status == http.StatusMethodNotAllowed) {
				break // no such route
			}
		}
	}
	return nil, nil
}
