package capacity

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

const transcripts = "../testdata/transcripts"

// capture is a recorded HTTP response: status, headers and body bytes.
type capture struct {
	status int
	header http.Header
	body   []byte
}

// loadCapture reads name.headers (status line and headers as captured) and
// the body file beside it.
func loadCapture(t testing.TB, headers, body string) capture {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(transcripts, headers))
	require.NoError(t, err)
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(append(raw, "\r\n"...))))
	line, err := tp.ReadLine()
	require.NoError(t, err)
	fields := strings.Fields(line)
	require.GreaterOrEqual(t, len(fields), 2, "status line %q", line)
	status, err := strconv.Atoi(fields[1])
	require.NoError(t, err)
	h, err := tp.ReadMIMEHeader()
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(transcripts, body))
	require.NoError(t, err)
	return capture{status: status, header: http.Header(h), body: b}
}

// replay answers every chat request with the capture's bytes, mutated by
// edit when it is not nil; GET /v1/models answers models when not nil.
func replay(c capture, edit func([]byte) []byte, models []byte) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		for _, k := range []string{"Content-Type", "Cache-Control"} {
			if v := c.header.Get(k); v != "" {
				w.Header().Set(k, v)
			}
		}
		w.WriteHeader(c.status)
		body := c.body
		if edit != nil {
			body = edit(bytes.Clone(body))
		}
		_, _ = w.Write(body)
	})
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		if models == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(models)
	})
	return mux
}

// runReplay runs w against h over the in-memory transport; Model and
// MaxModelLen are explicit unless probe is set.
func runReplay(t *testing.T, h http.Handler, w Workload, probe bool) (*artifact.Report, error) {
	t.Helper()
	tg := Target{BaseURL: "http://replay.invalid/v1", HTTPClient: wiretest.Serve(t, h)}
	if !probe {
		tg.Model, tg.MaxModelLen = "tiny", 8192
	}
	return Run(t.Context(), tg, w)
}

// transcriptContext is the planned context of the replayed successes: the
// ollama captures answered a 100-token prompt, within client.MinPromptTokenFraction
// of this plan.
const transcriptContext = 128

// TestRunRealEngineTranscripts replays streams captured from real servers:
// each framing is measured, with the token source its usage allows.
func TestRunRealEngineTranscripts(t *testing.T) {
	tests := []struct {
		name, headers, body string
		edit                func([]byte) []byte
		source              artifact.OutputTokenSource
		outputTokens        *int // nil without usage, as the reference writes it
		promptTokens        *int
		contentChunks       int
	}{
		{name: "ollama usage", headers: "ollama-0.17.4-stream-usage.headers", body: "ollama-0.17.4-stream-usage.sse",
			source: artifact.SourceUsage, outputTokens: new(24), promptTokens: new(100), contentChunks: 12},
		{name: "ollama usage crlf", headers: "ollama-0.17.4-stream-usage.headers", body: "ollama-0.17.4-stream-usage.sse",
			edit: func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) }, source: artifact.SourceUsage, outputTokens: new(24), promptTokens: new(100), contentChunks: 12},
		{name: "ollama usage keep-alive comments", headers: "ollama-0.17.4-stream-usage.headers", body: "ollama-0.17.4-stream-usage.sse",
			edit: func(b []byte) []byte {
				return bytes.ReplaceAll(b, []byte("\n\ndata:"), []byte("\n\n: keep-alive\n\ndata:"))
			}, source: artifact.SourceUsage, outputTokens: new(24), promptTokens: new(100), contentChunks: 12},
		{name: "ollama usage without [DONE]", headers: "ollama-0.17.4-stream-usage.headers", body: "ollama-0.17.4-stream-usage.sse",
			edit: func(b []byte) []byte { return bytes.TrimSuffix(b, []byte("data: [DONE]\n\n")) }, source: artifact.SourceUsage, outputTokens: new(24), promptTokens: new(100), contentChunks: 12},
		{name: "ollama usage, [DONE] without blank line", headers: "ollama-0.17.4-stream-usage.headers", body: "ollama-0.17.4-stream-usage.sse",
			edit: func(b []byte) []byte { return bytes.TrimSuffix(b, []byte("\n")) }, source: artifact.SourceUsage, outputTokens: new(24), promptTokens: new(100), contentChunks: 12},
		{name: "ollama no usage", headers: "ollama-0.17.4-stream-nousage.headers", body: "ollama-0.17.4-stream-nousage.sse",
			source: artifact.SourceContentChunks, contentChunks: 4},
		{name: "mock-llm", headers: "mock-llm-0.1.29-stream.headers", body: "mock-llm-0.1.29-stream.sse",
			source: artifact.SourceContentChunks, contentChunks: 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := loadCapture(t, tt.headers, tt.body)
				rep, err := runReplay(t, replay(c, tt.edit, nil), Workload{Requests: 3, Concurrency: 2, ContextTokens: transcriptContext}, false)
				require.NoError(t, err)
				require.Empty(t, rep.Failures)
				require.Len(t, rep.RequestTimings, 3)
				for _, row := range rep.RequestTimings {
					require.Equal(t, tt.source, row.OutputTokenSource)
					require.Equal(t, tt.outputTokens, row.OutputTokens)
					require.Equal(t, tt.promptTokens, row.PromptTokens)
					require.Equal(t, tt.contentChunks, row.ContentChunks)
					require.Equal(t, 0, row.ReasoningChunks)
					require.Equal(t, transcriptContext, row.PlannedContextTokens)
				}
				require.Equal(t, "capacity-v3", rep.MeasurementProtocol)
				require.Equal(t, tt.source == artifact.SourceUsage, rep.Metrics.OutputTokens != nil)
			})
		})
	}
}

