package capacity

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/client"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// TestZeroWorkloadAgainstTheDefaultFake: the zero Workload against the
// embedded fake's default profile (reasoning, a few hundred tokens of
// thought before the answer) succeeds: defaultMaxTokens leaves room to
// think. referenceMaxTokens, the reference tool's 64, does not, and says
// why.
func TestZeroWorkloadAgainstTheDefaultFake(t *testing.T) {
	skipUnderRace(t, "its 100-odd answers of a few hundred tokens")
	cfg, err := fakeserver.Profile("reasoning")
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		srv := fakeserver.NewInMemory(cfg)
		defer srv.Close()
		tg := Target{BaseURL: srv.BaseURL(), HTTPClient: srv.Client()}
		rep, err := Run(t.Context(), tg, Workload{})
		require.NoError(t, err)
		require.Equal(t, defaultRequests, rep.Requests)
		require.Equal(t, defaultRequests, rep.Completed, "failures: %+v", rep.Failures)
		require.True(t, rep.PerformanceEligible)
		require.Equal(t, defaultMaxTokens, rep.MaxTokens)

		ref, err := Run(t.Context(), tg, Workload{Requests: 2, Concurrency: 2, MaxTokens: referenceMaxTokens})
		require.NoError(t, err)
		require.Zero(t, ref.Completed)
		require.Len(t, ref.Failures, 2)
		for _, f := range ref.Failures {
			require.Equal(t, client.ErrorTypeNoVisibleContent, f.ErrorType)
			require.Contains(t, f.ErrorMessage, "raise Workload.MaxTokens")
		}
	})
}
