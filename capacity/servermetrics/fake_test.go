package servermetrics

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	fakeserver "github.com/anvilbench/anvil/fake_server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run drives srv closed-loop with workers clients of n streamed requests
// each and returns the usage completion tokens served and the mean time
// to the first output chunk.
func run(t *testing.T, srv *fakeserver.Server, workers, n int) (int, float64) {
	t.Helper()
	body := `{"stream":true,"stream_options":{"include_usage":true},"max_tokens":64,"messages":[{"role":"user","content":"hello there"}]}`
	var mu sync.Mutex
	tokens, firsts := 0, []time.Duration{}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range n {
				t0 := time.Now()
				resp, err := srv.Client().Post(srv.BaseURL()+"/chat/completions", "application/json", strings.NewReader(body))
				if !assert.NoError(t, err) {
					return
				}
				first := time.Duration(-1)
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					data, ok := strings.CutPrefix(sc.Text(), "data: ")
					if !ok || data == "[DONE]" {
						continue
					}
					var c struct {
						Choices []json.RawMessage
						Usage   *struct {
							CompletionTokens int `json:"completion_tokens"`
						}
					}
					assert.NoError(t, json.Unmarshal([]byte(data), &c))
					if len(c.Choices) > 0 && first < 0 {
						first = time.Since(t0)
					}
					mu.Lock()
					if c.Usage != nil {
						tokens += c.Usage.CompletionTokens
					}
					mu.Unlock()
				}
				resp.Body.Close()
				mu.Lock()
				firsts = append(firsts, first)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	var sum time.Duration
	for _, f := range firsts {
		sum += f
	}
	return tokens, float64(sum) / float64(len(firsts)) / float64(time.Millisecond)
}

// gauge returns the points of the one series named name.
func gauge(t *testing.T, m *artifact.ServerMetrics, name string) ([]float64, []float64) {
	t.Helper()
	for _, s := range m.Series {
		if s.Name == name {
			require.Equal(t, map[string]string{"engine": "0", "model_name": "fake-slots"}, s.Labels)
			return s.OffsetsMS, s.Values
		}
	}
	t.Fatalf("no series %s", name)
	return nil, nil
}

// TestSamplerAgainstFake: the sampler against the fake with 4 slots at
// concurrency 8: running and waiting read 4 and 4 while every client still
// sends, the generation-token cross-check is exact, and the server's mean
// TTFT is the client's (no network in memory, no time passes in a bubble).
func TestSamplerAgainstFake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const workers, perWorker, service = 8, 6, 100 * time.Millisecond
		cfg, err := fakeserver.Slots(4, service)
		require.NoError(t, err)
		srv := fakeserver.NewInMemory(cfg)
		defer srv.Close()
		u, err := EndpointURL(srv.BaseURL(), "")
		require.NoError(t, err)
		// The sampler's own connection: a transport of its own on the
		// fake's in-memory dialer.
		own := &http.Client{Transport: srv.Client().Transport.(*http.Transport).Clone()}
		s, err := Discover(t.Context(), Config{URL: u, Interval: 37 * time.Millisecond, Client: own})
		require.NoError(t, err)
		require.NotNil(t, s)
		require.Equal(t, string(engineVLLM), s.Engine())

		start := time.Now()
		s.Start(t.Context(), start)
		tokens, ttftMS := run(t, srv, workers, perWorker)
		duration := float64(time.Since(start)) / float64(time.Millisecond)
		m := s.Stop()
		require.Zero(t, m.Failed)
		require.Equal(t, "vllm", *m.Engine)

		steady := float64(2*perWorker-1) * float64(service/time.Millisecond)
		for _, name := range []string{"vllm:num_requests_running", "vllm:num_requests_waiting"} {
			at, vs := gauge(t, m, name)
			n := 0
			for i := range at {
				if at[i] > 0 && at[i] < steady {
					require.Equal(t, 4.0, vs[i], "%s at %v ms", name, at[i])
					n++
				}
			}
			require.Equal(t, int(steady/37), n, name)
		}

		m.Checks = check(m, runFacts{CompletionTokens: tokens, MaxTokens: 64,
			DurationMS: duration, ClientFirstTokenMeanMS: &ttftMS})
		g := m.Checks.GenerationTokens
		require.Equal(t, "exact", g.Verdict, "%+v", g)
		require.Equal(t, float64(workers*perWorker*cfg.AnswerTokens.Max), g.ServerIncrease)
		tt := m.Checks.TTFT
		require.Equal(t, float64(workers*perWorker), tt.ServerRequests)
		require.InDelta(t, 0, tt.NetworkAndClientMS, 1e-6, "%+v", tt)
	})
}

// TestSamplerNamesAnotherClient: requests the run did not send, served
// during its phase, make the generation-token check a named mismatch.
func TestSamplerNamesAnotherClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg, err := fakeserver.Slots(4, 100*time.Millisecond)
		require.NoError(t, err)
		srv := fakeserver.NewInMemory(cfg)
		defer srv.Close()
		own := &http.Client{Transport: srv.Client().Transport.(*http.Transport).Clone()}
		s, err := Discover(t.Context(), Config{URL: srv.URL + "/metrics", Interval: 37 * time.Millisecond, Client: own})
		require.NoError(t, err)
		start := time.Now()
		s.Start(t.Context(), start)
		var foreign int
		done := make(chan struct{})
		go func() {
			defer close(done)
			foreign, _ = run(t, srv, 1, 4) // someone else's requests
		}()
		tokens, _ := run(t, srv, 4, 4)
		<-done
		m := s.Stop()
		c := check(m, runFacts{CompletionTokens: tokens, MaxTokens: 64,
			DurationMS: float64(time.Since(start)) / float64(time.Millisecond)})
		g := c.GenerationTokens
		require.Equal(t, "mismatch", g.Verdict)
		require.Equal(t, float64(foreign), g.Difference)
		require.Contains(t, *g.Reason, "another client was using the server")
	})
}
