package servermetrics

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRunWaitBounded: at an interval of an hour, a /metrics that stops
// answering delays Discover, Prime and the end of the run (Finish) by
// exactly maxRunWait each, not by a quarter of the interval; the samples
// in the phase wait their own timeout, itself at most maxRunWait by
// default.
func TestRunWaitBounded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		interval time.Duration
		timeout  time.Duration // Config.Timeout; 0: the default
		want     time.Duration // each hung GET on the run's goroutine
	}{
		{"1h default timeout", time.Hour, 0, maxRunWait},
		{"1h timeout 20m", time.Hour, 20 * time.Minute, maxRunWait},
		{"1m", time.Minute, 0, maxRunWait},
		{"1s", time.Second, 0, 250 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var hang atomic.Bool
				srv := &counterServer{}
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if hang.Load() {
						<-r.Context().Done()
						return
					}
					srv.ServeHTTP(w, r)
				})
				cfg := Config{URL: "http://h/metrics", Client: handlerClient(h), Interval: tc.interval, Timeout: tc.timeout, Explicit: true}
				s, err := Discover(t.Context(), cfg)
				require.NoError(t, err)
				require.LessOrEqual(t, s.cfg.Timeout, max(tc.timeout, maxRunWait), "the default timeout")

				hang.Store(true)
				t0 := time.Now()
				_, err = Discover(t.Context(), cfg)
				require.ErrorIs(t, err, ErrNoEndpoint)
				require.Equal(t, tc.want, time.Since(t0), "Discover waited")

				t0 = time.Now()
				s.Prime(t.Context())
				require.Equal(t, tc.want, time.Since(t0), "Prime waited")

				start := time.Now()
				s.Start(t.Context(), start)
				time.Sleep(time.Millisecond) // the loop's first GET hangs too
				t0 = time.Now()
				m := s.Stop()
				require.Equal(t, tc.want, time.Since(t0), "the run's end waited")
				require.Equal(t, 0, m.Samples)
				require.Equal(t, 2, m.Failed, "Prime and the last sample; the loop's GET, cut by Finish, is not a failure")
				require.Contains(t, *m.LastError, "context deadline exceeded")
			})
		})
	}
}

// TestSampleFailingHalfWay: a body that breaks off (a line that is not
// the format, a body over the bound, a connection cut) after samples
// that parsed records none of them: the sample failed as a whole, and
// the series it would have added are not kept.
func TestSampleFailingHalfWay(t *testing.T) {
	good := "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\"} 3\n"
	for name, body := range map[string]func(call int) io.Reader{
		"bad line": func(call int) io.Reader {
			return strings.NewReader(good + fmt.Sprintf("vllm:num_requests_waiting{engine=\"%d\"} 1\nvllm:kv_cache_usage_perc 0.5 junk\n", call))
		},
		"too large": func(call int) io.Reader {
			return io.MultiReader(strings.NewReader(good+fmt.Sprintf("vllm:num_requests_waiting{engine=\"%d\"} 1\n", call)),
				strings.NewReader(strings.Repeat("# x\n", maxBodyBytes/4)))
		},
		"cut": func(call int) io.Reader {
			return io.MultiReader(strings.NewReader(good+fmt.Sprintf("vllm:num_requests_waiting{engine=\"%d\"} 1\nvllm:kv_cache", call)),
				errReader{io.ErrUnexpectedEOF})
		},
	} {
		t.Run(name, func(t *testing.T) {
			calls := 0
			client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				calls++
				b := io.Reader(strings.NewReader(good))
				if calls > 2 { // Discover's and Prime's answer
					b = body(calls)
				}
				return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(b), Request: r}, nil
			})}
			s, err := Discover(t.Context(), Config{URL: "http://h/metrics", Client: client})
			require.NoError(t, err)
			s.Prime(t.Context())
			require.True(t, s.primed)
			want := map[string]string{"bad line": "line 4: expected integer as timestamp", "too large": "body over", "cut": "unexpected EOF"}
			for range 3 {
				require.False(t, s.sampleAt(t.Context(), time.Second))
			}
			require.Equal(t, 1, s.ok)
			require.Equal(t, 3, s.failed)
			require.ErrorContains(t, s.last, want[name])
			require.Len(t, s.st.byKey, 1, "only the primed series")
			require.Empty(t, s.st.dropped)
			series := s.st.members()
			require.Len(t, series, 1)
			require.Equal(t, []float64{3}, series[0].Values, "Prime's value, nothing of the failed samples")
		})
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
