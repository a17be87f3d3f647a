package fakeserver

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// timing is what a client measures of one stream.
type timing struct {
	ttft, end time.Duration
	tokens    int
}

// concurrent sends c identical streamed requests at the same instant and
// measures each one's time to first content and time to the end.
func concurrent(t *testing.T, srv *Server, c int, body string) []timing {
	t.Helper()
	out := make([]timing, c)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range c {
		wg.Go(func() {
			resp, err := srv.Client().Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if !assert.NoError(t, err) {
				return
			}
			defer resp.Body.Close()
			out[i].ttft = -1
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				data, ok := strings.CutPrefix(sc.Text(), "data: ")
				if !ok || data == "[DONE]" {
					continue
				}
				var d streamDelta
				if !assert.NoError(t, json.Unmarshal([]byte(data), &d)) {
					return
				}
				if len(d.Choices) > 0 && d.Choices[0].Delta.Content != "" && out[i].ttft < 0 {
					out[i].ttft = time.Since(start)
				}
				if d.Usage != nil {
					out[i].tokens = d.Usage.CompletionTokens
				}
			}
			out[i].end = time.Since(start)
		})
	}
	wg.Wait()
	return out
}

// TestSlotsKnee: with n slots and c requests at once, the TTFTs are
// exactly floor(k/n)*service + SlotPrefill for queue positions k, so the
// knee of a TTFT SLO search is exactly at concurrency n.
func TestSlotsKnee(t *testing.T) {
	const n, service = 4, 300 * time.Millisecond
	prefill := 150 * time.Millisecond // service - 15 * (service / 30)
	for _, c := range []int{1, n - 1, n, n + 1, 2*n + 1} {
		t.Run(fmt.Sprint("concurrency ", c), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg, err := Slots(n, service)
				require.NoError(t, err)
				require.Equal(t, prefill, cfg.SlotPrefill)
				require.Equal(t, 10*time.Millisecond, cfg.DecodeStep)
				srv := NewInMemory(cfg)
				defer srv.Close()
				got := concurrent(t, srv, c, `{"stream":true,"stream_options":{"include_usage":true},"max_tokens":64,"messages":[{"role":"user","content":"`+strings.Repeat("long prompt ", 200)+`"}]}`)
				var want []timing
				for k := range c {
					wait := time.Duration(k/n) * service
					want = append(want, timing{ttft: wait + prefill, end: wait + service, tokens: slotsAnswerTokens})
				}
				slices.SortFunc(got, func(a, b timing) int { return int(a.ttft - b.ttft) })
				if diff := cmp.Diff(want, got, cmp.AllowUnexported(timing{})); diff != "" {
					t.Errorf("client timings by queue position (-want +got):\n%s", diff)
				}
				synctest.Wait()
				var queued []time.Duration
				for _, tr := range srv.Traces() {
					queued = append(queued, tr.Queued)
					assert.Equal(t, tr.Queued+prefill, tr.PrefillDone, "the prefill takes exactly SlotPrefill")
				}
				slices.Sort(queued)
				for k, q := range queued {
					assert.Equal(t, time.Duration(k/n)*service, q, "queue position %d", k)
				}
			})
		})
	}
}

// TestSlotsIndependentOfPrompt: a slot's TTFT does not depend on the
// prompt length or the prefix cache.
func TestSlotsIndependentOfPrompt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg, err := Slots(1, 30*time.Millisecond)
		require.NoError(t, err)
		srv := NewInMemory(cfg)
		defer srv.Close()
		for _, words := range []int{1, 1000, 1000} { // the third is a cache hit
			got := concurrent(t, srv, 1, `{"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"`+strings.Repeat("x ", words)+`"}]}`)
			assert.Equal(t, 15*time.Millisecond, got[0].ttft, "%d words", words)
			assert.Equal(t, 30*time.Millisecond, got[0].end, "%d words", words)
		}
		synctest.Wait()
		tr, _ := srv.Trace(2)
		assert.Positive(t, tr.CachedTokens)
	})
}

func TestSlotsInvalid(t *testing.T) {
	for _, tc := range []struct {
		n       int
		service time.Duration
		want    string
	}{
		{0, time.Second, "fakeserver: Slots n = 0: want >= 1"},
		{2, 29, "fakeserver: Slots service = 29ns: want >= 30ns"},
	} {
		_, err := Slots(tc.n, tc.service)
		var ce *ConfigError
		require.True(t, errors.As(err, &ce), "%v", err)
		assert.Equal(t, tc.want, err.Error())
	}
}
