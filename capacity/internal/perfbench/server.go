package perfbench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

// ServerEnv is the environment variable that makes the test binary serve
// instead of testing: its value is the Schedule as JSON.
const ServerEnv = "ANVIL_PERFBENCH_SERVER"

// Schedule is what the server sends for every chat request: after TTFT
// (measured from the moment the request body has been read), Chunks content
// events, one every Gap (Gap 0: as fast as the connection takes them), each
// carrying one token, then a usage chunk and data: [DONE]. Events are due
// at absolute offsets (TTFT + i*Gap), so a late write never shifts the
// ones after it.
type Schedule struct {
	TTFT   time.Duration `json:"ttft"`
	Gap    time.Duration `json:"gap"`
	Chunks int           `json:"chunks"`
	// PromptTokens is reported in usage.prompt_tokens.
	PromptTokens int `json:"prompt_tokens"`
}

// contentEvent is one content chunk: a small chat.completion.chunk, as a
// vLLM server writes it.
const contentEvent = `data: {"id":"chatcmpl-perf","object":"chat.completion.chunk","created":1,"model":"perf","choices":[{"index":0,"delta":{"content":" tok"},"logprobs":null,"finish_reason":null}]}` + "\n\n"

// Handler serves s at POST /v1/chat/completions and the model at GET
// /v1/models. Each measured chat request is recorded (see Record) and its
// index echoed in the IndexHeader response header; GET RecordsPath returns
// the records gathered since the last such call, as a JSON array, and
// forgets them.
func Handler(s Schedule) http.Handler {
	var recs recordStore
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"perf","max_model_len":1048576}]}`)
	})
	mux.HandleFunc("GET "+RecordsPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(recs.take())
	})
	usage := fmt.Sprintf(`data: {"id":"chatcmpl-perf","object":"chat.completion.chunk","created":1,"model":"perf","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\ndata: [DONE]\n\n",
		s.PromptTokens, s.Chunks, s.PromptTokens+s.Chunks)
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		began := time.Now()
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		start := time.Now()
		index, measured := RequestIndex(body)
		fl, _ := w.(http.Flusher)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		if measured {
			w.Header().Set(IndexHeader, strconv.Itoa(index))
		}
		w.WriteHeader(http.StatusOK)
		bw := bufio.NewWriterSize(w, 32<<10)
		for i := range s.Chunks {
			due := start.Add(s.TTFT + time.Duration(i)*s.Gap)
			if s.Gap > 0 || i == 0 {
				if d := time.Until(due); d > 0 {
					time.Sleep(d)
				}
			}
			bw.WriteString(contentEvent)
			if s.Gap > 0 || i == 0 || bw.Available() < len(contentEvent) {
				if i == 0 && measured {
					// The first byte of the response (its headers and the
					// first event go out in this one write): stamped just
					// before the write, so no client can have seen it earlier.
					recs.add(Record{Index: index, HandlerStartUnixNS: began.UnixNano(),
						DueUnixNS: due.UnixNano(), FirstWriteUnixNS: time.Now().UnixNano()})
				}
				if bw.Flush() != nil {
					return
				}
				if fl != nil {
					fl.Flush()
				}
			}
			if r.Context().Err() != nil {
				return
			}
		}
		bw.WriteString(usage)
		bw.Flush()
	})
	return mux
}

// Serve runs the server of Schedule s (read from ServerEnv) on a loopback
// port, prints "listening http://ADDR" on out, and serves until ctx ends or
// stdin closes (the parent process went away).
func Serve(ctx context.Context, spec string, out io.Writer) error {
	var s Schedule
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		return fmt.Errorf("perfbench: %s = %q: %w", ServerEnv, spec, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: Handler(s), ReadHeaderTimeout: time.Minute}
	fmt.Fprintf(out, "listening http://%s\n", ln.Addr())
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		io.Copy(io.Discard, os.Stdin) // returns when the parent closes our stdin
		cancel()
	}()
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}

// itoa is strconv.Itoa, for the benchmarks' sub-benchmark names.
func itoa(n int) string { return strconv.Itoa(n) }
