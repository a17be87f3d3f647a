package messages

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/capture"
	"github.com/anvilbench/anvil/capacity/internal/jsonpick/pickref"
)

// check decodes one event both ways and compares.
func check(t *testing.T, d *Decoder, name string, data []byte) {
	t.Helper()
	want, wantErr := reference(name, data)
	got, err := d.Decode([]byte(name), data)
	pickref.Differential(t, fmt.Sprintf("%q, %q", name, data), got, err, want, wantErr)
}

// primer is decoded between two decodings of a fuzz input, so that state
// left by one event cannot leak into the next.
const primer = `{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":1,"output_tokens":0,"cache_read_input_tokens":"2","cache_creation_input_tokens":3}},` +
	`"content_block":{"type":"thinking","text":"t\n","thinking":"h\t"},"delta":{"type":"text_delta","text":"x\"","thinking":"y","stop_reason":"end_turn"},` +
	`"usage":{"output_tokens":9},"error":{"type":"e","message":"m"}}`

var seeds = []struct{ name, data string }{
	{"", primer},
	{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me"}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":""}}`},
	{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"input_tokens":21,"output_tokens":8}}`},
	{"ping", `{"type": "ping"}`},
	{"error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
	{"error", `{"code":500,"message":"The model produced output that \"does not\" match","type":"server_error"}`},
	{"", `{"message":"a string","message":{"usage":{"input_tokens":1}}}`},
	{"", `{"message":{"usage":{"input_tokens":1},"usage":null}}`},
	{"", `{"message":{"Usage":{"input_tokens":1}}}`},
	{"", `{"delta":"not an object"}`},
	{"", `{"type":"a"} trailing`},
	{"", `null`},
}

func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add(s.name, []byte(s.data))
	}
	for _, ev := range capture.StreamEvents(f, capture.Dir("../../.."), "*-messages-*.sse") {
		f.Add(string(ev.Name), ev.Data)
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		d := NewDecoder()
		check(t, d, name, data)
		_, err := d.Decode(nil, []byte(primer))
		require.NoError(t, err)
		check(t, d, name, data)
		// Again, and again under another name: a repeat of the shape data kept.
		check(t, d, name, data)
		check(t, d, "error", data)
	})
}

func TestSeeds(t *testing.T) {
	d := NewDecoder()
	for _, s := range seeds {
		check(t, d, s.name, []byte(s.data))
	}
}
