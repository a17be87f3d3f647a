package client

// The APIs a Target may speak, by the names Target.API and
// anvil_go.run.api give them (capacity/PROTOCOL.md#apis): chat
// completions (artifact.APIChat), the default, and these.
const (
	APIResponses   = "responses"
	APIMessages    = "messages"
	APICompletions = "completions"
	APIEmbeddings  = "embeddings"
)

// DialectOf is the dialect of the API named api: any name but the
// others' ("" and artifact.APIChat) is chat completions.
func DialectOf(api string) Dialect {
	switch api {
	case APIResponses:
		return Responses
	case APIMessages:
		return Messages
	case APICompletions:
		return Completions
	case APIEmbeddings:
		return Embeddings
	}
	return ChatCompletions
}

// WrittenFields are the body fields the dialect of api (DialectOf) writes
// from a Request, which Request.Extra may not set: each with what writes
// it, the Request fields ("Model", "MaxTokens", "Temperature", "TopP",
// "Thinking", "ReasoningEffort", "EncodingFormat"), "prompt" (the
// prompt or Request.Messages) or "stream" (the streaming client).
func WrittenFields(api string) map[string][]string {
	model, prompt, stream := []string{"Model"}, []string{"prompt"}, []string{"stream"}
	maxTokens, temperature, topP := []string{"MaxTokens"}, []string{"Temperature"}, []string{"TopP"}
	switch api {
	case APIResponses:
		return map[string][]string{"model": model, "input": prompt, "instructions": prompt, "stream": stream,
			"max_output_tokens": maxTokens, "temperature": temperature, "top_p": topP, "reasoning": {"Thinking", "ReasoningEffort"}}
	case APIMessages:
		return map[string][]string{"model": model, "messages": prompt, "system": prompt, "stream": stream,
			"max_tokens": maxTokens, "temperature": temperature, "top_p": topP, "thinking": {"Thinking"}}
	case APICompletions:
		return map[string][]string{"model": model, "prompt": prompt, "stream": stream, "stream_options": stream,
			"max_tokens": maxTokens, "temperature": temperature, "top_p": topP}
	case APIEmbeddings:
		return map[string][]string{"model": model, "input": prompt, "encoding_format": {"EncodingFormat"}}
	}
	return map[string][]string{"model": model, "messages": prompt, "stream": stream, "stream_options": stream,
		"max_tokens": maxTokens, "temperature": temperature, "top_p": topP,
		"chat_template_kwargs": {"Thinking"}, "reasoning_effort": {"ReasoningEffort"}}
}
