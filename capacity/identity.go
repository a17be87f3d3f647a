package capacity

import (
	"crypto/sha256"
	"fmt"
	"regexp"
	"time"
)

// runIDLayout formats a run id: benchmark-YYYYMMDDTHHMMSSZ in UTC.
const runIDLayout = "benchmark-20060102T150405Z"

// isoSecondLayout formats started_at and finished_at: ISO 8601 UTC to the
// second.
const isoSecondLayout = "2006-01-02T15:04:05Z"

// runID returns the run id of a run started at t:
// "benchmark-YYYYMMDDTHHMMSSZ" in UTC, truncated to the second.
func runID(t time.Time) string { return t.UTC().Format(runIDLayout) }

// isoSecond returns t as an ISO 8601 UTC label truncated (never rounded) to
// the second, as started_at and finished_at record it.
func isoSecond(t time.Time) string { return t.UTC().Format(isoSecondLayout) }

// fingerprintPrefix starts every configuration fingerprint.
const fingerprintPrefix = "sha256:"

// fingerprintHexDigits is the number of lowercase hex digits after
// fingerprintPrefix: a SHA-256 sum.
const fingerprintHexDigits = 2 * sha256.Size

// The clock domain id: 1 to maxClockDomainIDLen characters of
// clockDomainChars (capacity/PROTOCOL.md#bounds).
const (
	// maxClockDomainIDLen is the longest Target.ClockDomainID.
	maxClockDomainIDLen = 64
	clockDomainChars    = "A-Za-z0-9._-"
)

// Patterns of the identity fields, built from the definitions above.
var (
	clockDomainPattern = regexp.MustCompile(fmt.Sprintf(`^[%s]{1,%d}$`, clockDomainChars, maxClockDomainIDLen))
	fingerprintPattern = regexp.MustCompile(fmt.Sprintf(`^%s[0-9a-f]{%d}$`, regexp.QuoteMeta(fingerprintPrefix), fingerprintHexDigits))
)

// checkConfigurationFingerprint returns nil when s is empty (no fingerprint)
// or "sha256:" followed by 64 lowercase hex digits, else an error wrapping
// ErrInvalidConfig.
func checkConfigurationFingerprint(s string) error {
	if s == "" || fingerprintPattern.MatchString(s) {
		return nil
	}
	return badField("Target.ConfigurationFingerprint", s,
		fmt.Sprintf("must be %q followed by %d lowercase hex digits", fingerprintPrefix, fingerprintHexDigits))
}

// checkClockDomainID returns nil when s is empty (no clock domain) or 1 to
// maxClockDomainIDLen characters of [A-Za-z0-9._-], else an error wrapping
// ErrInvalidConfig.
func checkClockDomainID(s string) error {
	if s == "" || clockDomainPattern.MatchString(s) {
		return nil
	}
	return badField("Target.ClockDomainID", s,
		fmt.Sprintf("must be 1 to %d characters of [%s]", maxClockDomainIDLen, clockDomainChars))
}
