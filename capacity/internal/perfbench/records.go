package perfbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// RecordsPath is the path of the server's records (GET, under the base URL's
// host, e.g. http://127.0.0.1:PORT/perfbench/records).
const RecordsPath = "/perfbench/records"

// IndexHeader is the response header in which the server echoes the index
// it read from a measured request's prompt.
const IndexHeader = "Perfbench-Request-Index"

// maxRecords bounds the records the server keeps between two fetches; the
// ones beyond it are dropped (a benchmark that never fetches them holds the
// server's memory bounded).
const maxRecords = 1 << 20

// A Record is what the server saw of one measured chat request, in
// nanoseconds of the wall clock (time.Now().UnixNano(), CLOCK_REALTIME),
// which every process on the machine reads alike.
type Record struct {
	// Index is the request's index, read from its prompt (RequestIndex).
	Index int `json:"index"`
	// HandlerStartUnixNS is the instant the handler began, before it read
	// the request body.
	HandlerStartUnixNS int64 `json:"handler_start_unix_ns"`
	// DueUnixNS is the instant the first event was due: the body read,
	// plus Schedule.TTFT.
	DueUnixNS int64 `json:"due_unix_ns"`
	// FirstWriteUnixNS is the instant immediately before the write that
	// carries the response's first byte (its headers and the first event
	// together): no client can have received the first event earlier.
	FirstWriteUnixNS int64 `json:"first_write_unix_ns"`
	// FirstWriteDoneUnixNS is the instant immediately after that write
	// returned: the bytes left the server between the two, and a stamp
	// of their arrival can lie anywhere from the first on.
	FirstWriteDoneUnixNS int64 `json:"first_write_done_unix_ns"`
}

// recordStore holds the records of the requests served since the last take.
type recordStore struct {
	mu   sync.Mutex
	recs []Record
}

func (s *recordStore) add(r Record) {
	s.mu.Lock()
	if len(s.recs) < maxRecords {
		s.recs = append(s.recs, r)
	}
	s.mu.Unlock()
}

// take returns the records and forgets them.
func (s *recordStore) take() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	recs := s.recs
	s.recs = nil
	if recs == nil {
		recs = []Record{}
	}
	return recs
}

// promptTail starts the closing instruction of a measured request's prompt
// (capacity/PROTOCOL.md#prompts: "\n# request {i}: ..."), as it appears
// inside the JSON-encoded body, its line end escaped. A warm-up request's
// ("\n# warmup request {i}: ") does not match.
const promptTail = `\n# request `

// RequestIndex returns the index of the measured request whose JSON body is
// body: the number of the last "\n# request {i}: " of its prompt, the
// closing instruction every measured prompt of anvil-go ends with. It is
// what matches the server's records to the rows of the client's artifact
// (request_index), without anything added to the requests. ok is false for
// a body without one (a warm-up request, another client's body).
func RequestIndex(body []byte) (index int, ok bool) {
	at := bytes.LastIndex(body, []byte(promptTail))
	if at < 0 {
		return 0, false
	}
	rest := body[at+len(promptTail):]
	n, digits := 0, 0
	for ; digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9'; digits++ {
		if digits == 9 {
			return 0, false // no index has ten digits
		}
		n = 10*n + int(rest[digits]-'0')
	}
	if digits == 0 || digits == len(rest) || rest[digits] != ':' {
		return 0, false
	}
	return n, true
}

// FetchRecords returns the records the server at baseURL (a chat base URL
// such as http://127.0.0.1:PORT/v1) gathered since the last fetch.
func FetchRecords(ctx context.Context, baseURL string) ([]Record, error) {
	root, _ := strings.CutSuffix(strings.TrimRight(baseURL, "/"), "/v1")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, root+RecordsPath, nil)
	if err != nil {
		return nil, fmt.Errorf("perfbench: records of %s: %w", baseURL, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("perfbench: records of %s: %w", baseURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("perfbench: records of %s: HTTP %s", baseURL, resp.Status)
	}
	var recs []Record
	if err := json.NewDecoder(resp.Body).Decode(&recs); err != nil {
		return nil, fmt.Errorf("perfbench: records of %s: %w", baseURL, err)
	}
	return recs, nil
}
