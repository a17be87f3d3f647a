//go:build unix

package perfbench

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

// BenchmarkOwnErrorPerAPI is BenchmarkOwnError's burst over each streamed
// API (Target.API), at c = 1 and 64: the client's first-content stamp
// minus the server's first write of the response, on one clock, against
// the same server, whose first write holds the API's opening events
// (Responses' response.created and output_item.added, Messages'
// message_start and content_block_start) and its first content event.
// Each iteration runs every API in turn, so that the machine's load moves
// them alike, and each run is followed by the minimal reader's against
// the same API's route. Reported per API: {api}-own-err-p50-ms and -p95-ms
// (medians over the iterations of each run's nearest rank), and
// {api}-minus-chat-p50-ms, the median over the iterations of the API's
// p50 minus chat's of the same iteration: what the dialect's own framing
// adds to the time to first token (the floor's own error,
// {api}-floor-own-err-p50-ms, is the same bytes read without decoding).
func BenchmarkOwnErrorPerAPI(b *testing.B) {
	base := startServer(b, Schedule{TTFT: ownTTFT, Gap: ownGap, Chunks: ownChunks, PromptTokens: 64})
	for _, c := range []int{1, 64} {
		b.Run("c="+itoa(c), func(b *testing.B) { ownErrorPerAPI(b, base, c) })
	}
}

func ownErrorPerAPI(b *testing.B, base string, c int) {
	if _, err := (capacity.Workload{Concurrency: c}).Resolved(); err != nil {
		b.Skipf("concurrency %d: %v", c, err)
	}
	w := capacity.Workload{Requests: max(2*c, 20), Concurrency: c, Warmup: c, ContextTokens: 64,
		SharedPrefixTokens: capacity.None, MaxTokens: ownChunks}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c, MaxIdleConns: c}}
	defer hc.CloseIdleConnections()
	floorBody := func(i int) []byte {
		return []byte(`{"model":"perf","stream":true,"max_tokens":20,"prompt":"\n# request ` + strconv.Itoa(i) + `: count"}`)
	}
	perRun := map[string][]float64{} // metric -> one value per iteration
	for b.Loop() {
		var chat float64
		for i, api := range streamedAPIs {
			t := capacity.Target{BaseURL: base, Model: "perf", MaxModelLen: 1 << 20, API: api}
			own := ownErrorRun(b, base, t, w).own
			p50 := nearestRank(own, 50)
			if i == 0 {
				chat = p50
			}
			perRun[api+"-own-err-p50-ms"] = append(perRun[api+"-own-err-p50-ms"], p50)
			perRun[api+"-own-err-p95-ms"] = append(perRun[api+"-own-err-p95-ms"], nearestRank(own, 95))
			perRun[api+"-minus-chat-p50-ms"] = append(perRun[api+"-minus-chat-p50-ms"], p50-chat)
			floor, err := floorOwnError(b, hc, base+framings[i].path[len("/v1"):], floorBody, w.Requests, c)
			if err != nil {
				b.Logf("the floor's run of %s failed: %v", api, err) // a loaded machine's dropped connection
				continue
			}
			perRun[api+"-floor-own-err-p50-ms"] = append(perRun[api+"-floor-own-err-p50-ms"], nearestRank(floor, 50))
		}
	}
	b.Logf("load average %s; own-err p50 per run: chat %.3f, responses %.3f, messages %.3f, completions %.3f",
		loadAverage(), perRun["chat-own-err-p50-ms"], perRun["responses-own-err-p50-ms"],
		perRun["messages-own-err-p50-ms"], perRun["completions-own-err-p50-ms"])
	for _, api := range streamedAPIs {
		for _, m := range []string{"-own-err-p50-ms", "-own-err-p95-ms", "-minus-chat-p50-ms", "-floor-own-err-p50-ms"} {
			if m == "-minus-chat-p50-ms" && api == "chat" {
				continue
			}
			require.NotEmpty(b, perRun[api+m], api+m)
			b.ReportMetric(median(perRun[api+m]), api+m)
		}
	}
}
