package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/anvilbench/anvil/capacity"
)

// handServer is an OpenAI-compatible server written here, with the wire
// details the fake has no knob for.
type handServer struct {
	modelsStatus   int    // GET /v1/models status (0: 200)
	finish         string // the finish_reason sent (empty: "stop")
	afterDone      bool   // one more data event after [DONE]
	refuseInStream bool   // refuse the over-long prompt inside a 200 stream
	stringErrors   bool   // {"error": "..."} instead of an object
	handWindow     int
}

func (h *handServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/models":
		if h.modelsStatus != 0 {
			http.Error(w, "no such route", h.modelsStatus)
			return
		}
		fmt.Fprintf(w, `{"object":"list","data":[{"id":"hand","object":"model","max_context_length":%d}]}`, h.handWindow)
	case "/v1/chat/completions":
		h.chat(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (h *handServer) fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if h.stringErrors {
		fmt.Fprintf(w, `{"error":%q}`, msg)
		return
	}
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, msg)
}

func (h *handServer) chat(w http.ResponseWriter, r *http.Request) {
	var q struct {
		Model    string `json:"model"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &q); err != nil || len(q.Messages) == 0 {
		h.fail(w, http.StatusBadRequest, "bad body")
		return
	}
	if q.Model != "hand" {
		h.fail(w, http.StatusNotFound, "no such model")
		return
	}
	prompt := len(q.Messages[0].Content) / 3
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(s string) { fmt.Fprintf(w, "data: %s\n\n", s) }
	if prompt > h.handWindow {
		if !h.refuseInStream {
			h.fail(w, http.StatusBadRequest, "context length exceeded")
			return
		}
		send(`{"error":{"message":"context length exceeded","type":"invalid_request_error"}}`)
		send(sseDone)
		return
	}
	finish := h.finish
	if finish == "" {
		finish = "stop"
	}
	send(`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`)
	send(`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hello"}}]}`)
	send(`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" world"},"finish_reason":"` + finish + `"}]}`)
	send(fmt.Sprintf(`{"object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":2,"total_tokens":%d}}`, prompt, prompt+2))
	send(sseDone)
	if h.afterDone {
		send(`{"object":"chat.completion.chunk","choices":[]}`)
	}
}

// TestConformanceHandwritten runs the suite against servers written here
// for what the fake cannot do, and checks the verdicts named.
func TestConformanceHandwritten(t *testing.T) {
	for _, tc := range []struct {
		name string
		srv  handServer
		want map[string]Outcome
	}{
		{"well behaved", handServer{}, map[string]Outcome{
			nameModels: Pass, nameStreamFraming: Pass, nameUsage: Pass, nameFinishReason: Pass, nameContent: Pass,
			nameMaxTokens: Skip, nameReasoningSeparation: Skip, namePromptTokens: Pass, namePrefixCache: Skip,
			nameBadRequest: Pass, nameIsolation: Skip, nameDeterminism: Pass,
		}},
		{"no /models", handServer{modelsStatus: http.StatusNotFound}, map[string]Outcome{
			nameModels: Fail, nameStreamFraming: Pass,
		}},
		{"data after [DONE]", handServer{afterDone: true}, map[string]Outcome{nameStreamFraming: Fail, nameUsage: Pass}},
		{"unknown finish_reason", handServer{finish: "eos"}, map[string]Outcome{nameFinishReason: Fail, nameStreamFraming: Pass}},
		{"over-long prompt refused in the stream", handServer{refuseInStream: true}, map[string]Outcome{namePromptTokens: Pass}},
		{"string errors", handServer{stringErrors: true}, map[string]Outcome{nameBadRequest: Fail, namePromptTokens: Pass}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.srv.handWindow = 1000
			ts := httptest.NewServer(&tc.srv)
			defer ts.Close()
			got := suiteAt(t, Config{Target: capacity.Target{BaseURL: ts.URL + "/v1", Model: "hand"}})
			for check, want := range tc.want {
				if got[check].Outcome != want {
					t.Errorf("%s: %s, want %s: %s %q", check, got[check].Outcome, want, got[check].Reason, got[check].Notes)
				}
			}
		})
	}
}
