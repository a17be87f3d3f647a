package reporters_test

import (
	"os"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/reporters"
)

// readSeed reads the golden artifact the examples present.
func readSeed() *artifact.Report {
	f, err := os.Open("../testdata/seed-capacity-v4-reasoning.json")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	r, err := artifact.Read(f)
	if err != nil {
		panic(err)
	}
	return r
}

// Convert an artifact to the Go benchmark format, for benchstat: unit
// metadata, the run's identity as configuration, then one result whose
// iterations are the measured requests, each value rounded as go test
// prints it. The seed predates anvil_go; a run of today records the build
// of the module that measured it (anvil_go.run), configuration too. A
// BenchWriter writes the unit metadata once, then each report it is given
// (the configuration only when it changes).
func ExampleBenchWriter() {
	r := readSeed()
	version, revision := "v0.0.0-20261201221049-e02e9a91af51", "e02e9a91af51"
	r.AnvilGo = &artifact.Extension{Version: 1, Run: &artifact.RunSummary{SentRequests: 6, ModuleVersion: &version, VCSRevision: &revision}}
	if err := reporters.NewBenchWriter(os.Stdout).Write(r, ""); err != nil {
		panic(err)
	}
	// Output:
	// Unit ttft-p50-ms better=lower
	// Unit ttft-p95-ms better=lower
	// Unit ttfo-p50-ms better=lower
	// Unit tpot-ms better=lower
	// Unit decode-tok/s better=higher
	// Unit prefill-tok/s better=higher
	// Unit e2e-p50-ms better=lower
	// Unit output-tok/s better=higher
	// Unit cache-hit-% better=higher
	// Unit failed-req better=lower
	// Unit itl-p99-ms better=lower
	// Unit tokens/chunk better=higher
	// Unit failed-req assume=exact
	// Unit unsent-req better=lower
	// Unit unsent-req assume=exact
	// model: qwen38-swift15-ninfer-dflash2-c4-262k
	// engine: ninfer
	// gpu: rtx5090
	// protocol: capacity-v4-reasoning
	// workload: ctx=65536 served-ctx=262144 conc=1 max-tokens=8192 cache=unique prefix=0 thinking=default canaries=true
	// eligible: true
	// anvil-version: v0.0.0-20261201221049-e02e9a91af51
	// anvil-revision: e02e9a91af51
	//
	// BenchmarkCapacity/ctx=65536/conc=1 6 7.064243067e+09 ns/op 8953 ttft-p50-ms 10017 ttft-p95-ms 8016 ttfo-p50-ms 4.171 tpot-ms 232 decode-tok/s 7773 prefill-tok/s 9134 e2e-p50-ms 53.86 output-tok/s 33.33 cache-hit-% 0 failed-req
}

// Print the console summary of an artifact.
func ExampleWriteSummary() {
	if err := reporters.WriteSummary(os.Stdout, readSeed()); err != nil {
		panic(err)
	}
	// Output:
	// run benchmark-20261005T114224Z  2026-10-05T11:42:24Z .. 2026-10-05T11:43:06Z  wall 42385 ms
	// model qwen38-swift15-ninfer-dflash2-c4-262k  engine ninfer  gpu rtx5090  protocol capacity-v4-reasoning
	// workload ctx=65536 served-ctx=262144 conc=1 max-tokens=8192 cache=unique prefix=0 thinking=default canaries=true
	// requests 6  succeeded 6  failed 0  performance eligible true
	//
	//                metric   unit  n    p50      p95      p99    mean  mean_ci95_low  mean_ci95_high
	//                  TTFT     ms  6   8953    10017    10017    6933           3603           10264
	//                  TTFO     ms  6   8016     8157     8157    5454           2201            8707
	//                   E2E     ms  6   9134    10138    10138    7063           3733           10393
	//            generation     ms  6   1478     2072     2072    1609           1287            1931
	//                  TPOT     ms  6   4.17     4.62     4.62    4.26           4.08            4.44
	//                decode  tok/s  6    232      250      250     235            226             245
	//   prefill (effective)  tok/s  6   7773  1047830  1047830  208981        -124188          542150
	//         prompt tokens    tok  6  62328    62335    62335   62330          62328           62333
	//     completion tokens    tok  6    321      519      519     380            299             462
	// p99: descriptive-nearest-rank-only (100 samples recommended)
	//
	// throughput 53.9 output tok/s  output tokens 2283  content chunks/s -
	// prefix cache hit 33.3%
	// request canaries 6/6 passed
}
