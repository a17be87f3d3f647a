package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The APIs the suite speaks: capacity's Target.API
// (capacity/PROTOCOL.md#apis), chat completions when empty.
const (
	apiChat        = "chat"
	apiResponses   = "responses"
	apiMessages    = "messages"
	apiCompletions = "completions"
	apiEmbeddings  = "embeddings"
)

// anthropicVersion is the anthropic-version header of the Messages
// requests, as capacity sends it.
const anthropicVersion = "2023-06-01"

// A wire is what the suite sends and reads of one API: the route, the
// body of one user message, the headers, how a stream ends and where its
// parts are, and how the API writes an error. The checks are the same for
// every API; what they read comes from the API's wire.
type wire struct {
	api  string // Target.API
	path string // below the base URL
	// promptKey and prompt write the one user message of a request.
	promptKey string
	prompt    func(user string) any
	// stream are the fields of a request whose answer streams and
	// reports usage.
	stream map[string]any
	// limits are the token-limit fields, the first the one every request
	// sets; max_tokens tries each.
	limits []string
	// terminal names the event that ends a stream.
	terminal string
	// stops are the stop reasons the API defines, cutStop the one of an
	// answer the limit cut, stopWhere where the stop reason is.
	stops     []string
	cutStop   string
	stopWhere string
	// usageWhere, cachedWhere, contentWhere and reasoningWhere are where
	// the API reports usage, cached tokens, visible text and reasoning
	// ("" when it has no reasoning channel).
	usageWhere, cachedWhere, contentWhere, reasoningWhere string
	// decode reads one event of a stream into s (the suite's own
	// encoding/json reading, not the engine's decoders).
	decode func(s *streamSeen, name string, data []byte)
	// errorShape says how an answer to a bad request falls short of the
	// API's error ("" when it does not).
	errorShape func(h *httpSeen) string
	// errorForm names the API's error form for the reasons.
	errorForm string
	// malformed is the body of a request whose prompt is malformed, and
	// what is wrong with it.
	malformed, malformedName string
}

// wireOf is the wire of api ("" is chat); false for an API it does not
// know.
func wireOf(api string) (*wire, bool) {
	switch api {
	case "", apiChat:
		return &chatWire, true
	case apiResponses:
		return &responsesWire, true
	case apiMessages:
		return &messagesWire, true
	case apiCompletions:
		return &completionsWire, true
	case apiEmbeddings:
		return &embeddingsWire, true
	}
	return nil, false
}

// oneMessage is a messages array of one user message.
func oneMessage(user string) any { return []map[string]string{{"role": "user", "content": user}} }

func bare(user string) any { return user }

var chatWire = wire{
	api: apiChat, path: "/chat/completions", promptKey: "messages", prompt: oneMessage,
	stream: map[string]any{"stream": true, "stream_options": map[string]any{"include_usage": true}},
	limits: []string{"max_tokens", "max_completion_tokens"}, terminal: "data: [DONE]",
	stops: finishReasons[:], cutStop: "length", stopWhere: "the finish_reason of the last chunk with choices",
	usageWhere: "usage", cachedWhere: "usage.prompt_tokens_details.cached_tokens",
	contentWhere: "delta.content", reasoningWhere: "reasoning_content or reasoning",
	decode: decodeChat, errorShape: openAIError, errorForm: `an OpenAI {"error": {...}} body`,
	malformed: `"messages": "not an array"`, malformedName: "malformed messages",
}

var completionsWire = wire{
	api: apiCompletions, path: "/completions", promptKey: "prompt", prompt: bare,
	stream: map[string]any{"stream": true, "stream_options": map[string]any{"include_usage": true}},
	limits: []string{"max_tokens"}, terminal: "data: [DONE]",
	stops: []string{"stop", "length", "content_filter"}, cutStop: "length", stopWhere: "the finish_reason of the last chunk with choices",
	usageWhere: "usage", cachedWhere: "usage.prompt_tokens_details.cached_tokens", contentWhere: "choices[].text",
	decode: decodeChat, errorShape: openAIError, errorForm: `an OpenAI {"error": {...}} body`,
	malformed: `"prompt": {"not": "a prompt"}`, malformedName: "malformed prompt",
}

