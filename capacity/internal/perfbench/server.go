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
	"strings"
	"time"
)

// ServerEnv is the environment variable that makes the test binary serve
// instead of testing: its value is the Schedule as JSON.
const ServerEnv = "ANVIL_PERFBENCH_SERVER"

// Schedule is what the server sends for every request: after TTFT
// (measured from the moment the request body has been read), Chunks content
// events, one every Gap (Gap 0: as fast as the connection takes them), each
// carrying one token, then the API's usage and end (a chat request's
// usage chunk and data: [DONE]). Events are due
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

// A framing is one API's stream around the schedule's content events:
// head before the first (its opening events), content each, and tail
// after the last, from the prompt and completion tokens (the usage and
// the end). When counted is set, content's sequence number is the
// event's: the number at counted in content (its first byte, which is
// left out) is written as the head's events' count plus the event's
// index, as a Responses server counts its events.
type framing struct {
	path    string
	head    string
	content string
	counted int
	tail    func(prompt, completion int) string
}

// responsesContent is the Responses framing's content event, its
// sequence_number the byte at responsesCounter.
const responsesContent = "event: response.output_text.delta\n" + `data: {"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_perf","output_index":0,"content_index":0,"delta":" tok","logprobs":[]}` + "\n\n"

// writeContent writes content event i of f.
func (f *framing) writeContent(bw *bufio.Writer, i int) {
	if f.counted == 0 {
		bw.WriteString(f.content)
		return
	}
	var n [20]byte
	bw.WriteString(f.content[:f.counted])
	bw.Write(strconv.AppendInt(n[:0], int64(2+i), 10))
	bw.WriteString(f.content[f.counted+1:])
}

// framings are the streamed APIs the server answers, each as its
// owner's servers write it (capacity/PROTOCOL.md#apis): chat
// completions as vLLM, Responses and Messages as their reference, one
// content event a token.
var framings = []framing{
	{path: "/v1/chat/completions", content: contentEvent, tail: func(p, c int) string {
		return fmt.Sprintf(`data: {"id":"chatcmpl-perf","object":"chat.completion.chunk","created":1,"model":"perf","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\ndata: [DONE]\n\n", p, c, p+c)
	}},
	{path: "/v1/completions",
		content: `data: {"id":"cmpl-perf","object":"text_completion","created":1,"model":"perf","choices":[{"index":0,"text":" tok","logprobs":null,"finish_reason":null}]}` + "\n\n",
		tail: func(p, c int) string {
			return `data: {"id":"cmpl-perf","object":"text_completion","created":1,"model":"perf","choices":[{"index":0,"text":"","logprobs":null,"finish_reason":"length"}]}` + "\n\n" +
				fmt.Sprintf(`data: {"id":"cmpl-perf","object":"text_completion","created":1,"model":"perf","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\ndata: [DONE]\n\n", p, c, p+c)
		}},
	{path: "/v1/responses",
		head: "event: response.created\n" + `data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_perf","object":"response","created_at":1,"status":"in_progress","model":"perf","output":[]}}` + "\n\n" +
			"event: response.output_item.added\n" + `data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_perf","type":"message","status":"in_progress","role":"assistant","content":[]}}` + "\n\n",
		content: responsesContent, counted: strings.Index(responsesContent, `"sequence_number":`) + len(`"sequence_number":`),
		tail: func(p, c int) string {
			return "event: response.completed\n" + fmt.Sprintf(`data: {"type":"response.completed","sequence_number":%d,"response":{"id":"resp_perf","object":"response","created_at":1,"status":"completed","model":"perf","output":[],"usage":{"input_tokens":%d,"input_tokens_details":{"cached_tokens":0},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":%d}}}`, 2+c, p, c, p+c) + "\n\n"
		}},
	{path: "/v1/messages",
		head: "event: message_start\n" + `data: {"type":"message_start","message":{"id":"msg_perf","type":"message","role":"assistant","model":"perf","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":64,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}` + "\n\n" +
			"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n",
		content: "event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" tok"}}` + "\n\n",
		tail: func(p, c int) string {
			return "event: content_block_stop\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n" +
				"event: message_delta\n" + fmt.Sprintf(`data: {"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":%d}}`, c) + "\n\n" +
				"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"
		}},
}

// Handler serves s at POST /v1/chat/completions (and in their own
// framing at /v1/completions, /v1/responses and /v1/messages) and the
// model at GET /v1/models. Each measured request is recorded (see
// Record) and its index echoed in the IndexHeader response header; GET
// RecordsPath returns the records gathered since the last such call, as
// a JSON array, and forgets them. Messages' message_start reports 64
// input tokens: s.PromptTokens must be 64 for its usage to agree.
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
	for _, f := range framings {
		tail := f.tail(s.PromptTokens, s.Chunks)
		mux.HandleFunc("POST "+f.path, func(w http.ResponseWriter, r *http.Request) { serveStream(w, r, s, &recs, f, tail) })
	}
	return mux
}

// serveStream answers one request with s's events in framing f.
func serveStream(w http.ResponseWriter, r *http.Request, s Schedule, recs *recordStore, f framing, tail string) {
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
	bw.WriteString(f.head)
	for i := range s.Chunks {
		due := start.Add(s.TTFT + time.Duration(i)*s.Gap)
		if s.Gap > 0 || i == 0 {
			if d := time.Until(due); d > 0 {
				time.Sleep(d)
			}
		}
		f.writeContent(bw, i)
		if s.Gap > 0 || i == 0 || bw.Available() < len(f.content)+20 {
			// The first byte of the response (its headers and the first
			// event go out in this one write) is stamped just before the
			// write, so no client can have seen it earlier, and just
			// after, when it is on its way.
			before := time.Now()
			if bw.Flush() != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
			if i == 0 && measured {
				recs.add(Record{Index: index, HandlerStartUnixNS: began.UnixNano(), DueUnixNS: due.UnixNano(),
					FirstWriteUnixNS: before.UnixNano(), FirstWriteDoneUnixNS: time.Now().UnixNano()})
			}
		}
		if r.Context().Err() != nil {
			return
		}
	}
	bw.WriteString(tail)
	bw.Flush()
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
