package client

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// bodyFields are the top-level fields d writes for r, its prompt (when r
// has no Messages) written between head and tail.
func bodyFields(t *testing.T, d Dialect, r Request) []string {
	t.Helper()
	head, tail, err := d.Encode(&r)
	require.NoError(t, err)
	body := head
	if r.Messages == nil {
		body = append(append(slices.Clone(head), `"the prompt"`...), tail...)
	}
	var fields map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &fields), "%s", body)
	return slices.Collect(maps.Keys(fields))
}

// TestWrittenFields: WrittenFields of every API is exactly the fields its
// dialect writes from a Request with every field set (the thinking
// switch and the effort one at a time, the prompt alone and as a
// conversation with a system message), but for the fields it reserves
// for the prompt without writing them today.
func TestWrittenFields(t *testing.T) {
	unwritten := map[string][]string{APIResponses: {"instructions"}}
	for _, api := range artifact.APIs() {
		t.Run(api, func(t *testing.T) {
			base := Request{Model: "m", MaxTokens: 8, Temperature: new(0.5), TopP: new(0.9)}
			variants := []Request{base, base, base, base}
			variants[0].Thinking = new(true)
			variants[1].ReasoningEffort = "low"
			variants[2].Messages = []Message{{Role: "system", Content: "s"}, {Role: "user", Content: "u"}}
			if api == APIEmbeddings {
				variants = []Request{{Model: "m", EncodingFormat: "base64"}}
			}
			written := map[string]bool{}
			for _, r := range variants {
				for _, f := range bodyFields(t, DialectOf(api), r) {
					written[f] = true
				}
			}
			for _, f := range unwritten[api] {
				written[f] = true
			}
			require.Equal(t, slices.Sorted(maps.Keys(written)), slices.Sorted(maps.Keys(WrittenFields(api))))
		})
	}
}
