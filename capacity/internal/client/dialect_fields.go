package client

import (
	"net/http"

	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
)

// What the dialects beside chat share: the fields every body writes from
// a Request, the layout of a body around its prompt, the credential in a
// bearer header, and the errors of data that is not one JSON object.

// sampledFields returns the fields every dialect writes from r, with room
// for n more: the model, the temperature (DefaultTemperature unless set),
// top_p when set, and the extra fields.
func sampledFields(r *Request, n int) map[string]any {
	f := make(map[string]any, n+len(r.Extra))
	for k, v := range r.Extra {
		f[k] = v
	}
	f["model"] = r.Model
	if r.Temperature != nil {
		f["temperature"] = *r.Temperature
	} else {
		f["temperature"] = defaultTemperatureJSON
	}
	if r.TopP != nil {
		f["top_p"] = *r.TopP
	}
	return f
}

// promptFirst lays out a body whose member key holds the prompt: with
// list nil, head is {"key": + open and tail is close + the other fields of
// f sorted by name, so that the caller writes the prompt between them;
// otherwise key holds list and the whole body, f sorted, is head.
func promptFirst(key, open, close string, f map[string]any, list any) (head, tail []byte, err error) {
	if list != nil {
		f[key] = list
		body, err := encodeJSON(f)
		return body, nil, err
	}
	fields, err := encodeJSON(f) // {"...":..., ...}
	if err != nil {
		return nil, nil, err
	}
	head = append([]byte(`{"`+key+`":`), open...)
	tail = append([]byte(close), ',')
	if len(fields) == 2 { // {}: nothing but the prompt
		return head, append(tail[:len(tail)-1], '}'), nil
	}
	return head, append(tail, fields[1:]...), nil
}

// bearerStream sets the headers of a request whose answer is an event
// stream and whose credential is a bearer token.
func bearerStream(h http.Header, key string) {
	h.Set("Accept", eventStreamType)
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
}

// pickError is the client's error of data a package jsonpick decoder did
// not accept: errNotObject, errTrailingData, or encoding/json's own.
func pickError(err error) error {
	switch err {
	case jsonpick.ErrNotObject:
		return errNotObject
	case jsonpick.ErrTrailingData:
		return errTrailingData
	}
	return err
}

// chatMessages is a conversation as the bodies write it: each message's
// content, then its role.
func chatMessages(ms []Message) []chatMessage {
	out := make([]chatMessage, len(ms))
	for i, m := range ms {
		out[i] = chatMessage{Content: m.Content, Role: m.Role}
	}
	return out
}

// namedDecode decodes one event of a named-event API (Responses,
// Messages) with d, its package's decoder. An event without data carries
// nothing, but an error event, the server's error without its words: the
// event is nil then, and so is the error. The error is that of data that
// is not one JSON object.
func namedDecode[E any, D interface {
	Decode(name, data []byte) (*E, error)
}](d D, name, data []byte, ev *Event) (*E, error) {
	if len(data) == 0 {
		if string(name) == sseErrorEvent {
			ev.Error, ev.ErrorKind = []byte{}, "error event"
		}
		return nil, nil
	}
	e, err := d.Decode(name, data)
	if err != nil {
		return nil, pickError(err)
	}
	return e, nil
}

// addDelta folds a text delta into ev: reasoning (whether it has text),
// or else its text, when it has some, as visible content.
func (ev *Event) addDelta(t jsonpick.Text, reasoning bool) {
	switch {
	case reasoning:
		ev.Reasoning = ev.Reasoning || t.NonEmpty()
	case t.NonEmpty():
		ev.Content = append(ev.Content, t.Bytes)
	}
}
