package anviltest

import (
	"errors"
	"testing"
	"time"

	"github.com/anvilbench/anvil/capacity"
	"github.com/stretchr/testify/require"
)

// TestMetricsIntervalEnv: ANVIL_METRICS_INTERVAL outside 10ms..1h, 0s
// included (a set variable never silently means the default), is an
// error naming the variable, the value and the range; inside it, the
// Target's interval.
func TestMetricsIntervalEnv(t *testing.T) {
	for _, bad := range []string{"0s", "0", "5ms", "2h", "-1s"} {
		_, err := readEnvironment(env{envMetricsInterval: bad}.get)
		var fe *capacity.FieldError
		require.True(t, errors.As(err, &fe), "%s: %v", bad, err)
		require.Equal(t, envMetricsInterval, fe.Field)
		require.ErrorContains(t, err, `ANVIL_METRICS_INTERVAL = "`+bad+`"`)
		require.ErrorContains(t, err, "a duration in 10ms..1h0m0s", bad)
	}
	for v, want := range map[string]time.Duration{"10ms": 10 * time.Millisecond, "5s": 5 * time.Second, "1h": time.Hour} {
		e, err := readEnvironment(env{envMetricsInterval: v}.get)
		require.NoError(t, err)
		require.Equal(t, want, e.metricsInterval)
	}
}
