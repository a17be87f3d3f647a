package anviltest_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/merge"
	"github.com/anvilbench/anvil/capacity/session"
	"github.com/anvilbench/anvil/capacity/traffic"
	fakeserver "github.com/anvilbench/anvil/fake_server"
	"github.com/anvilbench/anvil/reporters"
)

// apis are the APIs a run speaks (Target.API).
var apis = []string{"chat", "responses", "messages", "completions", "embeddings"}

// streamed reports whether api's answers stream tokens (every API but
// embeddings).
func streamed(api string) bool { return api != "embeddings" }

// featureRun runs w over api against a fresh fake (fast profile, its
// /metrics sampled) in the calling bubble.
func featureRun(t *testing.T, api string, w capacity.Workload) (*artifact.Report, error) {
	t.Helper()
	srv := fakeserver.NewInMemory(fakeserver.Fast())
	t.Cleanup(srv.Close)
	target := capacity.Target{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client(), API: api, ClockDomainID: "test-clock"}
	rep, err := capacity.Run(t.Context(), target, w)
	synctest.Wait()
	return rep, err
}

// featureWorkload is the small closed loop of the feature tests.
func featureWorkload() capacity.Workload {
	return capacity.Workload{Requests: 6, Concurrency: 2, ContextTokens: 512, MaxTokens: 32, Seed: 5}
}

// TestAPIFeatures runs, over each API against the fake, what a run of chat
// gets: the audit and the server's metrics in the artifact, the reports
// (summary, HTML, the .bench line), shards merged into one artifact, and
// compare, which matches runs of one API and refuses two APIs unless
// asked across them. Embeddings have no token times: their time-to-token
// metrics are absent (not zero) wherever a report shows them, and the
// artifact says why.
func TestAPIFeatures(t *testing.T) {
	for _, api := range apis {
		t.Run(api, func(t *testing.T) {
			var rep, again *artifact.Report
			synctest.Test(t, func(t *testing.T) {
				var err error
				rep, err = featureRun(t, api, featureWorkload())
				require.NoError(t, err)
				again, err = featureRun(t, api, featureWorkload())
				require.NoError(t, err)
			})
			require.Empty(t, rep.Failures)
			require.Equal(t, api, artifact.APIOf(rep))

			// The audit and the server's metrics.
			ext := rep.AnvilGo
			require.NotNil(t, ext.Audit, "audit")
			require.NotEmpty(t, ext.Audit.Verdict, "audit verdict")
			require.NotNil(t, ext.ServerMetrics, "server metrics")
			require.Positive(t, ext.ServerMetrics.Samples, "server metrics samples")

			// The time-to-token metrics: present for a streamed API,
			// absent with the reason for embeddings.
			m := rep.Metrics
			require.Equal(t, streamed(api), m.TTFT.P50 != nil, "ttft_p50_ms")
			require.Equal(t, streamed(api), m.TPOT.P50 != nil, "tpot_p50_ms")
			require.Equal(t, streamed(api), ext.Run.AbsentTimings == nil, "absent_timings: %v", ext.Run.AbsentTimings)

			// The reports: the summary's workload line and the HTML run
			// header name an API other than chat, the default.
			var summary, html bytes.Buffer
			require.NoError(t, reporters.WriteSummary(&summary, rep))
			require.NoError(t, reporters.WriteHTML(&html, rep))
			named := strings.Contains(summary.String(), "workload api="+api+" ")
			require.Equal(t, api != "chat", named, "the summary's workload line names the API")
			named = strings.Contains(html.String(), "<dt>api</dt><dd>"+api+"</dd>")
			require.Equal(t, api != "chat", named, "the HTML run header names the API")
			if !streamed(api) {
				require.Contains(t, summary.String(), *ext.Run.AbsentTimings, "the summary says why there are no token times")
			}
			res, err := reporters.BenchResult(rep, "BenchmarkCapacity")
			require.NoError(t, err)
			units := map[string]bool{}
			for _, v := range res.Values {
				units[v.Unit] = true
			}
			require.Equal(t, streamed(api), units["ttft-p50-ms"], "ttft-p50-ms on the .bench line")
			require.True(t, units["e2e-p50-ms"], "e2e-p50-ms on the .bench line")
			var workload string
			for _, c := range res.Config {
				if c.Key == "workload" {
					workload = string(c.Value)
				}
			}
			require.Equal(t, api != "chat", strings.HasPrefix(workload, "api="+api+" "), "the .bench workload key %q names the API", workload)

			// Compare: runs of one API match; chat and another API do not,
			// unless asked across APIs.
			c, err := reporters.Compare([]*artifact.Report{rep}, []*artifact.Report{again})
			require.NoError(t, err)
			require.NotEmpty(t, c.Metrics, "the metrics compared")
			if api != "chat" {
				var chat *artifact.Report
				synctest.Test(t, func(t *testing.T) {
					chat, err = featureRun(t, "chat", featureWorkload())
					require.NoError(t, err)
				})
				_, err = reporters.Compare([]*artifact.Report{chat}, []*artifact.Report{rep})
				require.Error(t, err, "chat against %s", api)
				across, err := reporters.CompareAcrossAPIs([]*artifact.Report{chat}, []*artifact.Report{rep})
				if !streamed(api) {
					require.ErrorContains(t, err, "an embeddings run has no output tokens, so it compares only with embeddings")
					return
				}
				require.NoError(t, err)
				require.Equal(t, [2]string{"chat", api}, across.APIs)
				require.NotEmpty(t, across.ByDefinition)
			}
		})
	}
}

