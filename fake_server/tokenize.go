package fakeserver

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
)

// tokenizeRequest is a /tokenize body in any of the shapes real servers
// accept: vLLM's {"model", "prompt"} and {"model", "messages"} (with
// add_generation_prompt and add_special_tokens), llama.cpp's {"content"}
// (with add_special).
type tokenizeRequest struct {
	Model               string    `json:"model"`
	Prompt              *string   `json:"prompt"`
	Messages            []message `json:"messages"`
	AddGenerationPrompt *bool     `json:"add_generation_prompt"`
	AddSpecialTokens    *bool     `json:"add_special_tokens"`
	Content             *string   `json:"content"`
	AddSpecial          *bool     `json:"add_special"`
}

// serveTokenize answers POST /tokenize (and /v1/tokenize), counting tokens
// as chat requests do:
//
//   - {"prompt": TEXT}: the tokens of TEXT, answered vLLM style
//     {"count", "max_model_len", "tokens"};
//   - {"messages": [...]}: the tokens of the messages plus the chat
//     template's, which is the usage.prompt_tokens of a chat request with
//     the same messages, answered vLLM style;
//   - {"content": TEXT}: the tokens of TEXT, answered llama.cpp style
//     {"tokens": [...]}.
//
// add_generation_prompt, add_special_tokens and add_special are accepted
// and change nothing: the template's tokens are Config.TemplateTokens in
// every case. Dialect.TokenizeSkew is added to every count (never below
// 0). With Dialect.OmitTokenize the routes answer 404.
func (s *Server) serveTokenize(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Dialect.OmitTokenize {
		http.NotFound(w, r)
		return
	}
	var q tokenizeRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err == nil {
		err = json.Unmarshal(body, &q)
	}
	if err != nil {
		s.badRequest(w, chatAPI{}, invalid("", "invalid request body: "+err.Error()))
		return
	}
	if q.Model != "" && q.Model != s.cfg.Model {
		s.badRequest(w, chatAPI{}, &apiError{status: http.StatusNotFound, message: "The model `" + q.Model + "` does not exist.", typ: "invalid_request_error", param: "model", code: "model_not_found"})
		return
	}
	var text string
	var n int
	switch {
	case q.Prompt != nil:
		text = *q.Prompt
		n = s.cfg.countTokens(text)
	case len(q.Messages) > 0:
		p, err := s.parsePrompt(q.Messages, s.cfg.TemplateTokens, "messages")
		if err != nil {
			s.badRequest(w, chatAPI{}, invalid("messages", err.Error()))
			return
		}
		text, n = p.content, p.tokens
	case q.Content != nil:
		text = *q.Content
		n = s.cfg.countTokens(text)
	default:
		s.badRequest(w, chatAPI{}, invalid("prompt", "want prompt, messages or content"))
		return
	}
	n = max(0, n+s.cfg.Dialect.TokenizeSkew)
	ids, _ := json.Marshal(s.cfg.tokenIDs(text, n)[:n])
	var b []byte
	if q.Prompt == nil && len(q.Messages) == 0 {
		b = append(append([]byte(`{"tokens":`), ids...), "}\n"...)
	} else {
		b = []byte(`{"count":` + strconv.Itoa(n) + `,"max_model_len":` + strconv.Itoa(s.cfg.MaxModelLen) + `,"tokens":`)
		b = append(append(b, ids...), "}\n"...)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
