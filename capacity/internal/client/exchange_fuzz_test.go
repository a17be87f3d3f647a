package client

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// roundTripFunc adapts a function to http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// bodyClient returns a client whose every request is answered at once with
// a 200 text/event-stream response carrying body.
func bodyClient(body []byte) *http.Client {
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Body != nil {
			_, _ = io.Copy(io.Discard, r.Body)
			_ = r.Body.Close()
		}
		return &http.Response{
			StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header:  http.Header{"Content-Type": {"text/event-stream"}},
			Body:    io.NopCloser(bytes.NewReader(body)),
			Request: r,
		}, nil
	})}
}

// exchangeBody sends one request answered with body and evaluates it as
// request 0, planned at 512 tokens, with the prompt-token floor, canaries
// and strict controlled output on.
func exchangeBody(t testing.TB, body []byte) (*Exchange, *artifact.TimingRow, *artifact.Failure) {
	return sendPrompt(t, Config{BaseURL: "http://fuzz.invalid/v1", HTTPClient: bodyClient(body),
		Checks: Checks{Canaries: true, Seed: 1, Words: 3, Policy: PolicyStrict, MaxTokens: 64, Window: 8192}})
}

// FuzzStream feeds arbitrary bytes to the client as a response body. Whatever
// arrives, the request ends as exactly one of a valid row or a
// stream_validation_failed (or contract) failure, and memory stays bounded.
func FuzzStream(f *testing.F) {
	for _, name := range []string{"ollama-0.17.4-stream-usage.sse", "ollama-0.17.4-stream-nousage.sse", "mock-llm-0.1.29-stream.sse"} {
		b, err := os.ReadFile(filepath.Join(transcripts, name))
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"ANVIL_REQ_1_00000 code code code\"}}]}\r\n\r\ndata: [DONE]\r\n\r\n"))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"reasoning\":\"r\"}}]}\n\ndata: {\"error\":{\"message\":\"x\"}}\n\n"))
	f.Add([]byte(": keep-alive\n\nevent: error\ndata: boom\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}],\"usage\":{\"prompt_tokens\":1e400}}\n\ndata: [DON"))
	f.Fuzz(func(t *testing.T, body []byte) {
		ex, row, fail := exchangeBody(t, body)
		require.True(t, (row == nil) != (fail == nil), "exactly one outcome")
		require.LessOrEqual(t, ex.stream.capture.Len(), VisibleCaptureLimit)
		require.LessOrEqual(t, ex.stream.events, maxStreamEvents+1)
		require.LessOrEqual(t, len(ex.stream.finishReasons), maxFinishReasons)
		if row != nil {
			require.Positive(t, row.ContentChunks)
			require.NoError(t, row.Check())
			require.True(t, row.RequestCanary.Passed)
			require.True(t, row.ControlledOutput.Passed)
			if row.PromptTokens != nil {
				require.GreaterOrEqual(t, float64(*row.PromptTokens), MinPromptTokenFraction*512)
			}
			return
		}
		switch fail.FailureClass {
		case artifact.FailureStreamValidation, artifact.FailureRequestCanary, artifact.FailureControlledOutput:
		default:
			t.Fatalf("unexpected failure class %s: %s", fail.FailureClass, fail.ErrorMessage)
		}
		require.True(t, utf8.RuneCountInString(fail.ErrorMessage) <= wiretest.MaxErrorMessageRunes)
		require.True(t, fail.ResponseReceived)
		require.NotNil(t, fail.ResponseMetadata)
	})
}

// TestStreamOutcomeExamples pins the outcome of a few bodies through the
// whole client path (no network).
func TestStreamOutcomeExamples(t *testing.T) {
	content := func(s string) string {
		return "data: {\"choices\":[{\"delta\":{\"content\":\"" + s + "\"}}]}\n\n"
	}
	tests := []struct {
		name, body string
		class      artifact.FailureClass
		message    string
	}{
		{"valid", content("ANVIL_REQ_1_00000 code code code") + "data: [DONE]\n\n", "", ""},
		{"no marker", content("code code code") + "data: [DONE]\n\n", artifact.FailureRequestCanary, "marker missing"},
		{"peer marker", content("ANVIL_REQ_1_00000 ANVIL_REQ_1_00001 code code code") + "data: [DONE]\n\n", artifact.FailureRequestCanary, "1 peer marker(s)"},
		{"extra words", content("ANVIL_REQ_1_00000 code code code more") + "data: [DONE]\n\n", artifact.FailureControlledOutput, "observed 3 and 1 other words"},
		{"no done, no usage", content("ANVIL_REQ_1_00000 code code code"), "", ""},
		{"usage within the floor", content("ANVIL_REQ_1_00000 code code code") + usage(257) + "data: [DONE]\n\n", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, row, f := exchangeBody(t, []byte(tt.body))
			if tt.class == "" {
				require.Nil(t, f)
				require.NotNil(t, row)
				return
			}
			require.Nil(t, row)
			require.Equal(t, tt.class, f.FailureClass)
			require.Contains(t, f.ErrorMessage, tt.message)
			require.NotNil(t, f.ResponseTiming, "a contract failure keeps its timing")
			require.NotNil(t, f.ResponseTiming.RequestCanary, "the canary check travels in the timing row")
			require.Nil(t, f.RequestCanary, "the check is not repeated beside the row")
		})
	}
}

// TestStreamTruncatedPromptExample: usage below the floor fails before the
// contracts are checked, and keeps its timing row.
func TestStreamTruncatedPromptExample(t *testing.T) {
	body := "data: {\"choices\":[{\"delta\":{\"content\":\"ANVIL_REQ_1_00000 code code code\"}}]}\n\n" + usage(255) + "data: [DONE]\n\n"
	_, row, f := exchangeBody(t, []byte(body))
	require.Nil(t, row)
	require.Equal(t, artifact.FailureStreamValidation, f.FailureClass)
	require.Equal(t, "prompt truncated: usage.prompt_tokens 255 is at or below the floor of 256 tokens (0.5 of the planned context of 512 tokens): the server dropped part of the prompt", f.ErrorMessage)
	require.Equal(t, 255, *f.ResponseTiming.PromptTokens)
	require.Equal(t, 255, *f.ResponseMetadata.Usage.PromptTokens)
}

// usage is a usage event reporting prompt prompt tokens and 3 completion
// tokens.
func usage(prompt int) string {
	return fmt.Sprintf("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":3,\"total_tokens\":%d}}\n\n", prompt, prompt+3)
}

// TestFailureMessageCut: a failure message longer than maxErrorMessageRunes
// is cut on a rune boundary and flagged.
func TestFailureMessageCut(t *testing.T) {
	long := bytes.Repeat([]byte("é"), 3000)
	ex := &Exchange{received: true, status: 500}
	ex.fail(artifact.FailureHTTPError, ErrorTypeHTTPStatus, "HTTP 500: %s", long)
	f := failureFromExchange(3, 512, ex, nil)
	require.True(t, f.ErrorMessageTruncated)
	require.Equal(t, wiretest.MaxErrorMessageRunes, utf8.RuneCountInString(f.ErrorMessage))
	require.True(t, utf8.ValidString(f.ErrorMessage))
}