// TestAPIShards splits one workload over each API into two shards run at
// once against one fake; their artifacts merge into one of the API with
// every request.
func TestAPIShards(t *testing.T) {
	for _, api := range apis {
		t.Run(api, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := fakeserver.NewInMemory(fakeserver.Fast())
				defer srv.Close()
				target := capacity.Target{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client(), API: api, ClockDomainID: "test-clock"}
				w := featureWorkload()
				w.Rate = 20
				at := time.Now().Add(3 * time.Second)
				files := make([]merge.Artifact, 2)
				var wg sync.WaitGroup
				for k := range files {
					wg.Go(func() {
						sw := w
						sw.Shard = capacity.Shard{Index: k, Count: 2, StartAt: at}
						rep, err := capacity.Run(t.Context(), target, sw)
						require.NoError(t, err)
						var b bytes.Buffer
						_, err = rep.WriteTo(&b)
						require.NoError(t, err)
						files[k] = merge.Artifact{Name: "shard-" + api, Data: b.Bytes()}
					})
				}
				wg.Wait()
				merged, err := merge.Shards(files...)
				require.NoError(t, err)
				require.Equal(t, api, artifact.APIOf(merged))
				require.Equal(t, w.Requests, merged.Requests)
				require.Empty(t, merged.Failures)
				require.Equal(t, streamed(api), merged.Metrics.TTFT.P50 != nil, "ttft_p50_ms")
				require.Equal(t, streamed(api), merged.AnvilGo.Run.AbsentTimings == nil, "absent_timings")
			})
		})
	}
}

// TestAPISessions runs synthetic sessions over each API. The chat-shaped
// APIs (chat, Responses, Messages) send each turn its history; embeddings
// embed it, one vector a message. Completions sends one bare prompt, no
// conversation: every turn fails as a runner error naming the API, and
// nothing is sent.
func TestAPISessions(t *testing.T) {
	spec, err := session.ParseSpec("turns=3,user=100,output=64,think=1s")
	require.NoError(t, err)
	for _, api := range apis {
		t.Run(api, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, err := traffic.Synthetic(spec, 2, traffic.SessionOptions{Users: 2, Salt: "apis"})
				require.NoError(t, err)
				rep, err := featureRun(t, api, s.Workload(capacity.Workload{}))
				require.NoError(t, err)
				require.NotNil(t, rep.AnvilGo.Workload)
				require.Equal(t, artifact.WorkloadSessions, rep.AnvilGo.Workload.Kind)
				if api == "completions" {
					require.Zero(t, rep.Completed)
					require.NotEmpty(t, rep.Failures)
					require.Zero(t, rep.AnvilGo.Run.SentRequests)
					for _, f := range rep.Failures {
						require.Equal(t, artifact.FailureRunnerError, f.FailureClass)
						require.Contains(t, f.ErrorMessage, `the completions API (Target.API "completions") sends one bare prompt, not a conversation`)
					}
					return
				}
				require.Empty(t, rep.Failures)
				require.Equal(t, 6, rep.Completed)
				// A later turn carries the earlier ones: more prompt tokens.
				prompts := map[string][]int{} // session -> counted prompt tokens by turn
				for _, d := range rep.AnvilGo.Requests {
					require.NotNil(t, d.Session, "request %d", d.RequestIndex)
					require.NotNil(t, d.CountedPromptTokens, "request %d", d.RequestIndex)
					require.Len(t, prompts[*d.Session], *d.Turn-1, "session %s turns in order", *d.Session)
					prompts[*d.Session] = append(prompts[*d.Session], *d.CountedPromptTokens)
				}
				require.Len(t, prompts, 2)
				for id, p := range prompts {
					require.Len(t, p, 3, id)
					require.IsIncreasing(t, p, "prompt tokens of session %s's turns", id)
				}
			})
		})
	}
}