var responsesWire = wire{
	api: apiResponses, path: "/responses", promptKey: "input", prompt: bare,
	stream: map[string]any{"stream": true}, limits: []string{"max_output_tokens"},
	terminal: "response.completed (or response.incomplete)",
	stops:    []string{"completed", "max_output_tokens", "content_filter"}, cutStop: "max_output_tokens",
	stopWhere:  "the terminal response's status, its incomplete_details.reason when incomplete",
	usageWhere: "response.usage", cachedWhere: "response.usage.input_tokens_details.cached_tokens",
	contentWhere: "response.output_text.delta", reasoningWhere: "response.reasoning_text.delta or response.reasoning_summary_text.delta",
	decode: decodeResponses, errorShape: openAIError, errorForm: `an OpenAI {"error": {...}} body`,
	malformed: `"input": {"not": "an input"}`, malformedName: "malformed input",
}

var messagesWire = wire{
	api: apiMessages, path: "/messages", promptKey: "messages", prompt: oneMessage,
	stream: map[string]any{"stream": true}, limits: []string{"max_tokens"}, terminal: "message_stop",
	stops:   []string{"end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal"},
	cutStop: "max_tokens", stopWhere: "message_delta's delta.stop_reason",
	usageWhere: "message_start's message.usage and message_delta's usage", cachedWhere: "usage.cache_read_input_tokens",
	contentWhere: "text_delta", reasoningWhere: "thinking_delta",
	decode: decodeMessages, errorShape: anthropicError, errorForm: `an Anthropic {"type": "error", "error": {...}} body`,
	malformed: `"messages": "not an array"`, malformedName: "malformed messages",
}

var embeddingsWire = wire{
	api: apiEmbeddings, path: "/embeddings", promptKey: "input", prompt: bare,
	usageWhere: "usage", errorShape: openAIError, errorForm: `an OpenAI {"error": {...}} body`,
	malformed: `"input": {"not": "an input"}`, malformedName: "malformed input",
}

// header sets the API's own headers of a request: Messages' credential
// in x-api-key (instead of a bearer token) and its anthropic-version.
func (w *wire) header(h http.Header, key string) {
	if w.api != apiMessages {
		return
	}
	h.Set("Anthropic-Version", anthropicVersion)
	if key != "" {
		h.Del("Authorization")
		h.Set("X-Api-Key", key)
	}
}

// streams reports whether the API's answers stream.
func (w *wire) streams() bool { return w.decode != nil }

// decodeChat reads one event of a chat or completions stream.
func decodeChat(s *streamSeen, _ string, data []byte) {
	if strings.TrimSpace(string(data)) == sseDone {
		s.done, s.doneMarker = true, true
		return
	}
	var c wireChunk
	if err := json.Unmarshal(data, &c); err != nil {
		s.badJSON = append(s.badJSON, excerpt(s.scrub, data))
		return
	}
	if c.Object != "" && !contains(s.objects, c.Object) {
		s.objects = append(s.objects, c.Object)
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		s.errObjects = append(s.errObjects, excerpt(s.scrub, c.Error))
	}
	if u := parseUsage(c.Usage); u != nil {
		s.usage, s.usageWithChoices = u, len(c.Choices) > 0
		s.usageObjects++
	}
	if len(c.Choices) == 0 {
		return
	}
	s.choiceChunks++
	s.stopReason = nil
	for _, ch := range c.Choices {
		d := ch.Delta
		if d.Content != nil && *d.Content != "" {
			s.contentChunks++
			s.content.add(*d.Content)
		}
		if ch.Text != nil && *ch.Text != "" {
			s.contentChunks++
			s.content.add(*ch.Text)
		}
		for _, r := range []struct {
			field string
			text  *string
		}{{"reasoning_content", d.ReasoningContent}, {"reasoning", d.Reasoning}} {
			if r.text != nil && *r.text != "" {
				s.reasoningChunks++
				s.reasoningField = "delta." + r.field
				s.reasoning.add(*r.text)
			}
		}
		if ch.FinishReason != nil {
			f := *ch.FinishReason
			s.stopReason = &f
			s.finishes = append(s.finishes, f)
		}
	}
}

// namedType checks that an event's SSE name, when it has one, is the
// type its data says: the two places a client may dispatch on.
func (s *streamSeen) namedType(name, typ string) {
	if name != "" && typ != "" && name != typ && len(s.mismatched) < 4 {
		s.mismatched = append(s.mismatched, fmt.Sprintf("event: %s with \"type\": %q", name, typ))
	}
}

// responsesEvent is the part of a Responses event the checks read.
type responsesEvent struct {
	Type     string  `json:"type"`
	Delta    *string `json:"delta"`
	Response *struct {
		Status            *string         `json:"status"`
		Usage             json.RawMessage `json:"usage"`
		Error             json.RawMessage `json:"error"`
		IncompleteDetails *struct {
			Reason *string `json:"reason"`
		} `json:"incomplete_details"`
	} `json:"response"`
	Message *string         `json:"message"`
	Error   json.RawMessage `json:"error"`
}

