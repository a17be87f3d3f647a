package fakeserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// faultConfig is small() with a 64 KiB oversized event to keep tests fast.
func faultConfig() Config {
	c := small()
	c.Faults.OversizeBytes = 64 << 10
	return c
}

// TestFaults checks each fault's observable behaviour, as a client sees it
// and as the trace records it.
func TestFaults(t *testing.T) {
	tested := []Fault{faultEndless, faultVectorCount, faultVectorNaN, faultVectorDimension} // TestEmbeddingsFaults for the vector faults
	for _, tc := range []struct {
		fault Fault
		check func(t *testing.T, resp *http.Response, body []byte, readErr error, elapsed time.Duration, tr Trace)
	}{
		{faultHTTP429, func(t *testing.T, resp *http.Response, body []byte, _ error, _ time.Duration, tr Trace) {
			assert.Equal(t, 429, resp.StatusCode)
			assert.Equal(t, "1", resp.Header.Get("Retry-After"))
			assertErrorBody(t, body, "rate_limit_error")
			assert.Equal(t, endRejected, tr.End)
		}},
		{faultHTTP500, statusCheck(500, "server_error")},
		{faultHTTP503, statusCheck(503, "server_error")},
		{faultHTTP400, statusCheck(400, "invalid_request_error")},
		{faultDrop, func(t *testing.T, _ *http.Response, body []byte, readErr error, _ time.Duration, tr Trace) {
			require.ErrorIs(t, readErr, io.ErrUnexpectedEOF)
			d := decode(body)
			assert.False(t, d.done)
			assert.Empty(t, d.finish)
			assert.Equal(t, endDropped, tr.End)
			assert.Len(t, tr.Chunks, 3, "role chunk + 2 output chunks before the drop")
		}},
		{faultStall, func(t *testing.T, _ *http.Response, body []byte, readErr error, _ time.Duration, tr Trace) {
			require.NoError(t, readErr)
			assert.True(t, decode(body).done)
			// chunks[2] is the second output chunk; the next is written
			// exactly 30 s later, though the engine scheduled it earlier.
			gap := tr.Chunks[3].Written - tr.Chunks[2].Written
			assert.Equal(t, 30*time.Second, gap)
			assert.Less(t, tr.Chunks[3].Scheduled, tr.Chunks[3].Written)
		}},
		{faultSlowHeaders, func(t *testing.T, resp *http.Response, body []byte, readErr error, elapsed time.Duration, tr Trace) {
			require.NoError(t, readErr)
			assert.Equal(t, 200, resp.StatusCode)
			assert.Equal(t, 30*time.Second, tr.Headers)
			assert.GreaterOrEqual(t, elapsed, 30*time.Second)
			assert.True(t, decode(body).done)
		}},
		{faultMalformedJSON, func(t *testing.T, _ *http.Response, body []byte, readErr error, _ time.Duration, _ Trace) {
			require.NoError(t, readErr)
			d := decode(body)
			require.Len(t, d.bad, 1)
			assert.False(t, json.Valid([]byte(d.bad[0])))
			assert.True(t, d.done)
		}},
		{faultStreamError, func(t *testing.T, _ *http.Response, body []byte, readErr error, _ time.Duration, _ Trace) {
			require.NoError(t, readErr)
			d := decode(body)
			require.Len(t, d.bad, 1)
			assertErrorBody(t, []byte(d.bad[0]), "server_error")
			assert.Empty(t, d.finish)
			assert.True(t, d.done)
		}},
		{faultOversized, func(t *testing.T, _ *http.Response, body []byte, readErr error, _ time.Duration, tr Trace) {
			require.NoError(t, readErr)
			big := 0
			for _, data := range sseData(body) {
				big = max(big, len(data))
			}
			assert.Greater(t, big, 64<<10)
			assert.Equal(t, chunkOversized, tr.Chunks[3].Kind)
		}},
		{faultIgnoreMaxTokens, func(t *testing.T, _ *http.Response, body []byte, readErr error, _ time.Duration, tr Trace) {
			require.NoError(t, readErr)
			d := decode(body)
			assert.Equal(t, "stop", d.finish, "ends normally")
			assert.True(t, d.done)
			assert.Equal(t, 128, d.usage.Usage.CompletionTokens, "twice max_tokens 64")
			assert.Equal(t, 128, tr.CompletionTokens)
			assert.Equal(t, 64, tr.MaxTokens)
		}},
		{faultUsageTotal, func(t *testing.T, _ *http.Response, body []byte, readErr error, _ time.Duration, tr Trace) {
			require.NoError(t, readErr)
			u := decode(body).usage.Usage
			assert.Positive(t, u.CompletionTokens)
			assert.Equal(t, u.PromptTokens, u.TotalTokens, "total_tokens leaves the completion out")
			assert.Equal(t, tr.CompletionTokens, u.CompletionTokens)
		}},
		{faultReasoningOnly, func(t *testing.T, _ *http.Response, body []byte, readErr error, _ time.Duration, tr Trace) {
			require.NoError(t, readErr)
			d := decode(body)
			assert.Empty(t, d.content)
			assert.NotEmpty(t, d.reasoning)
			assert.True(t, d.done)
			assert.Equal(t, 0, tr.ContentTokens)
			assert.Equal(t, int64(-1), int64(tr.FirstContent))
		}},
		{faultWrongContentType, func(t *testing.T, resp *http.Response, body []byte, readErr error, _ time.Duration, _ Trace) {
			require.NoError(t, readErr)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			assert.True(t, decode(body).done)
		}},
		{faultEmptyBody, func(t *testing.T, resp *http.Response, body []byte, readErr error, _ time.Duration, _ Trace) {
			require.NoError(t, readErr)
			assert.Equal(t, 200, resp.StatusCode)
			assert.Equal(t, defaultContentType, resp.Header.Get("Content-Type"))
			assert.Empty(t, body)
		}},
		{faultOmitMarker, func(t *testing.T, _ *http.Response, body []byte, _ error, _ time.Duration, tr Trace) {
			assert.Equal(t, "code code code", decode(body).content)
			assert.Empty(t, tr.Marker)
		}},
		{faultForeignMarker, func(t *testing.T, _ *http.Response, body []byte, _ error, _ time.Duration, _ Trace) {
			assert.Equal(t, "ANVIL_REQ_1717_00005 code code code", decode(body).content)
		}},
		{faultLateMarker, func(t *testing.T, _ *http.Response, body []byte, _ error, _ time.Duration, tr Trace) {
			assert.Equal(t, "Answer: ANVIL_REQ_1717_00004 code code code", decode(body).content)
			assert.Equal(t, "ANVIL_REQ_1717_00004", tr.Marker)
		}},
		{faultExtraWords, func(t *testing.T, _ *http.Response, body []byte, _ error, _ time.Duration, _ Trace) {
			assert.Equal(t, "ANVIL_REQ_1717_00004 code code code and more", decode(body).content)
		}},
	} {
		tested = append(tested, tc.fault)
		t.Run(string(tc.fault), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := NewInMemory(faultConfig())
				defer srv.Close()
				start := time.Now()
				resp, body, err := post(t, srv, streamBody(goldenPrompt, 64), map[string]string{faultHeader: string(tc.fault)})
				elapsed := time.Since(start)
				synctest.Wait()
				tr, ok := srv.Trace(0)
				require.True(t, ok)
				require.True(t, tr.Done())
				assert.Equal(t, tc.fault, tr.Fault)
				tc.check(t, resp, body, err, elapsed, tr)
			})
		})
	}
	assert.ElementsMatch(t, Faults(), tested, "every fault has its case (endless: TestFaultEndless; vector_*: TestEmbeddingsFaults)")
}

