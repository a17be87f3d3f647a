package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/sse"
)

// capturesDir holds the repository's real captures of llama.cpp b10573
// and Ollama 0.17.4 (provenance in its README).
const capturesDir = "../../testdata/transcripts"

// seenOfAPI is what the suite reads of a captured answer of api.
type seenOfAPI struct {
	Done                   bool
	Stop                   string
	Prompt, Out, Cached    string
	Content, Reasoning     int
	Errors, BadJSON, Names int
}

func summarize(s *streamSeen) seenOfAPI {
	g := seenOfAPI{Done: s.done, Stop: "none", Prompt: "absent", Out: "absent", Cached: "absent",
		Content: s.contentChunks, Reasoning: s.reasoningChunks, Errors: len(s.errObjects), BadJSON: len(s.badJSON), Names: len(s.mismatched)}
	if s.stopReason != nil {
		g.Stop = *s.stopReason
	}
	if u := s.usage; u != nil {
		g.Prompt, g.Out, g.Cached = fmtInt(u.prompt), fmtInt(u.completion), fmtInt(u.cached)
	}
	return g
}

// TestAPIStreamsOnCaptures: what the suite's own decoder of each API
// reads of every real streamed capture of Responses, Messages and
// completions: the terminal event, the stop reason, the usage (Messages'
// prompt tokens the input plus the cache's), the content and reasoning
// chunks, the in-stream errors (llama.cpp's error events for output its
// grammar refused, Messages' under an OpenAI-shaped body).
func TestAPIStreamsOnCaptures(t *testing.T) {
	for _, tc := range []struct {
		file, api string
		want      seenOfAPI
	}{
		{"llamacpp-b10573-bytebias-completions-stream.sse", apiCompletions, seenOfAPI{Stop: "none", Prompt: "absent", Out: "absent", Cached: "absent", Errors: 1}},
		{"llamacpp-b10573-bytebias-messages-stream.sse", apiMessages, seenOfAPI{Stop: "none", Prompt: "absent", Out: "absent", Cached: "absent", Errors: 1}},
		{"llamacpp-b10573-bytebias-responses-stream.sse", apiResponses, seenOfAPI{Stop: "none", Prompt: "absent", Out: "absent", Cached: "absent", Errors: 1}},
		{"llamacpp-b10573-completions-stream-nousage.sse", apiCompletions, seenOfAPI{Done: true, Stop: "length", Prompt: "21", Out: "4", Cached: "20", Content: 4}},
		{"llamacpp-b10573-completions-stream-usage.sse", apiCompletions, seenOfAPI{Done: true, Stop: "length", Prompt: "21", Out: "8", Cached: "0", Content: 8}},
		{"llamacpp-b10573-split-utf8-completions-stream.sse", apiCompletions, seenOfAPI{Done: true, Stop: "length", Prompt: "21", Out: "6", Cached: "0", Content: 5}},
		{"llamacpp-b10573-messages-stream.sse", apiMessages, seenOfAPI{Done: true, Stop: "max_tokens", Prompt: "71", Out: "8", Cached: "70", Content: 8}},
		{"llamacpp-b10573-messages-stream-system.sse", apiMessages, seenOfAPI{Done: true, Stop: "max_tokens", Prompt: "112", Out: "4", Cached: "14", Content: 4}},
		// A capture without message_start: no input count to read.
		{"llamacpp-b10573-split-utf8-messages-stream.sse", apiMessages, seenOfAPI{Done: true, Stop: "max_tokens", Prompt: "absent", Out: "6", Cached: "absent", Content: 5}},
		{"llamacpp-b10573-think-messages-stream.sse", apiMessages, seenOfAPI{Done: true, Stop: "max_tokens", Prompt: "79", Out: "6", Cached: "78", Reasoning: 6}},
		// llama.cpp's Responses end "completed" whatever stopped them.
		{"llamacpp-b10573-responses-stream-string.sse", apiResponses, seenOfAPI{Done: true, Stop: "completed", Prompt: "71", Out: "8", Cached: "0", Content: 8}},
		{"llamacpp-b10573-responses-stream-sse-ping.sse", apiResponses, seenOfAPI{Done: true, Stop: "completed", Prompt: "7301", Out: "2", Cached: "0", Content: 2}},
		{"llamacpp-b10573-split-utf8-responses-stream.sse", apiResponses, seenOfAPI{Done: true, Stop: "completed", Prompt: "71", Out: "6", Cached: "70", Content: 5}},
		{"llamacpp-b10573-think-responses-stream.sse", apiResponses, seenOfAPI{Done: true, Stop: "completed", Prompt: "79", Out: "6", Cached: "78", Reasoning: 6}},
		{"ollama-0.17.4-completions-stream-nousage.sse", apiCompletions, seenOfAPI{Done: true, Stop: "length", Prompt: "absent", Out: "absent", Cached: "absent", Content: 4}},
		{"ollama-0.17.4-completions-stream-usage.sse", apiCompletions, seenOfAPI{Done: true, Stop: "length", Prompt: "21", Out: "8", Cached: "absent", Content: 8}},
		{"ollama-0.17.4-messages-stream.sse", apiMessages, seenOfAPI{Done: true, Stop: "max_tokens", Prompt: "21", Out: "8", Cached: "absent", Content: 8}},
		{"ollama-0.17.4-messages-stream-system.sse", apiMessages, seenOfAPI{Done: true, Stop: "max_tokens", Prompt: "19", Out: "4", Cached: "absent", Content: 4}},
		{"ollama-0.17.4-responses-stream-string.sse", apiResponses, seenOfAPI{Done: true, Stop: "completed", Prompt: "21", Out: "8", Cached: "0", Content: 8}},
		{"ollama-0.17.4-responses-stream-messages.sse", apiResponses, seenOfAPI{Done: true, Stop: "completed", Prompt: "21", Out: "4", Cached: "0", Content: 4}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(capturesDir, tc.file))
			require.NoError(t, err)
			w, ok := wireOf(tc.api)
			require.True(t, ok)
			s := &streamSeen{status: 200, decode: w.decode}
			s.read(sse.NewReader(strings.NewReader(string(b)), capacity.MaxEventSize))
			if diff := cmp.Diff(tc.want, summarize(s)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.file, diff)
			}
		})
	}
}

// TestEmbeddingsOnCaptures: the suite's reading of real embeddings
// answers (floats and base64): the vectors, their dimension, the usage.
func TestEmbeddingsOnCaptures(t *testing.T) {
	for _, tc := range []struct {
		file        string
		inputs      int
		dim         int
		prompt      string
		wantProblem string
	}{
		{"ollama-0.17.4-embeddings-list4.json", 4, 64, "95", ""},
		{"ollama-0.17.4-embeddings-single.json", 1, 64, "21", ""},
		{"llamacpp-b10573-embeddings-list4.json", 4, 64, "83", ""},
		{"llamacpp-b10573-embeddings-single.json", 1, 64, "21", ""},
		{"llamacpp-b10573-embeddings-base64.json", 1, 64, "21", ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(capturesDir, tc.file))
			require.NoError(t, err)
			s := &streamSeen{whole: true, status: 200}
			s.readEmbeddings(b)
			dim, why := vectorProblems(s, tc.inputs)
			t.Logf("%s: %s; dim %d, problem %q", tc.file, s.embeddingsSummary(), dim, why)
			require.Equal(t, tc.wantProblem, why)
			require.Equal(t, tc.dim, dim)
			require.NotNil(t, s.usage)
			require.Equal(t, tc.prompt, fmtInt(s.usage.prompt))
		})
	}
}
