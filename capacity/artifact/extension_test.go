package artifact

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fullExtension sets every member and key of the anvil_go object.
func fullExtension() *Extension {
	return &Extension{
		Version: extensionVersion,
		Run: &RunSummary{SentRequests: 3, NeverSentRequests: 1, Interrupted: true,
			Warmup: new("steady"), WarmupRequests: new(57), WarmupMS: new(6240.5), WarmupSteady: new(true)},
		Arrival: &Arrival{Process: "gamma", RateRPS: 12.5, Burstiness: new(0.25), Seed: 42,
			OfferedRPS: new(12.4), AchievedRPS: new(11.9), MaxInFlight: 8},
		SLO: &SLOResult{TTFTMS: new(500.0), TPOTMS: new(50.0), Attainment: 0.9, MetRequests: 2,
			Attained: 0.5, GoodputRPS: 1.0, LatencyClock: "scheduled"},
		Search: &SearchProbe{Kind: "rate", Probe: 3, Value: 12.5, Repeat: new(1)},
		Steady: &Steady{Found: true, BinMS: 1000, Bins: 60, Load: "in_flight", Target: new(8.0), Achieved: new(7.96),
			StartMS: new(4000.0), EndMS: new(55000.0), CompletionsZ: new(-0.42), TTFTZ: new(1.13),
			Requests: new(1020), Succeeded: new(1019), TTFTP50MS: new(50.5), TTFTP95MS: new(61.0), TTFOP50MS: new(40.0),
			TPOTP50MS: new(3.5), E2EP50MS: new(400.0), DecodeTokSP50: new(285.7), PrefillTokSP50: new(81000.0),
			OutputTokS: new(2000.5), CompletionsPerS: new(20.0)},
		ChunkTiming: &ChunkTiming{ITLMS: Quantiles{P50: 4, P90: 4.5, P99: 80, P999: 80, Max: 81.25},
			Gaps: 297, Exact: true, Stalls: 27, StallRule: StallRule{Relative: 10, FloorMS: 50},
			TokensPerChunkMean: new(2.0), Distribution: &GapDistribution{ExactNS: []int64{0, 4000000, 4000001, 80000000}}},
		PromptSizing: &PromptSizing{Method: "exact", Source: new("tokenize"), TokenizePath: new("/tokenize"),
			CharsPerToken: 3.41, TemplateTokens: new(52), Tolerance: 0.02, MaxRelativeError: new(1.75), CountedRequests: 3,
			CountedOverPlanned: new(2.75), OffPlanRequests: 2, UnsizableRequests: 1,
			Warning: new("exact sizing missed the plan: the server counted 2 of 2 prompts more than 2% off their plan")},
		ContextWindow: &ContextWindow{Tokens: 16384, Source: "Target.MaxModelLen", Advertised: new(4096),
			AdvertisedSource: new("/api/ps"), TruncationWindow: 4096, Note: new("Target.MaxModelLen 16384 is above the window the server advertises")},
		Connections: &Connections{Prewarmed: 8, Retried: 1, KeptAliveClosed: 1, ReuseDisabled: true},
		Shard: &Shard{Index: 1, Count: 3, StartAtUnixNS: 1767225600000000000, Host: "load-1",
			ClockDomainID: new("cluster-chrony"), PlanFingerprint: "sha256:" + strings.Repeat("ab", 32)},
		Shards: &ShardSet{Count: 2, StartAtUnixNS: 1767225600000000000, PlanFingerprint: "sha256:" + strings.Repeat("cd", 32),
			Artifacts: []ShardRecord{
				{Index: 0, Host: "load-0", StartedAtUnixNS: 1767225600000100000, FinishedAtUnixNS: 1767225610000000000, SHA256: "sha256:" + strings.Repeat("01", 32)},
				{Index: 1, Host: "load-1", StartedAtUnixNS: 1767225600000200000, FinishedAtUnixNS: 1767225611000000000, SHA256: "sha256:" + strings.Repeat("02", 32)},
			}},
		Requests: []RequestDetail{
			{RequestIndex: 0, Outcome: OutcomeSuccess, ScheduledMS: new(0.0), SentMS: new(0.0), QueueMS: new(0.0),
				EndMS: new(420.5), FirstOutputMS: new(80.0), FirstContentMS: new(120.0),
				ScheduledTTFTMS: new(120.0), ScheduledE2EMS: new(420.5),
				Phases: &Phases{GotConnMS: 0.01, WroteRequestMS: new(0.05), FirstByteMS: new(79.0), FirstEventMS: new(79.5), Reused: true},
				ITLMS:  &Quantiles{P50: 4, P90: 4, P99: 80, Max: 80}, OutputChunks: 100, Stalls: 9, TokensPerChunk: new(2.0),
				PlannedPromptTokens: 4096, CountedPromptTokens: new(4091),
				ServerTimings: &ServerTimings{CacheN: new(0), PromptN: new(4091), PromptMS: new(75.5), PredictedN: new(100), PredictedMS: new(300.25)}},
			{RequestIndex: 1, Outcome: "http_error", ScheduledMS: new(80.0), SentMS: new(95.0), QueueMS: new(15.0), EndMS: new(96.0),
				Phases: &Phases{ConnectMS: new(0.4), GotConnMS: 0.4, Retried: true,
					FailedAttempt: &FailedAttempt{GotConnMS: 0.01, Reused: true, EndedMS: 0.02}},
				PlannedPromptTokens: 40, CountedPromptTokens: new(60), LeastPromptTokens: new(60)},
			{RequestIndex: 2, Outcome: OutcomeNeverSent, ScheduledMS: new(160.0), PlannedPromptTokens: 4096},
		},
	}
}