// TestRunTranscriptBreakage cuts and corrupts a real stream: each breakage
// becomes a stream_validation_failed failure that names it.
func TestRunTranscriptBreakage(t *testing.T) {
	usage := "ollama-0.17.4-stream-usage"
	tests := []struct {
		name     string
		edit     func([]byte) []byte
		message  string
		terminal bool
	}{
		{"cut inside an event", func(b []byte) []byte { return b[:len(b)/2] }, "stream ended inside an event", false},
		{"last event without blank line", func(b []byte) []byte {
			b = bytes.TrimSuffix(b, []byte("data: [DONE]\n\n"))
			return bytes.TrimSuffix(b, []byte("\n"))
		}, "stream ended inside an event", false},
		{"reasoning only", func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(`"content":`), []byte(`"reasoning":`)) }, "without visible content", true},
		{"malformed chunk", func(b []byte) []byte { return bytes.Replace(b, []byte(`"choices":[{`), []byte(`"choices":[{{`), 1) }, "malformed JSON chunk (event 1)", false},
		{"empty body", func([]byte) []byte { return nil }, "without visible content", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := loadCapture(t, usage+".headers", usage+".sse")
				rep, err := runReplay(t, replay(c, tt.edit, nil), Workload{Requests: 2, Concurrency: 1, ContextTokens: 1024}, false)
				require.NoError(t, err)
				require.Len(t, rep.Failures, 2)
				for _, f := range rep.Failures {
					require.Equal(t, artifact.FailureStreamValidation, f.FailureClass)
					require.Contains(t, f.ErrorMessage, tt.message)
					require.Equal(t, 200, *f.HTTPStatus)
					require.Equal(t, tt.terminal, f.ResponseMetadata.StreamTerminalObserved)
				}
			})
		})
	}
}

// TestRunTranscriptErrors replays the captured error answers.
func TestRunTranscriptErrors(t *testing.T) {
	t.Run("404 unknown model refuses the run", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := loadCapture(t, "ollama-0.17.4-unknown-model.headers", "ollama-0.17.4-unknown-model.json")
			rep, err := runReplay(t, replay(c, nil, nil), Workload{Requests: 4, Concurrency: 1, ContextTokens: 1024}, false)
			require.ErrorIs(t, err, ErrEndpointRefused)
			require.Contains(t, err.Error(), "model 'nope' not found")
			require.NotNil(t, rep, "the partial report comes with the error")
			require.Equal(t, 1, rep.Requests, "no request after the refusal")
			require.Equal(t, artifact.FailureHTTPError, rep.Failures[0].FailureClass)
			require.Equal(t, 404, *rep.Failures[0].HTTPStatus)
		})
	})
	t.Run("400 bad body is an http_error", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := loadCapture(t, "ollama-0.17.4-bad-body.headers", "ollama-0.17.4-bad-body.json")
			rep, err := runReplay(t, replay(c, nil, nil), Workload{Requests: 2, Concurrency: 1, ContextTokens: 1024}, false)
			require.NoError(t, err)
			require.Len(t, rep.Failures, 2)
			require.Equal(t, artifact.FailureHTTPError, rep.Failures[0].FailureClass)
			require.Equal(t, 400, *rep.Failures[0].HTTPStatus)
			require.Contains(t, rep.Failures[0].ErrorMessage, "HTTP 400 Bad Request: {\"error\":{\"message\":\"json: cannot unmarshal")
		})
	})
	t.Run("non-streamed answer", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := loadCapture(t, "ollama-0.17.4-nonstream.headers", "ollama-0.17.4-nonstream.json")
			rep, err := runReplay(t, replay(c, nil, nil), Workload{Requests: 1, Concurrency: 1, ContextTokens: 1024}, false)
			require.NoError(t, err)
			require.Len(t, rep.Failures, 1)
			require.Contains(t, rep.Failures[0].ErrorMessage, `Content-Type "application/json" is not text/event-stream: {"id":"chatcmpl-639"`)
		})
	})
	t.Run("models without a context length", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := loadCapture(t, "ollama-0.17.4-stream-usage.headers", "ollama-0.17.4-stream-usage.sse")
			models, err := os.ReadFile(filepath.Join(transcripts, "ollama-0.17.4-models.json"))
			require.NoError(t, err)
			_, err = runReplay(t, replay(c, nil, models), Workload{Requests: 1, ContextTokens: 1024}, true)
			require.ErrorIs(t, err, ErrInvalidConfig)
			require.Contains(t, err.Error(), `the /models entry "tiny:latest" has none of [max_model_len max_context_length context_length], and neither http://replay.invalid/props (llama.cpp) nor http://replay.invalid/api/ps or http://replay.invalid/api/show (ollama) gave a context length: set Target.MaxModelLen`)

			tg := Target{BaseURL: "http://replay.invalid/v1", HTTPClient: wiretest.Serve(t, replay(c, nil, models)), MaxModelLen: 8192}
			rep, err := Run(t.Context(), tg, Workload{Requests: 1, ContextTokens: 1024})
			require.NoError(t, err)
			require.Equal(t, "tiny:latest", rep.Model, "the model id comes from /models")
			require.Equal(t, 8192, *rep.MaxContextTokens)
		})
	})
	t.Run("models refused", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, err := runReplay(t, replay(capture{status: 200}, nil, nil), Workload{Requests: 1}, true)
			require.True(t, errors.Is(err, ErrEndpointRefused), "%v", err)
		})
	})
}

