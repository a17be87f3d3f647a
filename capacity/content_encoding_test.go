package capacity

import (
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
)

// flushWriter is a compressor that can push out what it holds.
type flushWriter interface {
	io.WriteCloser
	Flush() error
}

// compressedStream answers with an SSE stream compressed by newEnc under
// the Content-Encoding name; the first event comes after 5 ms, the rest
// after 20 ms more, each flushed through the compressor. With onlyAsked it
// compresses only when the request's Accept-Encoding names the coding.
func compressedStream(name string, newEnc func(io.Writer) flushWriter, onlyAsked bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		var out io.Writer = w
		enc := flushWriter(nil)
		if !onlyAsked || r.Header.Get("Accept-Encoding") == name {
			w.Header().Set("Content-Encoding", name)
			enc = newEnc(w)
			out = enc
		}
		flush := func() {
			if enc != nil {
				_ = enc.Flush()
			}
			http.NewResponseController(w).Flush()
		}
		time.Sleep(5 * time.Millisecond)
		fmt.Fprint(out, "data: {\"choices\":[{\"delta\":{\"content\":\"hello\"}}]}\n\n")
		flush()
		time.Sleep(20 * time.Millisecond)
		fmt.Fprint(out, "data: {\"choices\":[{\"delta\":{\"content\":\" world\"},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprint(out, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":400,\"completion_tokens\":2,\"total_tokens\":402}}\n\n")
		fmt.Fprint(out, "data: [DONE]\n\n")
		if enc != nil {
			_ = enc.Close()
		}
	})
}

func gzipEnc(w io.Writer) flushWriter { return gzip.NewWriter(w) }
func zlibEnc(w io.Writer) flushWriter { return zlib.NewWriter(w) }
func rawDeflateEnc(w io.Writer) flushWriter {
	fw, _ := flate.NewWriter(w, flate.DefaultCompression)
	return fw
}

// TestRunCompressedStreams: gzip and deflate (zlib-wrapped or raw) streams
// are decoded transparently, whether the user asked for them through
// Target.Headers or the server compressed although asked for identity; the
// events are stamped when they come out decoded, so the timings are those
// of the uncompressed stream.
func TestRunCompressedStreams(t *testing.T) {
	tests := []struct {
		name, coding string
		enc          func(io.Writer) flushWriter
		asked        bool // Target.Headers asks for the coding; the server compresses only then
	}{
		{"gzip asked", "gzip", gzipEnc, true},
		{"gzip unasked", "gzip", gzipEnc, false},
		{"x-gzip unasked", "x-gzip", gzipEnc, false},
		{"deflate zlib asked", "deflate", zlibEnc, true},
		{"deflate raw unasked", "deflate", rawDeflateEnc, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tg := pipeTarget(t, compressedStream(tt.coding, tt.enc, tt.asked))
				if tt.asked {
					tg.Headers = http.Header{"Accept-Encoding": {tt.coding}}
				}
				rep, err := Run(t.Context(), tg, Workload{Requests: 2, Concurrency: 1, ContextTokens: 512})
				require.NoError(t, err)
				require.Empty(t, rep.Failures)
				require.Len(t, rep.RequestTimings, 2)
				for _, row := range rep.RequestTimings {
					require.Equal(t, 5.0, row.TTFTMS, "stamped when the first event came out decoded")
					require.Equal(t, 25.0, row.E2EMS)
					require.Equal(t, 2, row.ContentChunks)
					require.Equal(t, new(2), row.OutputTokens)
				}
			})
		})
	}
}

// TestRunUnsupportedEncoding: any other content coding fails the request
// naming it, as does a corrupt gzip stream; the default request asks for
// identity.
func TestRunUnsupportedEncoding(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var asked string
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			asked = r.Header.Get("Accept-Encoding")
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Encoding", "br")
			fmt.Fprint(w, "\x0b\x02\x80not really brotli")
		})
		rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 1, Concurrency: 1, ContextTokens: 512})
		require.NoError(t, err)
		require.Equal(t, "identity", asked)
		require.Len(t, rep.Failures, 1)
		f := rep.Failures[0]
		require.Equal(t, artifact.FailureStreamValidation, f.FailureClass)
		require.Equal(t, client.ErrorTypeContentEncoding, f.ErrorType)
		require.Contains(t, f.ErrorMessage, `unsupported Content-Encoding "br"`)
	})
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Encoding", "gzip")
			fmt.Fprint(w, "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage that does not inflate")
		})
		rep, err := Run(t.Context(), pipeTarget(t, h), Workload{Requests: 1, Concurrency: 1, ContextTokens: 512})
		require.NoError(t, err)
		require.Len(t, rep.Failures, 1)
		require.Equal(t, client.ErrorTypeContentEncoding, rep.Failures[0].ErrorType)
		require.Contains(t, rep.Failures[0].ErrorMessage, "Content-Encoding gzip: the stream does not decode")
	})
}
