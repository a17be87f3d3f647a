package probe

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// testBody is a probe's chat request body.
func testBody(k int) (client.Body, error) {
	enc, err := client.NewEncoder(client.ChatCompletions, &client.Request{Model: "m", MaxTokens: MaxTokens})
	if err != nil {
		return nil, err
	}
	b := &client.Buffer{}
	b.Set(enc.AppendBody(b.Reset(), []byte(Message(k))))
	return b, nil
}

// TestTraffic: against a server that answers in 100 ms, the probes leave
// at the Poisson draws of their seed's stream, each a request of one
// token; those in flight at Finish are cancelled, and the record counts
// every probe once, with the server's latency as its quantiles.
func TestTraffic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen atomic.Int32
		hc := wiretest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			raw, _ := io.ReadAll(r.Body)
			seen.Add(1)
			time.Sleep(100 * time.Millisecond)
			wiretest.WriteOKStream(w, raw)
		}))
		cl, err := client.New(client.Config{BaseURL: "http://pipe/v1", HTTPClient: hc, Timeout: time.Minute})
		require.NoError(t, err)
		const rate, seed, phase = 4.0, 11, 10 * time.Second
		closed := false
		p := New(cl, testBody, rate, seed, func() { closed = true })
		start := time.Now()
		record := p.Start(t.Context(), start)
		time.Sleep(phase)
		p.Finish()
		require.True(t, closed, "Finish releases the probes' connections")
		rep := &artifact.Report{}
		record(rep)
		pr := rep.AnvilGo.ProbeRequests
		require.NotNil(t, pr)

		rng := rand.New(rand.NewPCG(seed, SeedStream))
		sent, done := 0, 0
		for at := time.Duration(0); ; {
			at += time.Duration(rng.ExpFloat64() / rate * float64(time.Second))
			if at > phase {
				break
			}
			sent++
			if at+100*time.Millisecond <= phase {
				done++
			}
		}
		require.Greater(t, sent, 20)
		require.Equal(t, sent, pr.Sent)
		require.EqualValues(t, sent, seen.Load())
		require.Equal(t, done, pr.Succeeded)
		require.Equal(t, sent-done, pr.Cancelled)
		require.Zero(t, pr.Failed)
		require.Equal(t, 3*pr.Succeeded, pr.CompletionTokens)
		require.Equal(t, rate, pr.RateRPS)
		require.Equal(t, MaxTokens, pr.MaxTokens)
		require.Equal(t, &artifact.Quantiles{P50: 100, P90: 100, P99: 100, Max: 100}, pr.TTFOMS)
	})
}

// TestTrafficFailures: a probe whose body cannot be built or whose
// request fails counts as failed, and the first failure is kept.
func TestTrafficFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hc := wiretest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "busy", http.StatusServiceUnavailable)
		}))
		cl, err := client.New(client.Config{BaseURL: "http://pipe/v1", HTTPClient: hc, Timeout: time.Minute})
		require.NoError(t, err)
		p := New(cl, func(k int) (client.Body, error) {
			if k == 0 {
				return nil, errors.New("no body for probe 0")
			}
			return testBody(k)
		}, MaxRate, 1, nil)
		record := p.Start(context.Background(), time.Now())
		time.Sleep(2 * time.Second)
		p.Finish()
		rep := &artifact.Report{}
		record(rep)
		pr := rep.AnvilGo.ProbeRequests
		require.Positive(t, pr.Failed)
		require.Equal(t, pr.Sent, pr.Failed+pr.Cancelled)
		require.Equal(t, "no body for probe 0", *pr.FirstError)
		require.Nil(t, pr.TTFOMS)
	})
}
