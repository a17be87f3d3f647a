package perfbench

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestHandlerStream: the stream is Chunks content events, a usage chunk
// with the counts, and [DONE].
func TestHandlerStream(t *testing.T) {
	srv := httptest.NewServer(Handler(Schedule{Chunks: 3, PromptTokens: 7}))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, 3, strings.Count(string(body), `"delta":{"content":" tok"}`))
	require.Contains(t, string(body), `"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}`)
	require.True(t, strings.HasSuffix(string(body), "data: [DONE]\n\n"))
}

// TestServeRejectsBadSpec: a schedule that does not decode is an error
// naming the variable.
func TestServeRejectsBadSpec(t *testing.T) {
	err := Serve(t.Context(), "{", io.Discard)
	require.ErrorContains(t, err, ServerEnv)
}

func ExampleHandler() {
	srv := httptest.NewServer(Handler(Schedule{TTFT: time.Millisecond, Chunks: 2, PromptTokens: 1}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/v1/models")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(string(b))
	// Output: {"object":"list","data":[{"id":"perf","max_model_len":1048576}]}
}
