package capacity

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// TestRunRecordsExtraBody: the fields Target.ExtraBody merges into every
// request body (llama.cpp's cache_prompt here, against the server built
// from its captures) are sent and recorded in anvil_go.run.extra_body as
// compact JSON, scrubbed of the run's credentials; a long value is
// recorded by its SHA-256; the record reads back from the file.
func TestRunRecordsExtraBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newLlamaCppServer(t)
		var sent []map[string]json.RawMessage
		inner := srv.handler()
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/chat/completions" {
				raw, err := io.ReadAll(r.Body)
				require.NoError(t, err)
				var m map[string]json.RawMessage
				require.NoError(t, json.Unmarshal(raw, &m))
				sent = append(sent, m)
				r.Body = io.NopCloser(bytes.NewReader(raw))
			}
			inner.ServeHTTP(w, r)
		})
		grammar := strings.Repeat("root ::= [a-z]+ ", 100)
		target := Target{BaseURL: "http://llama.invalid/v1", HTTPClient: wiretest.Serve(t, h), MetricsURL: "off",
			Headers:   http.Header{"X-Api-Key": {"key-0123456789"}},
			ExtraBody: map[string]any{"cache_prompt": false, "id_slot": 1, "tag": "team key-0123456789 <b>", "grammar": grammar}}
		rep, err := Run(t.Context(), target, Workload{MaxTokens: 8, Requests: 2, Concurrency: 1, ContextTokens: 1000})
		require.NoError(t, err)
		require.Len(t, sent, 2)
		for _, m := range sent {
			require.JSONEq(t, `false`, string(m["cache_prompt"]))
			require.JSONEq(t, `1`, string(m["id_slot"]))
		}
		want := map[string]string{
			"cache_prompt": "false",
			"id_slot":      "1",
			"tag":          `"team [redacted] <b>"`,
			"grammar":      "sha256:" + fingerprint([]byte(`"` + grammar + `"`))[len("sha256:"):] + " (1602 bytes)",
		}
		require.Equal(t, want, rep.AnvilGo.Run.ExtraBody)

		var b bytes.Buffer
		_, err = rep.WriteTo(&b)
		require.NoError(t, err)
		require.Contains(t, b.String(), `"extra_body": {`)
		back, err := artifact.Read(&b)
		require.NoError(t, err)
		require.Equal(t, want, back.AnvilGo.Run.ExtraBody)
	})
}

// TestRunWithoutExtraBody: a run with no ExtraBody writes no extra_body key.
func TestRunWithoutExtraBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rep, err := Run(t.Context(), pipeTarget(t, usageServer(`"prompt_tokens":512,"completion_tokens":2`)), Workload{Requests: 1, ContextTokens: 512})
		require.NoError(t, err)
		require.Nil(t, rep.AnvilGo.Run.ExtraBody)
		var b bytes.Buffer
		_, err = rep.WriteTo(&b)
		require.NoError(t, err)
		require.NotContains(t, b.String(), `"extra_body"`)
	})
}
