package client

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/chunk"
	"github.com/anvilbench/anvil/capacity/internal/chunk/legacychunk"
)

// The client's chunk decoding before the allocation-free decoder: a
// json.Decoder into this struct of package legacychunk's leaf types
// (verbatim but for their names). The fuzz target below holds the new
// decoding to every answer of this one.

type legacyChunk struct {
	Choices []struct {
		Delta struct {
			Content          legacychunk.String   `json:"content"`
			ReasoningContent legacychunk.NonEmpty `json:"reasoning_content"`
			Reasoning        legacychunk.NonEmpty `json:"reasoning"`
		} `json:"delta"`
		FinishReason legacychunk.String `json:"finish_reason"`
	} `json:"choices"`
	Usage *chunkUsage     `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// decoded is what the client keeps of one payload, in comparable form.
type decoded struct {
	Err       string
	Content   []string
	Reasoning []bool
	Finish    []string
	Usage     Usage
	Error     string
}

func decodeLegacyChunk(data []byte) decoded {
	var c legacyChunk
	if err := legacychunk.Decode(data, &c); err != nil {
		return decoded{Err: err.Error()}
	}
	var d decoded
	for _, ch := range c.Choices {
		d.Content = append(d.Content, string(ch.Delta.Content))
		d.Reasoning = append(d.Reasoning, bool(ch.Delta.ReasoningContent || ch.Delta.Reasoning))
		d.Finish = append(d.Finish, string(ch.FinishReason))
	}
	if u := c.Usage; u != nil {
		d.Usage = Usage{Present: true, Prompt: u.PromptTokens, Completion: u.CompletionTokens, Total: u.TotalTokens}
		if u.PromptTokensDetails != nil {
			d.Usage.Cached = u.PromptTokensDetails.CachedTokens
		}
	}
	if len(c.Error) > 0 && !bytes.Equal(c.Error, []byte("null")) {
		d.Error = string(c.Error)
	}
	return d
}

func decodeNewChunk(dec *chunk.Decoder, data []byte) decoded {
	c, err := decodeChunk(dec, data)
	if err != nil {
		return decoded{Err: err.Error()}
	}
	var d decoded
	for i := range c.Choices {
		ch := &c.Choices[i]
		d.Content = append(d.Content, string(ch.Content.Bytes))
		d.Reasoning = append(d.Reasoning, ch.HasReasoning())
		d.Finish = append(d.Finish, string(ch.FinishReason.Bytes))
	}
	if c.Usage.Present {
		d.Usage = usageOf(&c.Usage, data)
	}
	if c.HasError() {
		d.Error = string(c.Error)
	}
	return d
}

// cmpDecoded compares decodings. encoding/json's type errors name the Go
// types of the decoder ("... into Go struct field streamChunk.choices of
// type capacity.chunkChoice"), which differ between the two: only the part
// before " into Go " (the JSON value met) is compared.
var cmpDecoded = cmp.Options{cmp.AllowUnexported(Usage{}, Count{}), cmp.FilterPath(func(p cmp.Path) bool {
	return p.Last().String() == ".Err"
}, cmp.Transformer("jsonTypeError", func(s string) string {
	before, _, _ := strings.Cut(s, " into Go ")
	return before
}))}

// chunkSeeds are the event payloads of the repository's transcripts and
// the usage shapes the client's rules single out.
func chunkSeeds(t testing.TB) []string {
	seeds := []string{
		`{"choices":[{"delta":{"content":"a\u00e9\ud800"},"finish_reason":null}]}`,
		`{"choices":[],"usage":{"prompt_tokens":24.0,"completion_tokens":1e3,"total_tokens":"12"}}`,
		`{"choices":[],"usage":{"prompt_tokens":-1,"completion_tokens":9223372036854775808,"total_tokens":true,"prompt_tokens_details":{"cached_tokens":{"a":1}}}}`,
		`{"choices":[],"usage":{"prompt_tokens":null,"prompt_tokens_details":null}}`,
		`{"error":{"message":"boom"}}`, `{"error":null,"choices":null}`, `{"choices":[{"delta":{"reasoning":"x"}},{"delta":{"reasoning_content":""}}]}`,
		`{"Choices":[{"Delta":{"Content":"case"}}]}`, `{"choices":[1]}`, `{} {}`, `[]`, `{"usage":{"prompt_tokens":1,"prompt_tokens":2.5}}`,
	}
	files, err := filepath.Glob(filepath.Join(transcripts, "*.sse"))
	require.NoError(t, err)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, MaxEventSize)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.TrimSpace(d) != terminalData {
				seeds = append(seeds, d)
			}
		}
	}
	return seeds
}

// TestChunkDecodingAsBefore: every payload of the transcripts and the
// seeds decodes as the client decoded it before.
func TestChunkDecodingAsBefore(t *testing.T) {
	var dec chunk.Decoder
	seeds := chunkSeeds(t)
	require.Greater(t, len(seeds), 40)
	for _, s := range seeds {
		require.Empty(t, cmp.Diff(decodeLegacyChunk([]byte(s)), decodeNewChunk(&dec, []byte(s)), cmpDecoded), "%s", s)
	}
}

// FuzzChunkDecodingAsBefore: for any payload, the content, reasoning and
// finish reason of every choice, the usage counts as the usage check sees
// them (accepted value or the JSON text it quotes), the in-stream error
// and the error (its text) of a malformed payload are the former
// decoding's.
func FuzzChunkDecodingAsBefore(f *testing.F) {
	for _, s := range chunkSeeds(f) {
		f.Add([]byte(s))
	}
	var dec chunk.Decoder
	f.Fuzz(func(t *testing.T, data []byte) {
		want := decodeLegacyChunk(data)
		got := decodeNewChunk(&dec, data)
		require.Empty(t, cmp.Diff(want, got, cmpDecoded), "%q", data)
	})
}
