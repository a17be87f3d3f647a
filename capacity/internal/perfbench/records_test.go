package perfbench

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

// TestRequestIndex reads the index from the closing instruction of a
// measured prompt inside a JSON body, and refuses what is not one.
func TestRequestIndex(t *testing.T) {
	for _, tc := range []struct {
		body  string
		index int
		ok    bool
	}{
		{`{"messages":[{"content":"x\n# request 0: summarize the above in one line."}]}`, 0, true},
		{`{"messages":[{"content":"# request-specific prefix for request 9\n...\n# request 1234: begin your answer with ANVIL_REQ_0_01234, then reply"}]}`, 1234, true},
		{`"\n# request 3: a\n# request 7: b"`, 7, true}, // the last one: the closing instruction
		{`"\n# warmup request 3: summarize"`, 0, false},
		{`"\n# request : summarize"`, 0, false},
		{`"\n# request 12"`, 0, false},
		{`"\n# request 12x: summarize"`, 0, false},
		{`"\n# request 1234567890: summarize"`, 0, false},
		{`{}`, 0, false},
		{"\"\n# request 5: raw newline, not JSON-escaped\"", 0, false},
	} {
		index, ok := RequestIndex([]byte(tc.body))
		require.Equal(t, tc.ok, ok, "%s", tc.body)
		require.Equal(t, tc.index, index, "%s", tc.body)
	}
}

// TestRecordsMatchTheClientsRows: a run of the client against the handler
// leaves one record per measured request, under the request's index, and
// none of its warm-up requests; the response echoes the index; the
// records are forgotten once fetched. The instants are in order.
func TestRecordsMatchTheClientsRows(t *testing.T) {
	srv := httptest.NewServer(Handler(Schedule{Chunks: 3, PromptTokens: 64}))
	defer srv.Close()
	base := srv.URL + "/v1"
	rep, err := capacity.Run(t.Context(), capacity.Target{BaseURL: base, Model: "perf", MaxModelLen: 1 << 20},
		capacity.Workload{Requests: 6, Concurrency: 3, Warmup: 2, ContextTokens: 64, SharedPrefixTokens: capacity.None, MaxTokens: 3})
	require.NoError(t, err)
	require.Empty(t, rep.Failures)
	recs, err := FetchRecords(t.Context(), base)
	require.NoError(t, err)
	var got []int
	for _, r := range recs {
		got = append(got, r.Index)
		require.LessOrEqual(t, r.HandlerStartUnixNS, r.DueUnixNS)
		require.LessOrEqual(t, r.DueUnixNS, r.FirstWriteUnixNS)
		require.LessOrEqual(t, r.FirstWriteUnixNS, r.FirstWriteDoneUnixNS)
	}
	slices.Sort(got)
	var want []int
	for _, row := range rep.RequestTimings {
		want = append(want, row.RequestIndex)
	}
	slices.Sort(want)
	require.Equal(t, []int{0, 1, 2, 3, 4, 5}, want)
	require.Equal(t, want, got, "one record per measured request, none of the warm-up")

	again, err := FetchRecords(t.Context(), base)
	require.NoError(t, err)
	require.Empty(t, again, "fetched records are forgotten")

	resp, err := http.Post(base+"/chat/completions", "application/json", strings.NewReader(`{"messages":[{"content":"\n# request 41: summarize"}]}`))
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, "41", resp.Header.Get(IndexHeader))
}

// TestFetchRecordsNamesTheServer: a server without records is an error
// naming it.
func TestFetchRecordsNamesTheServer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	_, err := FetchRecords(t.Context(), srv.URL+"/v1")
	require.ErrorContains(t, err, srv.URL)
	require.ErrorContains(t, err, "404")
}

// TestFloorCountsDataLines: the minimal reader counts every data line of
// every response (content, usage, [DONE]) and nothing else.
func TestFloorCountsDataLines(t *testing.T) {
	srv := httptest.NewServer(Handler(Schedule{Chunks: 5}))
	defer srv.Close()
	lines, err := Floor(t.Context(), srv.Client(), srv.URL+"/v1/chat/completions", []byte(`{}`), 7, 3)
	require.NoError(t, err)
	require.Equal(t, 7*(5+2), lines)

	_, err = Floor(t.Context(), srv.Client(), srv.URL+"/nowhere", []byte(`{}`), 1, 1)
	require.ErrorContains(t, err, "404")
	_, err = Floor(t.Context(), srv.Client(), srv.URL, nil, 0, 1)
	require.ErrorContains(t, err, "requests = 0")
}

// FuzzRequestIndex: whatever the body, an index found is the number that
// follows the last closing instruction, printed back the same.
func FuzzRequestIndex(f *testing.F) {
	f.Add([]byte(`"\n# request 17: summarize"`))
	f.Add([]byte(`"\n# request 0017: x"`))
	f.Add([]byte(`\n# request \n# request 3:`))
	f.Fuzz(func(t *testing.T, body []byte) {
		index, ok := RequestIndex(body)
		if !ok {
			return
		}
		s := string(body)
		at := strings.LastIndex(s, promptTail)
		require.GreaterOrEqual(t, at, 0)
		digits := strings.TrimLeft(s[at+len(promptTail):], "0123456789")
		num := s[at+len(promptTail) : len(s)-len(digits)]
		require.True(t, strings.HasPrefix(digits, ":"))
		n, err := strconv.Atoi(num)
		require.NoError(t, err)
		require.Equal(t, n, index)
	})
}