// decodeResponses reads one event of a Responses stream: the text and
// reasoning deltas, the terminal response's status and usage, the errors
// (an error event, response.failed, or a data-only {"error": ...}).
func decodeResponses(s *streamSeen, name string, data []byte) {
	var e responsesEvent
	if err := json.Unmarshal(data, &e); err != nil {
		s.badJSON = append(s.badJSON, excerpt(s.scrub, data))
		return
	}
	s.namedType(name, e.Type)
	if len(e.Error) > 0 && string(e.Error) != "null" {
		s.errObjects = append(s.errObjects, excerpt(s.scrub, e.Error))
	}
	switch e.Type {
	case "response.output_text.delta", "response.refusal.delta":
		if e.Delta != nil && *e.Delta != "" {
			s.contentChunks++
			s.content.add(*e.Delta)
		}
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		if e.Delta != nil && *e.Delta != "" {
			s.reasoningChunks++
			s.reasoningField = e.Type
			s.reasoning.add(*e.Delta)
		}
	case "error":
		msg := string(data)
		if e.Message != nil {
			msg = *e.Message
		}
		s.errObjects = append(s.errObjects, excerpt(s.scrub, []byte(msg)))
	case "response.completed", "response.incomplete", "response.failed":
		s.done = true
		r := e.Response
		if r == nil {
			s.badJSON = append(s.badJSON, e.Type+" without a response: "+excerpt(s.scrub, data))
			return
		}
		if len(r.Error) > 0 && string(r.Error) != "null" {
			s.errObjects = append(s.errObjects, excerpt(s.scrub, r.Error))
		}
		s.stopReason = nil
		if r.Status != nil {
			stop := *r.Status
			if stop == "incomplete" && r.IncompleteDetails != nil && r.IncompleteDetails.Reason != nil {
				stop = *r.IncompleteDetails.Reason
			}
			s.stopReason = &stop
			s.finishes = append(s.finishes, stop)
		}
		if u := parseResponsesUsage(r.Usage); u != nil {
			s.usage = u
			s.usageObjects++
		}
	}
}