func statusCheck(status int, typ string) func(*testing.T, *http.Response, []byte, error, time.Duration, Trace) {
	return func(t *testing.T, resp *http.Response, body []byte, _ error, _ time.Duration, tr Trace) {
		assert.Equal(t, status, resp.StatusCode)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		assertErrorBody(t, body, typ)
		assert.Equal(t, status, tr.Status)
		assert.Empty(t, tr.Chunks)
	}
}

func assertErrorBody(t *testing.T, body []byte, typ string) {
	t.Helper()
	var e struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &e), "%s", body)
	assert.NotEmpty(t, e.Error.Message)
	assert.Equal(t, typ, e.Error.Type)
}

// TestStallIsSilentWithKeepAlive: keep-alive comments cover queueing and
// prefill, never a faultStall pause, which stays 30 s of silence.
func TestStallIsSilentWithKeepAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := faultConfig()
		cfg.Dialect.KeepAlive = time.Second
		cfg.PrefillTokensPerSecond = 20 // 52 prompt tokens: 2.6 s of prefill
		srv := NewInMemory(cfg)
		defer srv.Close()
		_, body, err := post(t, srv, streamBody(goldenPrompt, 64), map[string]string{faultHeader: string(faultStall)})
		require.NoError(t, err)
		require.True(t, decode(body).done)
		synctest.Wait()
		tr, _ := srv.Trace(0)
		var kinds []string
		var gap time.Duration
		for i, c := range tr.Chunks {
			kinds = append(kinds, c.Kind)
			if i > 0 {
				gap = max(gap, c.Written-tr.Chunks[i-1].Written)
			}
		}
		require.Equal(t, []string{chunkComment, chunkComment}, kinds[:2],
			"keep-alives during the prefill")
		assert.Equal(t, 30*time.Second, gap, "the stall is the longest silence and has no keep-alive")
		assert.NotContains(t, kinds[3:], chunkComment)
	})
}

