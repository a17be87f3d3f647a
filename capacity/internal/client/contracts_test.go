package client

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

func TestCanaryMarker(t *testing.T) {
	require.Equal(t, "ANVIL_REQ_1717_00000", CanaryMarker(1717, 0))
	require.Equal(t, "ANVIL_REQ_1717_00005", CanaryMarker(1717, 5))
	require.Equal(t, "ANVIL_REQ_0_09999", CanaryMarker(0, 9999))
	require.Equal(t, "ANVIL_REQ_1_10000", CanaryMarker(1, 10000))
	require.Equal(t, "ANVIL_REQ_1_123456", CanaryMarker(1, 123456))
	require.Equal(t, "ANVIL_REQ_-3_00042", CanaryMarker(-3, 42))
	require.Equal(t, "ANVIL_REQ_-9223372036854775808_00001", CanaryMarker(-1<<63, 1))
}

// ignoreShape leaves the report engineer's unexported key-set bookkeeping
// out of comparisons.
var ignoreShape = cmpopts.IgnoreUnexported(artifact.CanaryCheck{}, artifact.ControlledOutputCheck{})

func TestCheckCanary(t *testing.T) {
	const m = "ANVIL_REQ_1717_00003"
	tests := []struct {
		name     string
		visible  string
		complete bool
		want     artifact.CanaryCheck
	}{
		{"exact", m + " The code defines helpers.", true,
			artifact.CanaryCheck{MarkerAtStart: true, ObservedMarkerCount: 1, CaptureComplete: true, Passed: true}},
		{"leading white space", "\n  " + m + "\nok", true,
			artifact.CanaryCheck{MarkerAtStart: true, ObservedMarkerCount: 1, CaptureComplete: true, Passed: true}},
		{"marker alone", m, true,
			artifact.CanaryCheck{MarkerAtStart: true, ObservedMarkerCount: 1, CaptureComplete: true, Passed: true}},
		{"own marker twice", m + " again " + m, true,
			artifact.CanaryCheck{MarkerAtStart: true, ObservedMarkerCount: 2, CaptureComplete: true, Passed: true}},
		{"missing", "The code defines helpers.", true,
			artifact.CanaryCheck{CaptureComplete: true}},
		{"not at start", "Sure! " + m, true,
			artifact.CanaryCheck{ObservedMarkerCount: 1, CaptureComplete: true}},
		{"wrapped in markdown", "**" + m + "**", true,
			artifact.CanaryCheck{ObservedMarkerCount: 1, CaptureComplete: true}},
		{"peer marker", m + " and ANVIL_REQ_1717_00004", true,
			artifact.CanaryCheck{MarkerAtStart: true, ObservedMarkerCount: 1, ForeignMarkerCount: 1, CaptureComplete: true}},
		{"peer only", "ANVIL_REQ_1717_00004 summary", true,
			artifact.CanaryCheck{ForeignMarkerCount: 1, CaptureComplete: true}},
		{"marker continued by a digit is another index", m + "1 text", true,
			artifact.CanaryCheck{ForeignMarkerCount: 1, CaptureComplete: true}},
		{"garbled prefix counts as foreign", m + " ANVIL_REQ_", true,
			artifact.CanaryCheck{MarkerAtStart: true, ObservedMarkerCount: 1, ForeignMarkerCount: 1, CaptureComplete: true}},
		{"other seed", "ANVIL_REQ_17_00003", true,
			artifact.CanaryCheck{ForeignMarkerCount: 1, CaptureComplete: true}},
		{"truncated capture fails closed", m + " fine", false,
			artifact.CanaryCheck{MarkerAtStart: true, ObservedMarkerCount: 1}},
		{"empty", "", true, artifact.CanaryCheck{CaptureComplete: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.Marker = m
			got := checkCanary(m, tt.visible, tt.complete)
			if diff := cmp.Diff(&tt.want, got, ignoreShape); diff != "" {
				t.Errorf("CheckCanary(%q) (-want +got):\n%s", tt.visible, diff)
			}
		})
	}
	require.False(t, checkCanary("", "anything", true).Passed, "an empty marker never passes")
}

