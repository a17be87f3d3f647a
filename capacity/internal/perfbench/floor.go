package perfbench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// FloorBuffer is the minimal reader's line buffer: 64 KiB, a bufio.Scanner's
// largest token by default.
const FloorBuffer = 64 << 10

// dataPrefix starts every data line of an SSE stream.
var dataPrefix = []byte("data: ")

// Floor is the minimal reader, the floor of the client's CPU per chunk:
// net/http and a 64 KiB bufio line scan that counts the "data: " lines,
// nothing else (no decoding, no clock, no bookkeeping). It sends requests
// POST requests of body to url through hc, at most concurrency at once,
// and returns the data lines of all the responses.
func Floor(ctx context.Context, hc *http.Client, url string, body []byte, requests, concurrency int) (int, error) {
	lines, _, err := floor(ctx, hc, url, func(int) []byte { return body }, requests, concurrency)
	return lines, err
}

// FloorFirstLines is Floor sending body(i) as request i, and returns
// besides the lines the instant each request's first data line was read
// (time.Now right after the scan that returned it): the minimal reader's
// first stamp, the floor of a client's own time-to-first-token error.
func FloorFirstLines(ctx context.Context, hc *http.Client, url string, body func(i int) []byte, requests, concurrency int) (int, []time.Time, error) {
	return floor(ctx, hc, url, body, requests, concurrency)
}

func floor(ctx context.Context, hc *http.Client, url string, body func(int) []byte, requests, concurrency int) (int, []time.Time, error) {
	if requests < 1 || concurrency < 1 {
		return 0, nil, fmt.Errorf("perfbench: Floor: requests = %d and concurrency = %d must be at least 1", requests, concurrency)
	}
	firsts := make([]time.Time, requests)
	var (
		mu       sync.Mutex
		lines    int
		firstErr error
		wg       sync.WaitGroup
	)
	next := make(chan int, requests)
	for i := range requests {
		next <- i
	}
	close(next)
	for range min(concurrency, requests) {
		wg.Go(func() {
			buf := make([]byte, FloorBuffer)
			for i := range next {
				n, err := floorOne(ctx, hc, url, body(i), buf, &firsts[i])
				mu.Lock()
				lines += n
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return lines, firsts, firstErr
}

// floorOne sends one request and counts the data lines of its response,
// noting when the first was read.
func floorOne(ctx context.Context, hc *http.Client, url string, body, buf []byte, first *time.Time) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("perfbench: Floor: POST %s: HTTP %s", url, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(buf, len(buf))
	n := 0
	for sc.Scan() {
		if bytes.HasPrefix(sc.Bytes(), dataPrefix) {
			if n == 0 {
				*first = time.Now()
			}
			n++
		}
	}
	io.Copy(io.Discard, resp.Body) // nothing normally: the connection is kept
	return n, sc.Err()
}