// TestRunNoUsageFollowsReferenceConvention: anvil-go's artifact of a
// server without usage (the mock-llm capture) writes what the reference
// writes for one (testdata/reference-no-usage-capacity-v3.json): the same
// row and top-level keys, output_tokens and prompt_tokens null, the
// exact-token fields and the run's token totals null; and it reads back,
// recomputing to the same bytes.
func TestRunNoUsageFollowsReferenceConvention(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := loadCapture(t, "mock-llm-0.1.29-stream.headers", "mock-llm-0.1.29-stream.sse")
		slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(10 * time.Millisecond) // a positive wall time, for content_chunks_s
			replay(c, nil, nil).ServeHTTP(w, r)
		})
		rep, err := runReplay(t, slow, Workload{Requests: 3, Concurrency: 2, ContextTokens: transcriptContext}, false)
		require.NoError(t, err)
		var written bytes.Buffer
		_, err = rep.WriteTo(&written)
		require.NoError(t, err)

		back, err := artifact.Read(bytes.NewReader(written.Bytes()))
		require.NoError(t, err)
		require.NoError(t, back.Recompute())
		var again bytes.Buffer
		_, err = back.WriteTo(&again)
		require.NoError(t, err)
		require.Equal(t, written.String(), again.String(), "reads back and recomputes exactly")

		ref, err := os.ReadFile(filepath.Join("..", "testdata", "reference-no-usage-capacity-v3.json"))
		require.NoError(t, err)
		var ours, theirs map[string]any
		require.NoError(t, json.Unmarshal(written.Bytes(), &ours))
		require.NoError(t, json.Unmarshal(ref, &theirs))
		delete(ours, "anvil_go")
		require.ElementsMatch(t, slices.Collect(maps.Keys(theirs)), slices.Collect(maps.Keys(ours)))
		row := ours["request_timings"].([]any)[0].(map[string]any)
		refRow := theirs["request_timings"].([]any)[0].(map[string]any)
		require.ElementsMatch(t, slices.Collect(maps.Keys(refRow)), slices.Collect(maps.Keys(row)))
		for _, k := range []string{"output_tokens", "prompt_tokens", "decode_tok_s", "tpot_ms", "mean_time_per_output_token_ms", "mean_inter_token_latency_ms", "effective_prefill_tok_s"} {
			require.Nil(t, row[k], k)
			require.Nil(t, refRow[k], k)
		}
		require.Equal(t, refRow["output_token_source"], row["output_token_source"])
		metrics, refMetrics := ours["metrics"].(map[string]any), theirs["metrics"].(map[string]any)
		for _, k := range []string{"output_tokens", "prompt_tokens", "throughput_tok_s", "completion_tokens_mean", "prompt_tokens_mean"} {
			require.Nil(t, metrics[k], k)
			require.Nil(t, refMetrics[k], k)
		}
		require.NotNil(t, metrics["content_chunks_s"])
	})
}
