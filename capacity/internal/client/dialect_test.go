package client

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// namedEvents is a dialect of another shape than chat's, for the tests
// of the seam: POST /generate with {"input": PROMPT, "limit": N}, the
// credential in X-Api-Key, an answer of named events whose data is plain
// text: "text" (visible), "think" (reasoning), "usage" ("prompt
// completion"), "stop" (a finish reason), "fail" (an error), "ping"
// (activity), "end" (the terminal event). With answers set it does not
// stream: the answer is one JSON body {"text", "prompt", "completion"}.
type namedEvents struct{ answers bool }

func (namedEvents) Path() string { return "/generate" }

func (d namedEvents) Header(h http.Header, key string) {
	h.Set("Accept", map[bool]string{false: eventStreamType, true: jsonType}[d.answers])
	if key != "" {
		h.Set("X-Api-Key", key)
	}
}

func (d namedEvents) Streams() bool { return !d.answers }

func (namedEvents) Encode(r *Request) (head, tail []byte, err error) {
	return []byte(`{"input":`), fmt.Appendf(nil, `,"limit":%d}`, r.MaxTokens), nil
}

func (d namedEvents) NewDecoder() Decoder { return &namedDecoder{answers: d.answers} }

type namedDecoder struct {
	answers bool
	names   []string // every event's name, in order
}

func (d *namedDecoder) Reset() {}

func (d *namedDecoder) Decode(name, data []byte, ev *Event) error {
	if d.answers {
		var a struct {
			Text               string
			Prompt, Completion int64
		}
		if err := json.Unmarshal(data, &a); err != nil {
			return err
		}
		ev.Content = append(ev.Content, []byte(a.Text))
		ev.Usage = Usage{Present: true, Prompt: Count{v: a.Prompt, ok: true}, Completion: Count{v: a.Completion, ok: true}}
		return nil
	}
	d.names = append(d.names, string(name))
	switch string(name) {
	case "text":
		ev.Content = append(ev.Content, data)
	case "think":
		ev.Reasoning = true
	case "usage":
		p, c, _ := strings.Cut(string(data), " ")
		for _, n := range []struct {
			s   string
			dst *Count
		}{{p, &ev.Usage.Prompt}, {c, &ev.Usage.Completion}} {
			v, err := strconv.ParseInt(n.s, 10, 64)
			if err != nil {
				return err
			}
			*n.dst = Count{v: v, ok: true}
		}
		ev.Usage.Present = true
	case "stop":
		ev.Finish = append(ev.Finish, data)
	case "fail":
		ev.Error, ev.ErrorKind = data, "error event"
	case "end":
		ev.Done = true
	}
	return nil
}

// TestDialectSeam: a request of another dialect goes to its route with
// its headers and body, and its named events are decoded into the
// client's events with their arrival: a ping is activity, not output;
// reasoning is the first output, text the first content; the usage and
// the finish reason are the dialect's; the terminal event ends the
// answer. The unmeasured requests keep the bearer token.
func TestDialectSeam(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dec := &namedDecoder{}
		var got *http.Request
		var body []byte
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = r
			body, _ = io.ReadAll(r.Body)
			w.Header().Set("Content-Type", eventStreamType)
			w.WriteHeader(http.StatusOK)
			for _, e := range []struct {
				after      time.Duration
				name, data string
			}{{10, "ping", "{}"}, {10, "think", "hmm"}, {10, "text", "Hello"}, {10, "text", " there"},
				{0, "stop", "done"}, {0, "usage", "400 2"}, {0, "end", ""}} {
				time.Sleep(e.after * time.Millisecond)
				fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.name, e.data)
				w.(http.Flusher).Flush()
			}
		})
		d := namedEvents{}
		cl := testClient(t, Config{HTTPClient: wiretest.Serve(t, h), APIKey: "k-1", Dialect: dialectFunc{d, dec}})
		enc, err := NewEncoder(cl.Dialect(), &Request{MaxTokens: 9})
		require.NoError(t, err)
		var b Buffer
		b.Set(enc.AppendBody(b.Reset(), []byte("say hi")))
		ex := &Exchange{Planned: 512}
		cl.Send(t.Context(), &b, ex)
		row, f := cl.Evaluate(ex)
		require.Nil(t, f)

		require.Equal(t, "/v1/generate", got.URL.Path)
		require.Equal(t, "k-1", got.Header.Get("X-Api-Key"))
		require.Empty(t, got.Header.Get("Authorization"), "the dialect's credential header only")
		require.Equal(t, eventStreamType, got.Header.Get("Accept"))
		require.Equal(t, `{"input":"say hi","limit":9}`, string(body))
		require.Equal(t, []string{"ping", "think", "text", "text", "stop", "usage", "end"}, dec.names)

		require.Equal(t, 20.0, row.TimeToFirstOutputMS, "the ping is no output")
		require.Equal(t, 30.0, row.TTFTMS)
		require.Equal(t, 40.0, row.E2EMS, "the terminal event ends the answer")
		require.Equal(t, 2, row.ContentChunks)
		require.Equal(t, 1, row.ReasoningChunks)
		require.Equal(t, 400, *row.PromptTokens)
		require.Equal(t, 2, *row.OutputTokens)
		answer, _ := ex.Answer()
		require.Equal(t, "Hello there", answer)

		req, err := cl.NewRequest(t.Context(), http.MethodGet, "http://pipe.invalid/v1/models", nil)
		require.NoError(t, err)
		require.Equal(t, "Bearer k-1", req.Header.Get("Authorization"))
	})
}

