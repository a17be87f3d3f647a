package client

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/anvilbench/anvil/capacity/internal/embeddings"
	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
)

// Embeddings is the dialect of the embeddings API
// (capacity/PROTOCOL.md#api-embeddings): POST {BaseURL}/embeddings with the
// prompt as the input (a conversation's contents as a batch of inputs)
// and "encoding_format"; an answer that does not stream, one JSON body,
// checked by package embeddings.
var Embeddings Dialect = embeddingsDialect{}

type embeddingsDialect struct{}

// Path implements Dialect.
func (embeddingsDialect) Path() string { return "/embeddings" }

// Header implements Dialect: a JSON answer, a bearer token.
func (embeddingsDialect) Header(h http.Header, key string) {
	h.Set("Accept", jsonType)
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
}

// Streams implements Dialect: an embeddings answer is one body.
func (embeddingsDialect) Streams() bool { return false }

// generatesNothing marks the dialect as one whose answers generate no
// token (Client.Evaluate gives their rows no token times).
func (embeddingsDialect) generatesNothing() {}

// generatesNothing reports whether d's answers generate no token: an
// embeddings answer is timed by its latency alone.
func generatesNothing(d Dialect) bool {
	_, ok := d.(interface{ generatesNothing() })
	return ok
}

// encodingFormat is a request's encoding_format: "float" unless
// Request.EncodingFormat says "base64".
func encodingFormat(r *Request) string {
	if r.EncodingFormat == "" {
		return "float"
	}
	return r.EncodingFormat
}

// Encode implements Dialect: {"input":PROMPT, then encoding_format, model
// and the extra fields sorted by name; an explicit conversation's contents
// are a batch ("input": [...]). No token limit, sampling or thinking
// control: embeddings generate nothing.
func (embeddingsDialect) Encode(r *Request) (head, tail []byte, err error) {
	f := make(map[string]any, 2+len(r.Extra))
	for k, v := range r.Extra {
		f[k] = v
	}
	f["model"] = r.Model
	f["encoding_format"] = encodingFormat(r)
	var list any
	if r.Messages != nil {
		inputs := make([]string, len(r.Messages))
		for i, m := range r.Messages {
			inputs[i] = m.Content
		}
		list = inputs
	}
	return promptFirst("input", "", "", f, list)
}

// NewDecoder implements Dialect.
func (embeddingsDialect) NewDecoder() Decoder { return &embeddingsDecoder{c: embeddings.NewChecker()} }

// embeddingsDecoder checks the one body of an embeddings answer.
type embeddingsDecoder struct {
	c *embeddings.Checker
}

// Reset implements Decoder.
func (*embeddingsDecoder) Reset() {}

// Decode implements Decoder: a valid answer's vectors, dimension and usage
// (prompt_tokens, total_tokens), and its end; an answer whose vectors are
// not what was asked is Invalid (its reason the error_type), one with an
// "error" member the server's error. Vectors come in either encoding
// (servers that ignore encoding_format answer floats).
func (d *embeddingsDecoder) Decode(_, data []byte, ev *Event) error {
	r, err := d.c.Check(data, embeddings.Want{})
	var inv *embeddings.InvalidError
	var srv *embeddings.ServerError
	switch {
	case errors.As(err, &inv):
		ev.Invalid, ev.InvalidType = inv.Error(), vectorErrorType(inv.Reason)
		return nil
	case errors.As(err, &srv):
		ev.Error, ev.ErrorKind = []byte(strings.TrimPrefix(srv.Error(), "embeddings answer: error: ")), "error object"
		return nil
	case err != nil:
		return pickError(err)
	}
	ev.Done = true
	ev.Vectors, ev.Dimension = r.Vectors, r.Dimension
	if u := r.Usage; u.Present {
		ev.Usage = embeddingsUsage(u.Prompt, u.Total, data)
	}
	return nil
}

// embeddingsUsage is the Usage of an embeddings answer's prompt_tokens
// and total_tokens; a count that is not a plain integer is read again from
// data with encoding/json, with Count's rules.
func embeddingsUsage(prompt, total jsonpick.Int, data []byte) Usage {
	if plainCount(prompt) && plainCount(total) {
		return Usage{Present: true, Prompt: fastCount(prompt), Total: fastCount(total)}
	}
	var slow struct {
		Usage *struct {
			Prompt Count `json:"prompt_tokens"`
			Total  Count `json:"total_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(data, &slow) != nil || slow.Usage == nil {
		return Usage{Present: true} // unreachable: the checker read the body
	}
	return Usage{Present: true, Prompt: slow.Usage.Prompt, Total: slow.Usage.Total}
}

// vectorErrorType is the error_type of an embeddings answer that fails
// for reason r.
func vectorErrorType(r embeddings.Reason) string {
	switch r {
	case embeddings.Count:
		return ErrorTypeVectorCount
	case embeddings.Dimension:
		return ErrorTypeVectorDimension
	case embeddings.Index:
		return ErrorTypeVectorIndex
	}
	return ErrorTypeVectorValue
}
