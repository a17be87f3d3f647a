package fakeserver

import (
	"encoding/json"
	"hash/fnv"
	"io"
	"net/http"
	"strconv"
)

// tokenizeRequest is vLLM's /tokenize body: a prompt or chat messages.
type tokenizeRequest struct {
	Model               string    `json:"model"`
	Prompt              *string   `json:"prompt"`
	Messages            []message `json:"messages"`
	AddGenerationPrompt *bool     `json:"add_generation_prompt"`
}

// tokenIDs approximates token ids: one id per CharsPerToken-sized piece of
// text, hashed into the first 151,643 ids of a qwen-sized vocabulary.
// Template tokens come first, as the ids 151644 and 151645 alternating
// (qwen's <|im_start|> and <|im_end|>).
func tokenIDs(text string, cpt float64, n int) []int {
	ids := make([]int, 0, n)
	for i := range n - countTokens(text, cpt) {
		ids = append(ids, 151644+i%2)
	}
	runes := []rune(text)
	h := fnv.New32a()
	for i := range countTokens(text, cpt) {
		lo, hi := int(float64(i)*cpt), int(float64(i+1)*cpt)
		lo, hi = min(lo, len(runes)), min(hi, len(runes))
		h.Reset()
		_, _ = h.Write([]byte(string(runes[lo:hi])))
		ids = append(ids, int(h.Sum32()%151643))
	}
	return ids
}

// serveTokenize answers vLLM-style POST /tokenize with
// {"count", "max_model_len", "tokens"}, counting tokens as chat requests do
// (template tokens included for messages).
func (s *Server) serveTokenize(w http.ResponseWriter, r *http.Request) {
	var q tokenizeRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err == nil {
		err = json.Unmarshal(body, &q)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid request body: "+err.Error(), "invalid_request_error", "", "")
		return
	}
	if q.Model != "" && q.Model != s.cfg.Model {
		writeError(w, http.StatusNotFound, "The model `"+q.Model+"` does not exist.", "invalid_request_error", "model", "model_not_found")
		return
	}
	var text string
	var n int
	switch {
	case q.Prompt != nil:
		text = *q.Prompt
		n = countTokens(text, s.cfg.CharsPerToken)
	case len(q.Messages) > 0:
		p, err := s.parsePrompt(q.Messages, s.cfg.TemplateTokens)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error(), "invalid_request_error", "messages", "")
			return
		}
		text, n = p.content, p.tokens
	default:
		writeError(w, http.StatusBadRequest, "want prompt or messages", "invalid_request_error", "prompt", "")
		return
	}
	b := []byte(`{"count":` + strconv.Itoa(n) + `,"max_model_len":` + strconv.Itoa(s.cfg.MaxModelLen) + `,"tokens":`)
	ids, _ := json.Marshal(tokenIDs(text, s.cfg.CharsPerToken, n))
	b = append(append(b, ids...), "}\n"...)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
