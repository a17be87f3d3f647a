package capacity

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// escapeHeavy is a failure message of exactly wiretest.MaxErrorMessageRunes
// code points, every one of which takes a two-byte JSON escape (quote,
// backslash, newline, tab, carriage return, backspace, form feed): the
// longest message Failure.SetErrorMessage keeps whole.
func escapeHeavy() string {
	const pattern = "\"\\\n\t\r\b\f"
	var b strings.Builder
	for n := 0; n < wiretest.MaxErrorMessageRunes; n++ {
		b.WriteByte(pattern[n%len(pattern)])
	}
	return b.String()
}

// largestReport is the biggest artifact the bounds allow: every one of the
// maximum number of requests failed after a response arrived, so each
// failure row carries a full timing row (with both checks), response
// metadata and a message at its cap. (A failure row is larger than a successful
// row, so all-failed is the worst case.)
func largestReport(t testing.TB) *artifact.Report {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "seed-capacity-v4-reasoning.json"))
	require.NoError(t, err)
	defer f.Close()
	seed, err := artifact.Read(f)
	require.NoError(t, err)
	r := &artifact.Report{
		Schema: artifact.Schema, RunID: seed.RunID, StartedAt: seed.StartedAt, FinishedAt: seed.FinishedAt,
		StartedAtUnixNS: seed.StartedAtUnixNS, FinishedAtUnixNS: seed.FinishedAtUnixNS,
		TimestampPrecision: seed.TimestampPrecision, WallClockMS: 3.6e9, BaseURL: strings.Repeat("h", 2048),
		Model: seed.Model, Engine: seed.Engine, GPU: seed.GPU,
		Requests: maxRequests, Concurrency: maxConcurrency, MaxTokens: maxMaxTokens, ContextSeed: 1 << 62,
		MaxContextTokens: new(maxContextTokens), ContextDistribution: map[int]int{16000: 2180, 32768: 3840, 65536: 3040, 131072: 890, 262144: 50},
		SharedPrefixTokens: maxSharedPrefixTokens, PromptCacheMode: "unique", RequestCanaries: true,
		ResponseWords: maxResponseWords, ControlledOutputPolicy: "strict", ServeFlags: seed.ServeFlags,
		Sampling: seed.Sampling, Failed: maxRequests, ResponsesReceived: maxRequests,
		TimingMethodology: seed.TimingMethodology,
	}
	var whole artifact.Failure
	whole.SetErrorMessage(escapeHeavy())
	msg := whole.ErrorMessage
	require.False(t, whole.ErrorMessageTruncated)
	require.Equal(t, wiretest.MaxErrorMessageRunes, utf8.RuneCountInString(msg))
	row := seed.RequestTimings[0]
	for i := range maxRequests {
		row := row
		row.RequestIndex = i
		row.PlannedContextTokens = 262144
		row.ControlledOutput = &artifact.ControlledOutputCheck{RequestedWords: maxResponseWords, ObservedCodeWords: maxResponseWords - 1,
			ObservedExtraWords: 12345, CaptureComplete: true, ExactAdherence: new(false), Policy: "strict"}
		r.Failures = append(r.Failures, artifact.Failure{
			RequestIndex: i, PlannedContextTokens: 262144, FailureClass: artifact.FailureControlledOutput,
			ErrorType: client.ErrorTypeControlledOutput, ErrorMessage: msg, ErrorMessageTruncated: true,
			ResponseReceived: true, ElapsedMS: 3599999.123456789, HTTPStatus: new(200),
			ResponseTiming: &row,
			ResponseMetadata: &artifact.ResponseMetadata{OutputTokenSource: artifact.SourceUsage,
				ContentChunks: maxMaxTokens, ReasoningChunks: maxMaxTokens, FinishReasons: []string{"length"},
				StreamTerminalObserved: true, Usage: &artifact.Usage{PromptTokens: new(maxContextTokens),
					CompletionTokens: new(maxMaxTokens), TotalTokens: new(maxContextTokens + maxMaxTokens)}},
		})
	}
	require.NoError(t, r.Recompute())
	return r
}

func TestLargestArtifactFitsReader(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("writes a 100 MB artifact; runs without -short and -race")
	}
	r := largestReport(t)
	path := filepath.Join(t.TempDir(), "largest.json")
	require.NoError(t, r.WriteFile(path))
	info, err := os.Stat(path)
	require.NoError(t, err)
	t.Logf("largest artifact: %d bytes (%.1f%% of the %d-byte limit)", info.Size(),
		100*float64(info.Size())/artifact.MaxBytes, artifact.MaxBytes)
	require.Less(t, info.Size(), int64(artifact.MaxBytes))

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	back, err := artifact.Read(f)
	require.NoError(t, err)
	require.Len(t, back.Failures, maxRequests)
	require.Equal(t, r.Failures[maxRequests-1].ErrorMessage, back.Failures[maxRequests-1].ErrorMessage)
	// Full structural comparison of a sample (cmp over all of them is slow);
	// the byte comparison below covers every row.
	sample := func(fs []artifact.Failure) []artifact.Failure {
		return []artifact.Failure{fs[0], fs[maxRequests/2], fs[maxRequests-1]}
	}
	if diff := cmp.Diff(sample(r.Failures), sample(back.Failures), cmpopts.IgnoreUnexported(artifact.Failure{}, artifact.TimingRow{},
		artifact.CanaryCheck{}, artifact.ControlledOutputCheck{}, artifact.ResponseMetadata{}, artifact.Usage{})); diff != "" {
		t.Fatalf("failures differ after the round trip:\n%s", diff)
	}
	again, err := back.MarshalJSON()
	require.NoError(t, err)
	written, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(append(again, '\n'), written), "read -> write reproduces the bytes")
}

// TestOverLimitRefused: a report past the reader's limit (here the largest
// one with every check repeated at the failure level, which Failure's
// contract rules out) is refused by the writer instead of producing a
// file Read would reject; the target path is left untouched.
func TestOverLimitRefused(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds a 100 MB artifact; runs without -short and -race")
	}
	r := largestReport(t)
	for i := range r.Failures {
		f := &r.Failures[i]
		f.RequestCanary, f.ControlledOutput = f.ResponseTiming.RequestCanary, f.ResponseTiming.ControlledOutput
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "too-large.json")
	err := r.WriteFile(path)
	require.ErrorContains(t, err, "exceeds the 104857600-byte (100 MiB) reader limit")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "neither the target nor a temporary file exists")
}

// BenchmarkLargestArtifact reads and encodes the largest artifact the
// bounds allow.
func BenchmarkLargestArtifact(b *testing.B) {
	r := largestReport(b)
	var buf bytes.Buffer
	if _, err := r.WriteTo(&buf); err != nil {
		b.Fatal(err)
	}
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(buf.Len()))
		for b.Loop() {
			if _, err := artifact.Read(bytes.NewReader(buf.Bytes())); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(buf.Len()))
		for b.Loop() {
			if _, err := r.WriteTo(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
}