// TestFaultEndless reads an endless stream past max_tokens, then goes away;
// the server notices and records it.
func TestFaultEndless(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := NewInMemory(faultConfig())
		defer srv.Close()
		ctx, cancel := context.WithCancel(context.Background())
		b, err := json.Marshal(streamBody(goldenPrompt, 16))
		require.NoError(t, err)
		req, err := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/chat/completions", bytes.NewReader(b))
		require.NoError(t, err)
		req.Header.Set(faultHeader, string(faultEndless))
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		buf := make([]byte, 64<<10)
		var got []byte
		for strings.Count(string(got), `"content":" more"`) < 40 {
			n, err := resp.Body.Read(buf)
			require.NoError(t, err)
			got = append(got, buf[:n]...)
		}
		cancel()
		_, err = io.Copy(io.Discard, resp.Body)
		require.True(t, errors.Is(err, context.Canceled), "read after cancel: %v", err)
		resp.Body.Close()
		synctest.Wait()
		tr, _ := srv.Trace(0)
		assert.Equal(t, endClientGone, tr.End)
		assert.Greater(t, tr.CompletionTokens, 16+40)
		assert.NotContains(t, string(got), "[DONE]")
	})
}

// TestFaultSelection checks ByIndex, header precedence and seeded
// probabilities (the same faults for the same seed, whatever the server).
func TestFaultSelection(t *testing.T) {
	run := func(cfg Config, n int, hdr map[int]string) []Fault {
		var got []Fault
		synctest.Test(t, func(t *testing.T) {
			srv := NewInMemory(cfg)
			defer srv.Close()
			for i := range n {
				h := map[string]string{}
				if f, ok := hdr[i]; ok {
					h[faultHeader] = f
				}
				_, _, _ = post(t, srv, streamBody("hi", 8), h)
			}
			synctest.Wait()
			for _, tr := range srv.Traces() {
				got = append(got, tr.Fault)
			}
		})
		return got
	}
	cfg := faultConfig()
	cfg.Faults.ByIndex = map[int]Fault{1: faultHTTP503, 2: faultDrop}
	assert.Equal(t, []Fault{"", faultHTTP503, faultHTTP429},
		run(cfg, 3, map[int]string{2: string(faultHTTP429)}))

	cfg = faultConfig()
	cfg.Faults.Probability = map[Fault]float64{faultHTTP500: 0.25, faultHTTP429: 0.25}
	a, b := run(cfg, 40, nil), run(cfg, 40, nil)
	assert.Equal(t, a, b)
	count := map[Fault]int{}
	for _, f := range a {
		count[f]++
	}
	assert.Len(t, count, 3, "both faults and clean requests occur: %v", count)
	cfg.Seed++
	assert.NotEqual(t, a, run(cfg, 40, nil), "another seed draws other faults")
}

// TestFaultDocListsEveryFault: the Fault type's documentation, where a user
// learns the names, describes every fault Faults lists and no other.
func TestFaultDocListsEveryFault(t *testing.T) {
	src, err := os.ReadFile("faults.go")
	require.NoError(t, err)
	doc, _, ok := strings.Cut(string(src), "\ntype Fault string")
	require.True(t, ok)
	var documented []Fault
	for _, line := range strings.Split(doc, "\n") {
		if rest, ok := strings.CutPrefix(line, "//\t"); ok && rest != "" && rest[0] != ' ' {
			documented = append(documented, Fault(strings.Fields(rest)[0]))
		}
	}
	assert.ElementsMatch(t, Faults(), documented)
}