func TestCheckControlledOutput(t *testing.T) {
	yes, no := true, false
	const m = "ANVIL_REQ_7_00001"
	tests := []struct {
		name      string
		visible   string
		complete  bool
		requested int
		policy    string
		marker    string
		want      artifact.ControlledOutputCheck
	}{
		{"exact strict", "code code code", true, 3, PolicyStrict, "",
			artifact.ControlledOutputCheck{ObservedCodeWords: 3, ExactAdherence: &yes, Passed: true}},
		{"white space is free", "\n code\tcode  code \n", true, 3, PolicyStrict, "",
			artifact.ControlledOutputCheck{ObservedCodeWords: 3, ExactAdherence: &yes, Passed: true}},
		{"too few strict", "code code", true, 3, PolicyStrict, "",
			artifact.ControlledOutputCheck{ObservedCodeWords: 2, ExactAdherence: &no}},
		{"too few observe passes", "code code", true, 3, PolicyObserve, "",
			artifact.ControlledOutputCheck{ObservedCodeWords: 2, ExactAdherence: &no, Passed: true}},
		{"capitalised and punctuated are extra", "Code code, code.", true, 3, PolicyStrict, "",
			artifact.ControlledOutputCheck{ObservedExtraWords: 3, ExactAdherence: &no}},
		{"extra words", "Here: code code code", true, 3, PolicyStrict, "",
			artifact.ControlledOutputCheck{ObservedCodeWords: 3, ObservedExtraWords: 1, ExactAdherence: &no}},
		{"leading canary marker is not a word", m + " code code", true, 2, PolicyStrict, m,
			artifact.ControlledOutputCheck{ObservedCodeWords: 2, ExactAdherence: &yes, Passed: true}},
		{"leading marker with punctuation is not a word", m + ", code code", true, 2, PolicyStrict, m,
			artifact.ControlledOutputCheck{ObservedCodeWords: 2, ExactAdherence: &yes, Passed: true}},
		{"leading marker with a letter is extra", m + "x code code", true, 2, PolicyStrict, m,
			artifact.ControlledOutputCheck{ObservedCodeWords: 2, ObservedExtraWords: 1, ExactAdherence: &no}},
		{"leading other index is extra", "ANVIL_REQ_7_000012 code code", true, 2, PolicyStrict, m,
			artifact.ControlledOutputCheck{ObservedCodeWords: 2, ObservedExtraWords: 1, ExactAdherence: &no}},
		{"marker later is extra", "code " + m + " code", true, 2, PolicyStrict, m,
			artifact.ControlledOutputCheck{ObservedCodeWords: 2, ObservedExtraWords: 1, ExactAdherence: &no}},
		{"marker without canaries is extra", m + " code code", true, 2, PolicyStrict, "",
			artifact.ControlledOutputCheck{ObservedCodeWords: 2, ObservedExtraWords: 1, ExactAdherence: &no}},
		{"truncated strict fails", "code code", false, 2, PolicyStrict, "",
			artifact.ControlledOutputCheck{ObservedCodeWords: 2}},
		{"truncated observe is unobservable", "code code", false, 2, PolicyObserve, "",
			artifact.ControlledOutputCheck{ObservedCodeWords: 2, Passed: true}},
		{"empty", "", true, 1, PolicyStrict, "",
			artifact.ControlledOutputCheck{ExactAdherence: &no}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.RequestedWords, tt.want.CaptureComplete, tt.want.Policy = tt.requested, tt.complete, string(tt.policy)
			got := checkControlledOutput(tt.visible, tt.complete, tt.requested, tt.policy, tt.marker)
			if diff := cmp.Diff(&tt.want, got, ignoreShape); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCapture(t *testing.T) {
	var c visibleCapture
	c.Append(strings.Repeat("a", VisibleCaptureLimit-1))
	c.Append("")
	require.False(t, c.Truncated())
	c.Append("é")
	require.Equal(t, VisibleCaptureLimit, c.Len())
	require.False(t, c.Truncated(), "exactly the limit is complete")
	c.Append("")
	require.False(t, c.Truncated(), "an empty delta drops nothing")
	c.Append("b")
	require.True(t, c.Truncated())
	require.Equal(t, VisibleCaptureLimit, c.Len())
	require.Equal(t, strings.Repeat("a", VisibleCaptureLimit-1)+"é", c.String())

	small := visibleCapture{Limit: 3}
	small.Append("hé")
	small.Append("llo")
	require.Equal(t, "hél", small.String())
	require.True(t, small.Truncated())
	small.Reset()
	require.Equal(t, "", small.String())
	require.False(t, small.Truncated())
	small.Append("日本語")
	require.Equal(t, "日本語", small.String())
	require.False(t, small.Truncated())

	// Invalid UTF-8 bytes count as one character each.
	bad := visibleCapture{Limit: 2}
	bad.Append("\xff\xfe\xfd")
	require.Equal(t, "\xff\xfe", bad.String())
	require.True(t, bad.Truncated())
}

func BenchmarkCaptureAppend(b *testing.B) {
	b.ReportAllocs()
	delta := "code code "
	for b.Loop() {
		var c visibleCapture
		for range 1000 {
			c.Append(delta)
		}
	}
}

func FuzzCheckCanary(f *testing.F) {
	f.Add("ANVIL_REQ_1717_00003 hi", int64(1717), uint16(3), true)
	f.Add(" ANVIL_REQ_1717_00003ANVIL_REQ_1717_00004", int64(1717), uint16(3), true)
	f.Add("ANVIL_REQ_-1_000011", int64(-1), uint16(1), false)
	f.Fuzz(func(t *testing.T, visible string, seed int64, index uint16, complete bool) {
		m := CanaryMarker(seed, int(index))
		c := checkCanary(m, visible, complete)
		require.Equal(t, strings.Count(visible, CanaryMarkerPrefix), c.ObservedMarkerCount+c.ForeignMarkerCount)
		require.GreaterOrEqual(t, c.ForeignMarkerCount, 0)
		require.Equal(t, complete && c.MarkerAtStart && c.ForeignMarkerCount == 0, c.Passed)
		if c.MarkerAtStart {
			require.GreaterOrEqual(t, c.ObservedMarkerCount, 1)
		}
		// The marker followed by text free of markers always passes.
		clean := strings.ReplaceAll(visible, CanaryMarkerPrefix, "")
		if !strings.Contains(clean, CanaryMarkerPrefix) && (clean == "" || clean[0] < '0' || clean[0] > '9') {
			ok := checkCanary(m, m+clean, true)
			require.True(t, ok.Passed, "%q", m+clean)
		}
	})
}

func FuzzCheckControlledOutput(f *testing.F) {
	f.Add("code code", true, 2, false)
	f.Add("ANVIL_REQ_0_00000 code", true, 1, true)
	f.Add("Code\u00a0code", false, 2, false)
	f.Add("ANVIL_REQ_0_00000: code", true, 1, true)
	f.Fuzz(func(t *testing.T, visible string, complete bool, requested int, canary bool) {
		if requested < 0 {
			return
		}
		marker := ""
		if canary {
			marker = CanaryMarker(0, 0)
		}
		for _, policy := range []string{PolicyObserve, PolicyStrict} {
			c := checkControlledOutput(visible, complete, requested, policy, marker)
			words := strings.Fields(visible)
			skipped := 0
			if len(words) > 0 && isMarkerWord(words[0], marker) {
				skipped = 1
			}
			require.Equal(t, len(words)-skipped, c.ObservedCodeWords+c.ObservedExtraWords)
			require.Equal(t, complete, c.ExactAdherence != nil)
			if c.ExactAdherence != nil {
				require.Equal(t, c.ObservedCodeWords == requested && c.ObservedExtraWords == 0, *c.ExactAdherence)
			}
			if policy == PolicyStrict {
				require.Equal(t, c.ExactAdherence != nil && *c.ExactAdherence, c.Passed)
			} else {
				require.True(t, c.Passed)
			}
		}
	})
}

func FuzzCapture(f *testing.F) {
	f.Add("héllo", "wörld", "日本", 4)
	f.Add("", "abc", "", 1)
	f.Fuzz(func(t *testing.T, a, b, d string, limit int) {
		// Deltas are decoded JSON strings, hence valid UTF-8 each.
		if limit < 1 || limit > 64 || !utf8.ValidString(a) || !utf8.ValidString(b) || !utf8.ValidString(d) {
			return
		}
		c := visibleCapture{Limit: limit}
		for _, s := range []string{a, b, d} {
			c.Append(s)
		}
		all := a + b + d
		require.True(t, strings.HasPrefix(all, c.String()))
		require.Equal(t, utf8.RuneCountInString(c.String()), c.Len())
		require.Equal(t, min(limit, utf8.RuneCountInString(all)), c.Len())
		require.Equal(t, utf8.RuneCountInString(all) > limit, c.Truncated())
	})
}
