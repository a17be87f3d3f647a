package client

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// CanaryMarkerPrefix starts every request canary marker. Any occurrence of
// it in a response that is not the request's own complete marker counts as
// a foreign marker.
const CanaryMarkerPrefix = "ANVIL_REQ_"

// CanaryMarker returns the marker of request index (>= 0):
// ANVIL_REQ_{seed}_{index:05d}, e.g. ANVIL_REQ_1717_00000.
func CanaryMarker(seed int64, index int) string {
	return string(AppendCanaryMarker(nil, seed, index))
}

// AppendCanaryMarker appends the marker of CanaryMarker to dst.
func AppendCanaryMarker(dst []byte, seed int64, index int) []byte {
	dst = append(dst, CanaryMarkerPrefix...)
	dst = strconv.AppendInt(dst, seed, 10)
	dst = append(dst, '_')
	for p := 10000; p > 1 && index < p; p /= 10 {
		dst = append(dst, '0')
	}
	return strconv.AppendInt(dst, int64(index), 10)
}

// checkCanary checks the request-canary contract on the bounded capture of
// a response: the visible content, after leading white space, must begin
// with marker, and must contain no other ANVIL_REQ_ marker. An occurrence
// of the marker followed by more digits (another index) or any other text
// starting with CanaryMarkerPrefix counts as foreign. A truncated capture
// (complete false) cannot prove the absence of a foreign marker and fails
// closed.
func checkCanary(marker, visible string, complete bool) *artifact.CanaryCheck {
	c := &artifact.CanaryCheck{Marker: marker, CaptureComplete: complete}
	trimmed := strings.TrimLeftFunc(visible, unicode.IsSpace)
	c.MarkerAtStart = marker != "" && isMarkerAt(trimmed, 0, marker)
	total := strings.Count(visible, CanaryMarkerPrefix)
	if marker != "" {
		for i := 0; ; {
			j := strings.Index(visible[i:], marker)
			if j < 0 {
				break
			}
			if isMarkerAt(visible, i+j, marker) {
				c.ObservedMarkerCount++
			}
			i += j + len(marker)
		}
	}
	c.ForeignMarkerCount = total - c.ObservedMarkerCount
	c.Passed = c.CaptureComplete && c.MarkerAtStart && c.ForeignMarkerCount == 0
	return c
}

// isMarkerAt reports whether s holds the complete marker at byte offset i:
// the marker text not continued by another digit.
func isMarkerAt(s string, i int, marker string) bool {
	if !strings.HasPrefix(s[i:], marker) {
		return false
	}
	end := i + len(marker)
	return end == len(s) || s[end] < '0' || s[end] > '9'
}