// TestDialectSeamFailures: a dialect's error event fails the answer as
// server_error with the server's text; its decoder's error as
// malformed_chunk.
func TestDialectSeamFailures(t *testing.T) {
	for _, tt := range []struct{ events, errType, message string }{
		{"event: text\ndata: a\n\nevent: fail\ndata: out of memory\n\n", ErrorTypeServerError, "in-stream error event: out of memory"},
		{"event: text\ndata: a\n\nevent: usage\ndata: x y\n\n", ErrorTypeMalformedChunk, "malformed JSON chunk (event 2)"},
	} {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", eventStreamType)
			_, _ = io.WriteString(w, tt.events)
		})
		_, _, f := sendPrompt(t, Config{HTTPClient: wiretest.Serve(t, h), Dialect: namedEvents{}})
		require.NotNil(t, f)
		require.Equal(t, artifact.FailureStreamValidation, f.FailureClass)
		require.Equal(t, tt.errType, f.ErrorType)
		require.Contains(t, f.ErrorMessage, tt.message)
	}
}

// TestDialectAnswerNotStreamed: the answer of a dialect that does not
// stream is one JSON body, one event that arrived with its last bytes:
// its first content is its end. A streamed Content-Type is refused.
func TestDialectAnswerNotStreamed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var accept string
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			accept = r.Header.Get("Accept")
			time.Sleep(25 * time.Millisecond)
			w.Header().Set("Content-Type", jsonType+"; charset=utf-8")
			_, _ = io.WriteString(w, `{"text":"a vector","prompt":300,"completion":1}`)
		})
		_, row, f := sendPrompt(t, Config{HTTPClient: wiretest.Serve(t, h), Dialect: namedEvents{answers: true}})
		require.Nil(t, f)
		require.Equal(t, jsonType, accept)
		require.Equal(t, 25.0, row.TTFTMS)
		require.Equal(t, 25.0, row.E2EMS)
		require.Equal(t, 1, row.ContentChunks)
		require.Equal(t, 300, *row.PromptTokens)
	})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", eventStreamType)
		_, _ = io.WriteString(w, "data: {}\n\n")
	})
	_, _, f := sendPrompt(t, Config{HTTPClient: wiretest.Serve(t, h), Dialect: namedEvents{answers: true}})
	require.NotNil(t, f)
	require.Equal(t, ErrorTypeContentType, f.ErrorType)
	require.Contains(t, f.ErrorMessage, "is not application/json")
}

// dialectFunc is a dialect whose every answer is decoded by one decoder,
// for a test that looks at what it was given.
type dialectFunc struct {
	Dialect
	dec Decoder
}

func (d dialectFunc) NewDecoder() Decoder { return d.dec }

// TestDialectCredentialHeaderScrubbed: the key a dialect carries in its
// own header (X-Api-Key, as Anthropic Messages does) is the credential,
// whatever the header: a server that echoes that header raw, upper-cased,
// hex-encoded and as HTML references, in its error body and in an error
// event, leaves none of it in the failure.
func TestDialectCredentialHeaderScrubbed(t *testing.T) {
	const key = "sk-ant-DIALECTKEY-5e7a"
	for _, stream := range []bool{false, true} {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			got := r.Header.Get("X-Api-Key")
			var refs strings.Builder
			for _, c := range got {
				fmt.Fprintf(&refs, "&#%d;", c)
			}
			echo := strings.Join([]string{got, strings.ToUpper(got), hex.EncodeToString([]byte(got)), refs.String()}, " ")
			if stream {
				w.Header().Set("Content-Type", eventStreamType)
				fmt.Fprintf(w, "event: fail\ndata: invalid x-api-key %s\n\n", echo)
				return
			}
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key %s"}}`, echo)
		})
		_, _, f := sendPrompt(t, Config{HTTPClient: wiretest.Serve(t, h), Dialect: namedEvents{}, APIKey: key, Secrets: SecretsOf(key, nil)})
		require.NotNil(t, f)
		require.Contains(t, f.ErrorMessage, "invalid x-api-key "+strings.Repeat(RedactedMark+" ", 3)+RedactedMark, "stream %v", stream)
		require.NotContains(t, strings.ToLower(f.ErrorMessage), "dialectkey", "stream %v", stream)
	}
}
