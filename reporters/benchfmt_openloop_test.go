package reporters

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// openLoopVariant returns the seed report as an open-loop run of process
// at 12.5 req/s judged against an SLO of TTFT <= 9000 ms at 0.9.
func openLoopVariant(t *testing.T, process string, burstiness *float64) *artifact.Report {
	t.Helper()
	r := loadReport(t, seedPath)
	ttft := 9000.0
	r.AnvilGo = &artifact.Extension{
		Version: 1,
		Arrival: &artifact.Arrival{Process: process, RateRPS: 12.5, Burstiness: burstiness, MaxInFlight: 1},
		SLO: &artifact.SLOResult{TTFTMS: &ttft, Attainment: 0.9, MetRequests: 3, Attained: 0.5,
			GoodputRPS: 0.0070774, LatencyClock: "scheduled"},
	}
	return r
}

// TestBenchfmtOpenLoop: an open-loop run is named and identified by its
// arrival process and rate (and gamma burstiness), so benchstat never puts
// it beside a closed-loop run; an SLO run carries goodput-req/s (better:
// higher) and its SLO in the identity. The closed-loop seed's bytes stay
// those of testdata/seed.bench (TestBenchWriterSeedGolden), and a
// closed-loop report written after an open-loop one keeps its identity.
func TestBenchfmtOpenLoop(t *testing.T) {
	one, quarter := 1.0, 0.25
	poisson := openLoopVariant(t, "poisson", &one)
	gamma := openLoopVariant(t, "gamma", &quarter)
	closed := loadReport(t, seedPath)
	var buf bytes.Buffer
	require.NoError(t, writeBenchfmt(&buf, closed, poisson, gamma, closed))
	benchGolden(t, "openloop.bench", buf.Bytes())

	p := parseBench(t, buf.Bytes())
	require.Empty(t, p.errs)
	require.Len(t, p.results, 4)
	require.Equal(t, "Capacity/ctx=65536/conc=1/rate=12.5", p.results[1].Name.String())
	require.Equal(t, "ctx=65536 served-ctx=262144 conc=1 max-tokens=8192 cache=unique prefix=0 thinking=default canaries=true arrival=poisson rate=12.5 slo-ttft-ms=9000 slo-attainment=0.9",
		benchConfigMap(p.results[1])["workload"])
	require.Contains(t, benchConfigMap(p.results[2])["workload"], "arrival=gamma rate=12.5 burstiness=0.25 ")
	require.Equal(t, benchConfigMap(p.results[0]), benchConfigMap(p.results[3]), "the closed loop's identity is restored")
	require.NotContains(t, benchValueMap(p.results[0]), unitGoodput)
	require.Equal(t, 0.007077, benchValueMap(p.results[1])[unitGoodput], "0.0070774 as go test prints it")
	require.Equal(t, 1, p.units.GetBetter(unitGoodput))
}
