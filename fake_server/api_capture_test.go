package fakeserver

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// The Responses, Messages and completions layouts pinned to the real
// captures byte for byte: each capture's values (ids, times, model, the
// request's echoed fields, the text of every delta, the counts) are fed to
// the layout's framer, whose bytes must be the capture's. What the framer
// does not draw itself is what differs between two runs of a real engine.

// sseEvent is one event of a capture.
type sseEvent struct{ name, data string }

// sseEvents splits an SSE capture (LF-framed, one data line per event).
func sseEvents(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	for _, block := range strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n") {
		var ev sseEvent
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			default:
				t.Fatalf("line %q of event %q", line, block)
			}
		}
		out = append(out, ev)
	}
	return out
}

// testResponse is a response writer over a recorder, for a request of
// API a with q arriving at arrived, as the server of cfg answers it.
func testResponse(cfg Config, a api, q request, arrived time.Time) (*streamWriter, *httptest.ResponseRecorder) {
	cfg = cfg.withDefaults()
	srv := &Server{cfg: cfg}
	st := &reqState{api: a, req: q, arrived: arrived, tr: newTrace(0)}
	rec := httptest.NewRecorder()
	sw := srv.newResponse(rec, st)
	sw.sq, sw.plan = &seq{}, &outputPlan{finish: "length"}
	return sw, rec
}

// driveFramer feeds the groups to f as the stream loop does, then ends it.
func driveFramer(t *testing.T, sw *streamWriter, f framer, gs []group) {
	t.Helper()
	for i := range gs {
		if i == 0 {
			require.True(t, f.begin(&gs[i]))
		}
		if gs[i].kind == kindReasoning {
			sw.st.tr.ReasoningTokens += gs[i].tokens
		} else {
			sw.st.tr.ContentTokens += gs[i].tokens
		}
		sw.st.tr.CompletionTokens += gs[i].tokens
		require.True(t, f.output(&gs[i], i == len(gs)-1))
	}
	require.True(t, f.end())
}

// pinned compares rendered bytes with a capture's.
func pinned(t *testing.T, name string, capture, got []byte) {
	t.Helper()
	if diff := cmp.Diff(string(capture), string(got)); diff != "" {
		t.Errorf("%s re-rendered differs (-real +fake):\n%s", name, diff)
	}
}

func unix(s int64) time.Time           { return time.Unix(s, 0) }
func clockAt(s int64) func() time.Time { return func() time.Time { return unix(s) } }

// responsesCapture is what a Responses capture shows that its framer does
// not draw.
type responsesCapture struct {
	ids                responsesIDs
	created, completed int64
	model              string
	maxOutput          *int
	temperature        *float64
	groups             []group
	input, cached      int
	timings            json.RawMessage
}

func readResponsesCapture(t *testing.T, evs []sseEvent) responsesCapture {
	t.Helper()
	var c responsesCapture
	for _, ev := range evs {
		var e struct {
			Type     string `json:"type"`
			Delta    string `json:"delta"`
			Response *struct {
				ID              string   `json:"id"`
				CreatedAt       int64    `json:"created_at"`
				CompletedAt     int64    `json:"completed_at"`
				Model           string   `json:"model"`
				MaxOutputTokens *int     `json:"max_output_tokens"`
				Temperature     *float64 `json:"temperature"`
				Usage           *struct {
					InputTokens        int `json:"input_tokens"`
					InputTokensDetails struct {
						CachedTokens int `json:"cached_tokens"`
					} `json:"input_tokens_details"`
				} `json:"usage"`
			} `json:"response"`
			Item *struct {
				ID   string `json:"id"`
				Type string `json:"type"`
			} `json:"item"`
			Timings json.RawMessage `json:"timings"`
		}
		require.NoError(t, json.Unmarshal([]byte(ev.data), &e), ev.data)
		if r := e.Response; r != nil {
			c.ids.resp, c.created, c.completed, c.model = r.ID, max(c.created, r.CreatedAt), r.CompletedAt, r.Model
			c.maxOutput, c.temperature = r.MaxOutputTokens, r.Temperature
			if r.Usage != nil {
				c.input, c.cached = r.Usage.InputTokens, r.Usage.InputTokensDetails.CachedTokens
			}
		}
		if it := e.Item; it != nil && it.Type == "message" {
			c.ids.msg = it.ID
		} else if it != nil {
			c.ids.rs = it.ID
		}
		switch e.Type {
		case "response.output_text.delta":
			c.groups = append(c.groups, group{kind: kindContent, text: e.Delta, tokens: 1})
		case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
			c.groups = append(c.groups, group{kind: kindReasoning, text: e.Delta, tokens: 1})
		}
		if e.Timings != nil {
			c.timings = e.Timings
		}
	}
	return c
}

