package responses

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
const primer = `{"type":"response.incomplete","delta":"d\n","response":{"status":"incomplete","usage":{"input_tokens":1,"output_tokens":"2",` +
	`"total_tokens":3,"input_tokens_details":{"cached_tokens":4},"output_tokens_details":{"reasoning_tokens":5}},` +
	`"incomplete_details":{"reason":"max_output_tokens"},"error":{"message":"m"}},"message":"x\t","code":"c","timings":{"prompt_n":1}}`

var seeds = []struct{ name, data string }{
	{"", primer},
	{"error", `{"type":"error","code":"server_error","message":"The server had an error","param":null,"sequence_number":3}`},
	{"response.failed", `{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"boom"}}}`},
	{"", `{"error":{"code":500,"message":"The model produced output that does not match the expected peg-native format","type":"server_error"}}`},
	{"response.output_text.delta", `{"type":"response.output_text.delta","delta":null}`},
	{"response.output_text.delta", `{"delta":"no type member"}`},
	{"", `{"type":"response.output_text.delta","Type":"folded"}`},
	{"", `{"response":{"usage":{"input_tokens":1}},"response":{"status":"merged"}}`},
	{"", `{"response":"not an object"}`},
	{"", `{"type":"a"} trailing`},
	{"", `null`},
}

func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add(s.name, []byte(s.data))
	}
	for _, ev := range capture.StreamEvents(f, capture.Dir("../../.."), "*responses*.sse") {
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
