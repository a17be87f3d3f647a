package capacity

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/client"
)

// TestTokenizeAnswerExcerptLeaksNoPrefix: a /tokenize that, after
// answering discovery, sends an answer without a count that echoes the
// request's credential so that it straddles the excerpt's cut. Run fails
// with errPromptSizing, and no part of the credential is in the error:
// the answer is scrubbed whole before it is cut.
func TestTokenizeAnswerExcerptLeaksNoPrefix(t *testing.T) {
	const token = "PLANTEDTOK-5c1e9a"
	synctest.Test(t, func(t *testing.T) {
		h := tokenizeServer(func(w http.ResponseWriter, r *http.Request) {
			head := `{"echo":"`
			pad := strings.Repeat("x", client.MaxErrorExcerpt-len(head)-9) // the cut falls after 9 characters of the token
			fmt.Fprintf(w, `%s%s%s"}`, head, pad, r.Header.Get("X-Session"))
		})
		tgt := pipeTarget(t, h)
		tgt.Headers = http.Header{"X-Session": {token}}
		_, err := Run(t.Context(), tgt, Workload{Requests: 2, ContextTokens: 512, PromptSizing: promptSizingExact})
		require.ErrorIs(t, err, errPromptSizing)
		require.ErrorContains(t, err, `neither "count" nor "tokens"`)
		require.NotContains(t, err.Error(), token[:9], "a prefix of the credential survived the cut")
	})
}

// TestTokenizeNegativeCount: a /tokenize count below zero is named as such,
// not as a missing count.
func TestTokenizeNegativeCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := tokenizeServer(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"count":-5}`) })
		_, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 2, ContextTokens: 512, PromptSizing: promptSizingExact})
		require.ErrorIs(t, err, errPromptSizing)
		require.ErrorContains(t, err, `"count" = -5: want a count >= 0`)
	})
}

// tokenizeServer answers discovery's first /tokenize with a count, every
// later one with later, and chat requests with a short stream.
func tokenizeServer(later func(w http.ResponseWriter, r *http.Request)) http.Handler {
	var counts atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch {
		case strings.HasSuffix(r.URL.Path, "/tokenize"):
			if counts.Add(1) == 1 {
				fmt.Fprint(w, `{"count":64}`)
				return
			}
			later(w, r)
		case strings.HasSuffix(r.URL.Path, "/chat/completions"):
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\n"+
				"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":500,\"completion_tokens\":1,\"total_tokens\":501}}\n\ndata: [DONE]\n\n")
		default:
			http.NotFound(w, r)
		}
	})
}
