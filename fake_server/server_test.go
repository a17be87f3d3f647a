package fakeserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoopback drives the real socket with a plain client: a streamed
// completion, then the trace endpoint, whose JSON equals Server.Trace.
func TestLoopback(t *testing.T) {
	t.Parallel()
	srv := New(Fast())
	defer srv.Close()
	require.True(t, strings.HasPrefix(srv.URL, "http://127.0.0.1:"), srv.URL)

	require.Equal(t, srv.URL+"/v1", srv.BaseURL())
	req, err := http.NewRequest("POST", srv.BaseURL()+"/chat/completions",
		strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"exactly 2 words code"}]}`))
	require.NoError(t, err)
	req.Header.Set(requestIDHeader, "loop-1")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	d := decode(body)
	assert.Equal(t, "code code", d.content)
	assert.True(t, d.done)

	get := func(path string) (int, []byte) {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, b
	}
	// The handler records its end just after the last write; poll briefly.
	var tr Trace
	for tr.End == "" {
		status, b := get("/fake/trace?request_id=loop-1")
		require.Equal(t, 200, status, "%s", b)
		require.NoError(t, json.Unmarshal(b, &tr))
	}
	want, ok := srv.Trace(0)
	require.True(t, ok)
	if diff := cmp.Diff(want, tr); diff != "" {
		t.Errorf("/fake/trace differs from Trace (-Trace +endpoint):\n%s", diff)
	}
	status, b := get("/fake/trace")
	require.Equal(t, 200, status)
	var all []Trace
	require.NoError(t, json.Unmarshal(b, &all))
	assert.Len(t, all, 1)
	status, _ = get("/fake/trace?index=7")
	assert.Equal(t, 404, status)
	status, _ = get("/fake/trace?index=x")
	assert.Equal(t, 400, status)
}

// TestParallelClients shares one server between concurrent requests on
// both transports; every request gets its own complete trace.
func TestParallelClients(t *testing.T) {
	t.Parallel()
	srv := New(Fast())
	defer srv.Close()
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			client := srv.Client()
			if i%2 == 0 {
				client = http.DefaultClient
			}
			resp, err := client.Post(srv.URL+"/v1/chat/completions", "application/json",
				strings.NewReader(`{"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`))
			if !assert.NoError(t, err) {
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			assert.NoError(t, err)
			assert.True(t, decode(b).done)
		})
	}
	wg.Wait()
	srv.Close()
	traces := srv.Traces()
	require.Len(t, traces, 12)
	for i, tr := range traces {
		assert.Equal(t, i, tr.Index)
		assert.Equal(t, endComplete, tr.End)
		assert.Positive(t, tr.CompletionTokens)
	}
}

// TestCloseEndsStreams: Close ends a stream that would never end, inside a
// synctest bubble, leaving no goroutine behind.
func TestCloseEndsStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := NewInMemory(Fast())
		req, err := http.NewRequest("POST", srv.URL+"/v1/chat/completions",
			strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		require.NoError(t, err)
		req.Header.Set(faultHeader, string(faultEndless))
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		buf := make([]byte, 1024)
		_, err = resp.Body.Read(buf)
		require.NoError(t, err)
		srv.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		assert.Error(t, err, "the stream was cut, not finished")
		resp.Body.Close()
		tr, _ := srv.Trace(0)
		assert.Equal(t, endClientGone, tr.End)
		// A closed server refuses new connections.
		_, err = srv.Client().Get(srv.URL + "/v1/models")
		assert.Error(t, err)
	})
}

// TestMaxTraces keeps only the last requests' traces.
func TestMaxTraces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := Fast()
		cfg.MaxTraces = 2
		srv := NewInMemory(cfg)
		defer srv.Close()
		for i := range 5 {
			_, _, err := post(t, srv, streamBody("hi", 4), map[string]string{requestIDHeader: fmt.Sprint("r", i)})
			require.NoError(t, err)
		}
		synctest.Wait()
		var idx []int
		for _, tr := range srv.Traces() {
			idx = append(idx, tr.Index)
		}
		assert.Equal(t, []int{3, 4}, idx)
		_, ok := srv.Trace(2)
		assert.False(t, ok)
		tr, ok := srv.TraceByRequestID("r4")
		assert.True(t, ok)
		assert.Equal(t, 4, tr.Index)
	})
}
