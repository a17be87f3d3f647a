package embeddings

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/capture"
	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
)

// TestCaptures checks every embeddings answer of the real captures, with
// the number of inputs and the encoding its README says it was asked.
func TestCaptures(t *testing.T) {
	n := func(v int64) jsonpick.Int { return jsonpick.Int{Kind: jsonpick.IntInteger, Value: v} }
	usage := func(p int64) Usage { return Usage{Present: true, Prompt: n(p), Total: n(p)} }
	for _, tc := range []struct {
		file   string
		status int
		want   Want
		result Result
		err    string // "server" for an error answer
	}{
		{"llamacpp-b10573-embeddings-single.json", 200, Want{Inputs: 1}, Result{Vectors: 1, Dimension: 64, Usage: usage(21)}, ""},
		{"llamacpp-b10573-embeddings-list4.json", 200, Want{Inputs: 4}, Result{Vectors: 4, Dimension: 64, Usage: usage(83)}, ""},
		{"llamacpp-b10573-embeddings-base64.json", 200, Want{Inputs: 1, Format: Base64}, Result{Vectors: 1, Dimension: 64, Format: Base64, Usage: usage(21)}, ""},
		// "input": "" embeds the BOS token alone.
		{"llamacpp-b10573-embeddings-empty-input.json", 200, Want{Inputs: 1}, Result{Vectors: 1, Dimension: 64, Usage: usage(1)}, ""},
		{"llamacpp-b10573-embeddings-not-enabled.json", 501, Want{Inputs: 1}, Result{}, "server"},
		{"llamacpp-b10573-embeddings-pooling-none.json", 400, Want{Inputs: 1}, Result{}, "server"},
		{"ollama-0.17.4-embeddings-single.json", 200, Want{Inputs: 1}, Result{Vectors: 1, Dimension: 64, Usage: usage(21)}, ""},
		// 21+19+36+19: each input counted alone.
		{"ollama-0.17.4-embeddings-list4.json", 200, Want{Inputs: 4}, Result{Vectors: 4, Dimension: 64, Usage: usage(95)}, ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(capture.Dir("../../.."), tc.file)
			status, _, err := capture.Response(path)
			require.NoError(t, err)
			require.Equal(t, tc.status, status)
			body, err := os.ReadFile(path)
			require.NoError(t, err)
			c := NewChecker()
			got := check(t, c, body, tc.want)
			require.Equal(t, tc.err, got.Err, "%+v", got)
			if diff := cmp.Diff(tc.result, got.Result); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tc.err == "" {
				// One vector more than the answer holds is a count fault.
				w := tc.want
				w.Inputs++
				require.Equal(t, Count, check(t, c, body, w).Reason)
			}
		})
	}
	files, err := capture.Glob(capture.Dir("../../.."), "*embeddings*.json")
	require.NoError(t, err)
	require.Len(t, files, 8, "a capture without a case above")
}
