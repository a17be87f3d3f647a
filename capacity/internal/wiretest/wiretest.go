package wiretest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/pipenet"
)

// Serve serves h over an in-memory network (package pipenet) and returns
// a client for it; the server and the client's connections are closed at
// cleanup.
func Serve(t testing.TB, h http.Handler) *http.Client {
	s := pipenet.NewServer(h)
	t.Cleanup(s.Close)
	return s.Client()
}

// MaxErrorMessageRunes is the longest failure error_message, in code
// points: package artifact cuts a longer one there (and marks it cut).
const MaxErrorMessageRunes = 2048

// CharsPerToken is the characters per token WriteOKStream counts a
// prompt at: the reference sizing's, so that a planned prompt passes the
// client's prompt-token floor.
const CharsPerToken = 3.0

// WriteOKStream answers the chat request whose body is rawRequest with a
// stream of one content chunk "ok", a usage chunk counting the prompt's
// messages at CharsPerToken and 3 completion tokens, and [DONE].
func WriteOKStream(w http.ResponseWriter, rawRequest []byte) {
	var req struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(rawRequest, &req)
	prompt := 0
	for _, m := range req.Messages {
		prompt += int(float64(len(m.Content)) / CharsPerToken)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\n"+
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":3,\"total_tokens\":%d}}\n\n"+
		"data: [DONE]\n\n", prompt, prompt+3)
}

// A ConnCounter serves GET /v1/models (a model "m" of 8192 tokens) and
// POST /v1/chat/completions (WriteOKStream), counting the connections it
// was told of (Conns, for a server's ConnState) and the requests of each
// kind; other paths (the window discovery's native endpoints) are 404.
type ConnCounter struct {
	Conns, Models, Chats atomic.Int32
	// CloseAfterChat answers every chat with Connection: close.
	CloseAfterChat bool
	// ModelsDelay is how long GET /v1/models takes.
	ModelsDelay time.Duration
}

// ServeHTTP implements http.Handler.
func (c *ConnCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
		c.Models.Add(1)
		time.Sleep(c.ModelsDelay)
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","max_model_len":8192}]}`)
		return
	}
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	c.Chats.Add(1)
	if c.CloseAfterChat {
		w.Header().Set("Connection", "close")
	}
	WriteOKStream(w, raw)
}

// ReadTranscript returns the capture name of the module's
// testdata/transcripts (see its README), found above the working
// directory.
func ReadTranscript(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Transcripts(t), name))
	require.NoError(t, err)
	return b
}

// Transcripts is the module's testdata/transcripts folder: the first
// testdata/transcripts in the working directory or above it, up to the
// folder of go.mod.
func Transcripts(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "transcripts")
		}
		up := filepath.Dir(dir)
		require.NotEqual(t, dir, up, "no go.mod above the working directory")
		dir = up
	}
}
