package completions

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/capture"
	"github.com/anvilbench/anvil/capacity/internal/jsonpick/pickref"
)

func check(t *testing.T, d *Decoder, data []byte) {
	t.Helper()
	want, wantErr := reference(data)
	got, err := d.Decode(data)
	pickref.Differential(t, fmt.Sprintf("%q", data), got, err, want, wantErr, cmpopts.EquateEmpty())
}

// primer is decoded between two decodings of a fuzz input, so that state
// left by one event cannot leak into the next.
const primer = `{"choices":[{"text":"a\n","finish_reason":"length"},null,{"text":"b"}],"usage":{"prompt_tokens":1,"completion_tokens":"2",` +
	`"total_tokens":3,"prompt_tokens_details":{"cached_tokens":4}},"error":{"m":1},"object":"text_completion","message":"m\t","timings":{"prompt_n":1}}`

var seeds = []string{
	primer,
	`{"id":"cmpl-364","object":"text_completion","created":1796160787,"choices":[{"text":" or","index":0,"finish_reason":null}],"model":"tiny:latest","system_fingerprint":"fp_ollama","usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`,
	`null`, ` null `, `nul`,
	`{"object":"error","message":"The model does not exist.","type":"NotFoundError","param":null,"code":404}`,
	`{"error":{"code":500,"message":"boom","type":"server_error"}}`,
	`{"choices":[{"Text":"folded"}]}`, `{"choices":[1]}`, `{"choices":[{"text":"a"}],"choices":[null]}`,
	`{"choices":[]} {"choices":[]}`, `[]`,
}

func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	for _, ev := range capture.StreamEvents(f, capture.Dir("../../.."), "*completions*.sse") {
		f.Add(ev.Data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewDecoder()
		check(t, d, data)
		_, err := d.Decode([]byte(primer))
		require.NoError(t, err)
		check(t, d, data)
		// Again: a repeat of the shape data kept, then after a null.
		check(t, d, data)
		check(t, d, []byte("null"))
		check(t, d, data)
	})
}

func TestSeeds(t *testing.T) {
	d := NewDecoder()
	for _, s := range seeds {
		check(t, d, []byte(s))
	}
}