// parseResponsesUsage reads a response's usage object (nil: absent or
// null): input_tokens, output_tokens, total_tokens,
// input_tokens_details.cached_tokens and
// output_tokens_details.reasoning_tokens.
func parseResponsesUsage(raw json.RawMessage) *usageSeen {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var u struct {
		Input   json.RawMessage `json:"input_tokens"`
		Output  json.RawMessage `json:"output_tokens"`
		Total   json.RawMessage `json:"total_tokens"`
		Details *struct {
			Cached json.RawMessage `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutDetails *struct {
			Reasoning json.RawMessage `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
	}
	if json.Unmarshal(raw, &u) != nil {
		return &usageSeen{raw: string(raw)}
	}
	s := &usageSeen{prompt: jsonInt(u.Input), completion: jsonInt(u.Output), total: jsonInt(u.Total), raw: string(raw)}
	if u.Details != nil {
		s.hasDetails, s.cached = true, jsonInt(u.Details.Cached)
	}
	if u.OutDetails != nil {
		s.reasoning = jsonInt(u.OutDetails.Reasoning)
	}
	return s
}

// messagesEvent is the part of a Messages event the checks read.
type messagesEvent struct {
	Type    string `json:"type"`
	Message *struct {
		Usage json.RawMessage `json:"usage"`
	} `json:"message"`
	ContentBlock *struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	} `json:"content_block"`
	Delta *struct {
		Type       string  `json:"type"`
		Text       *string `json:"text"`
		Thinking   *string `json:"thinking"`
		StopReason *string `json:"stop_reason"`
	} `json:"delta"`
	Usage json.RawMessage `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// messagesCounts are the counts of a Messages usage object.
type messagesCounts struct {
	Input       json.RawMessage `json:"input_tokens"`
	Output      json.RawMessage `json:"output_tokens"`
	CacheRead   json.RawMessage `json:"cache_read_input_tokens"`
	CacheCreate json.RawMessage `json:"cache_creation_input_tokens"`
}

// decodeMessages reads one event of a Messages stream: the text and
// thinking deltas, message_start's and message_delta's usage (each count
// the last one reported), the stop reason, message_stop, the error events.
func decodeMessages(s *streamSeen, name string, data []byte) {
	if name == "error" {
		// Whatever its data's shape: llama.cpp b10573 writes an OpenAI
		// error ({"code", "message", "type": "server_error"}) under the
		// name Anthropic's errors have.
		var e struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(data, &e) == nil && e.Type != "error" {
			s.errObjects = append(s.errObjects, excerpt(s.scrub, data))
			return
		}
	}
	var e messagesEvent
	if err := json.Unmarshal(data, &e); err != nil {
		s.badJSON = append(s.badJSON, excerpt(s.scrub, data))
		return
	}
	s.namedType(name, e.Type)
	switch e.Type {
	case "content_block_start":
		if b := e.ContentBlock; b != nil && b.Text != nil && *b.Text != "" && b.Type == "text" {
			s.contentChunks++
			s.content.add(*b.Text)
		}
	case "content_block_delta":
		d := e.Delta
		switch {
		case d == nil:
		case d.Type == "text_delta" && d.Text != nil && *d.Text != "":
			s.contentChunks++
			s.content.add(*d.Text)
		case d.Type == "thinking_delta" && d.Thinking != nil && *d.Thinking != "":
			s.reasoningChunks++
			s.reasoningField = "thinking_delta"
			s.reasoning.add(*d.Thinking)
		}
	case "message_start":
		if e.Message != nil {
			s.messagesUsage(e.Message.Usage, true)
		}
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != nil {
			stop := *e.Delta.StopReason
			s.stopReason = &stop
			s.finishes = append(s.finishes, stop)
		}
		s.messagesUsage(e.Usage, false)
	case "message_stop":
		s.done = true
	case "error":
		s.errObjects = append(s.errObjects, excerpt(s.scrub, cmpRaw(e.Error, data)))
	}
}

// cmpRaw is raw, or whole when raw is absent or null.
func cmpRaw(raw json.RawMessage, whole []byte) []byte {
	if len(raw) == 0 || string(raw) == "null" {
		return whole
	}
	return raw
}

// messagesUsage folds a Messages usage object into s.usage: each count is
// the last one reported; prompt tokens are the input tokens plus those
// read from and written to the cache, cached those read. The input count
// of message_start is kept apart, to compare with a later one.
func (s *streamSeen) messagesUsage(raw json.RawMessage, start bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return
	}
	var c messagesCounts
	if json.Unmarshal(raw, &c) != nil {
		s.usage = &usageSeen{raw: string(raw)}
		return
	}
	if s.usage == nil {
		s.usage = &usageSeen{}
	}
	s.usageObjects++
	u := s.usage
	if s.usageRaw != "" {
		s.usageRaw += " then "
	}
	s.usageRaw += string(raw)
	u.raw = s.usageRaw
	set := func(dst **int, raw json.RawMessage) {
		if len(raw) > 0 {
			*dst = jsonInt(raw)
		}
	}
	set(&u.input, c.Input)
	set(&u.completion, c.Output)
	set(&u.cacheCreate, c.CacheCreate)
	if len(c.CacheRead) > 0 {
		u.hasDetails = true
		u.cached = jsonInt(c.CacheRead)
	}
	if start {
		s.startInput = jsonInt(c.Input)
	} else if len(c.Input) > 0 {
		s.deltaInput = jsonInt(c.Input)
	}
	u.prompt = nil
	if u.input != nil {
		n := *u.input
		for _, c := range []*int{u.cached, u.cacheCreate} {
			if c != nil {
				n += *c
			}
		}
		u.prompt = &n
	}
}

// anthropicError says how an answer to a bad request falls short of an
// Anthropic error: a 4xx, a JSON Content-Type and a body {"type": "error",
// "error": {"type": "...", "message": "..."}}. Empty when it does not.
func anthropicError(h *httpSeen) string {
	problems := errorStatus(h)
	var body struct {
		Type  *string `json:"type"`
		Error *struct {
			Type    *string `json:"type"`
			Message *string `json:"message"`
		} `json:"error"`
	}
	switch {
	case json.Unmarshal(h.body, &body) != nil:
		problems = append(problems, "the body is not JSON")
	case body.Error == nil:
		problems = append(problems, `no "error" object`)
	case body.Type == nil || *body.Type != "error":
		problems = append(problems, `no "type": "error"`)
	case body.Error.Type == nil:
		problems = append(problems, `"error" has no "type" string`)
	case body.Error.Message == nil:
		problems = append(problems, `"error" has no "message" string`)
	}
	return strings.Join(problems, ", ")
}