// TestResponsesLayoutsMatchCaptures pins the Ollama and llama.cpp
// layouts of /v1/responses to their captures.
func TestResponsesLayoutsMatchCaptures(t *testing.T) {
	for _, tc := range []struct {
		capture string
		dialect func() Dialect
	}{
		{"ollama-0.17.4-responses-stream-string.sse", dialectOllama},
		{"ollama-0.17.4-responses-stream-messages.sse", dialectOllama},
		{"llamacpp-b10573-responses-stream-string.sse", dialectLlamaCppAPIs},
		{"llamacpp-b10573-responses-stream-messages.sse", dialectLlamaCppAPIs},
		{"llamacpp-b10573-think-responses-stream.sse", dialectLlamaCppAPIs},
	} {
		t.Run(tc.capture, func(t *testing.T) {
			_, body := readCapture(t, tc.capture)
			c := readResponsesCapture(t, sseEvents(t, body))
			cfg := Config{Model: c.model, Dialect: tc.dialect()}
			q := request{Stream: true, MaxTokens: c.maxOutput, Temperature: c.temperature}
			sw, rec := testResponse(cfg, responsesAPI{}, q, unix(c.created))
			sw.st.tr.PromptTokens, sw.sq.cached = c.input, c.cached
			f := newResponsesFramer(sw)
			f.ids, f.clock = c.ids, clockAt(c.completed)
			f.timings = func() []byte { return c.timings }
			driveFramer(t, sw, f, c.groups)
			pinned(t, tc.capture, body, rec.Body.Bytes())
		})
	}
}

// dialectLlamaCppAPIs lays out the APIs beside chat as llama.cpp b10573
// does (its chat chunks are not modelled).
func dialectLlamaCppAPIs() Dialect {
	return Dialect{Layout: layoutLlamaCpp, ContentType: "text/event-stream"}
}

// TestResponsesBodiesMatchCaptures pins the non-streamed Responses bodies.
func TestResponsesBodiesMatchCaptures(t *testing.T) {
	for _, tc := range []struct {
		capture string
		dialect func() Dialect
	}{
		{"ollama-0.17.4-responses-nonstream.json", dialectOllama},
		{"llamacpp-b10573-responses-nonstream.json", dialectLlamaCppAPIs},
		{"llamacpp-b10573-think-responses-nonstream.json", dialectLlamaCppAPIs},
	} {
		t.Run(tc.capture, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join(transcripts, tc.capture))
			require.NoError(t, err)
			var r struct {
				ID              string   `json:"id"`
				CreatedAt       int64    `json:"created_at"`
				CompletedAt     int64    `json:"completed_at"`
				Model           string   `json:"model"`
				MaxOutputTokens *int     `json:"max_output_tokens"`
				Temperature     *float64 `json:"temperature"`
				Output          []struct {
					ID      string `json:"id"`
					Type    string `json:"type"`
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"output"`
				Usage struct {
					InputTokens        int `json:"input_tokens"`
					OutputTokens       int `json:"output_tokens"`
					InputTokensDetails struct {
						CachedTokens int `json:"cached_tokens"`
					} `json:"input_tokens_details"`
				} `json:"usage"`
			}
			require.NoError(t, json.Unmarshal(body, &r))
			ids := responsesIDs{resp: r.ID}
			var a answer
			for _, it := range r.Output {
				if it.Type == "message" {
					ids.msg, a.content = it.ID, it.Content[0].Text
				} else {
					ids.rs, a.reasoning = it.ID, it.Content[0].Text
				}
			}
			a.finish = "length"
			a.usage = usage{Prompt: r.Usage.InputTokens, Completion: r.Usage.OutputTokens, Cached: r.Usage.InputTokensDetails.CachedTokens}
			q := request{MaxTokens: r.MaxOutputTokens, Temperature: r.Temperature}
			sw, _ := testResponse(Config{Model: r.Model, Dialect: tc.dialect()}, responsesAPI{}, q, unix(r.CreatedAt))
			f := newResponsesFramer(sw)
			f.ids, f.clock = ids, clockAt(r.CompletedAt)
			pinned(t, tc.capture, body, f.answerBody(&a))
		})
	}
}