// TestExtensionGolden pins the anvil_go object as written (sorted keys,
// optional members present because set) and its round trip.
func TestExtensionGolden(t *testing.T) {
	back := extensionGolden(t, fullExtension(), "anvil_go.golden.json")
	require.Equal(t, 1, back.AnvilGo.Request(1).RequestIndex)
	require.Nil(t, back.AnvilGo.Request(7))
}

// extensionGolden writes a synthetic report carrying ext, pins its bytes
// to testdata/golden (rewritten with -update), reads them back and checks
// the round trip byte for byte and field for field; it returns the
// report read back.
func extensionGolden(t *testing.T, ext *Extension, golden string) *Report {
	t.Helper()
	r := syntheticReport()
	require.NoError(t, r.Recompute())
	r.AnvilGo = ext
	var buf bytes.Buffer
	require.NoError(t, write(&buf, r))
	path := filepath.Join("testdata", golden)
	if *update {
		require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to create it")
	require.Empty(t, cmp.Diff(string(want), buf.String()))

	back, err := Read(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	var again bytes.Buffer
	require.NoError(t, write(&again, back))
	require.Equal(t, buf.String(), again.String(), "read and written back unchanged")
	require.Empty(t, cmp.Diff(r.AnvilGo, back.AnvilGo, cmp.AllowUnexported(shape{}, ChunkTiming{}),
		cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".shape" }, cmp.Ignore())))
	return back
}

// TestExtensionOptionalMembers: a Report built without the extension
// writes no anvil_go key (the v1 bytes are unchanged); an extension with
// only some members writes only those, plus version and requests.
func TestExtensionOptionalMembers(t *testing.T) {
	r := syntheticReport()
	require.NoError(t, r.Recompute())
	var plain bytes.Buffer
	require.NoError(t, write(&plain, r))
	require.NotContains(t, plain.String(), `"anvil_go"`)

	r.AnvilGo = &Extension{Version: extensionVersion, Run: &RunSummary{SentRequests: 4}}
	var buf bytes.Buffer
	require.NoError(t, write(&buf, r))
	got := generic(t, buf.Bytes()).(map[string]any)["anvil_go"]
	require.Equal(t, []string{"requests", "run", "version"}, sortedKeys(got))
	// Removing the object gives back the plain document byte for byte.
	r.AnvilGo = nil
	var again bytes.Buffer
	require.NoError(t, write(&again, r))
	require.Equal(t, plain.String(), again.String())
}

// TestExtensionUnknownMembersSurvive: members and keys a newer writer adds
// to anvil_go are kept verbatim on round trip.
func TestExtensionUnknownMembersSurvive(t *testing.T) {
	r := syntheticReport()
	require.NoError(t, r.Recompute())
	r.AnvilGo = fullExtension()
	var buf bytes.Buffer
	require.NoError(t, write(&buf, r))
	doc := strings.Replace(buf.String(), `"anvil_go": {`, `"anvil_go": {"future_member": {"x": [1, 2.50]}, `, 1)
	doc = strings.Replace(doc, `"request_index": 2`, `"request_index": 2, "future_key": "kept"`, 1)
	back, err := Read(strings.NewReader(doc))
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, write(&out, back))
	ext := generic(t, out.Bytes()).(map[string]any)["anvil_go"].(map[string]any)
	require.Equal(t, map[string]any{"x": []any{json.Number("1"), json.Number("2.50")}}, ext["future_member"], "number literals kept")
	require.Equal(t, "kept", ext["requests"].([]any)[2].(map[string]any)["future_key"])
}

// TestExtensionTypeErrors: a wrong value inside anvil_go is refused with
// its path.
func TestExtensionTypeErrors(t *testing.T) {
	r := syntheticReport()
	require.NoError(t, r.Recompute())
	r.AnvilGo = fullExtension()
	var buf bytes.Buffer
	require.NoError(t, write(&buf, r))
	for _, tc := range []struct{ from, to, path string }{
		{`"sent_requests": 3`, `"sent_requests": "3"`, "anvil_go.run.sent_requests"},
		{`"stalls": 27`, `"stalls": 2.5`, "anvil_go.chunk_timing.stalls"},
		{`"output_chunks": 100`, `"output_chunks": null`, "anvil_go.requests[0].output_chunks"},
	} {
		doc := strings.Replace(buf.String(), tc.from, tc.to, 1)
		require.NotEqual(t, buf.String(), doc, tc.from)
		_, err := Read(strings.NewReader(doc))
		var fe *pathError
		require.ErrorAs(t, err, &fe, tc.path)
		require.Equal(t, tc.path, fe.Path)
	}
}

// TestReportExtension: a report without anvil_go gets an empty one of the
// version this module writes; one that has it keeps it.
func TestReportExtension(t *testing.T) {
	var r Report
	x := r.Extension()
	require.Same(t, r.AnvilGo, x)
	require.Equal(t, 1, x.Version)
	x.Run = &RunSummary{SentRequests: 3}
	require.Same(t, x, r.Extension(), "an existing extension is kept")
	require.Equal(t, 3, r.Extension().Run.SentRequests)
}
