package capacity

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"time"
)

// runIDLayout formats a run id: benchmark-YYYYMMDDTHHMMSSZ in UTC.
const runIDLayout = "benchmark-20060102T150405Z"

// isoSecondLayout formats started_at and finished_at: ISO 8601 UTC to the
// second.
const isoSecondLayout = "2006-01-02T15:04:05Z"

// RunID returns the run id of a run started at t:
// "benchmark-YYYYMMDDTHHMMSSZ" in UTC, truncated to the second.
func RunID(t time.Time) string { return t.UTC().Format(runIDLayout) }

// ISOSecond returns t as an ISO 8601 UTC label truncated (never rounded) to
// the second, as started_at and finished_at record it.
func ISOSecond(t time.Time) string { return t.UTC().Format(isoSecondLayout) }

// FingerprintPrefix starts every configuration fingerprint.
const FingerprintPrefix = "sha256:"

// fingerprintHexDigits is the number of lowercase hex digits after
// FingerprintPrefix: a SHA-256 sum.
const fingerprintHexDigits = 2 * sha256.Size

// The clock domain id: 1 to MaxClockDomainIDLen characters of
// clockDomainChars (DESIGN.md section 6).
const (
	// MaxClockDomainIDLen is the longest Target.ClockDomainID.
	MaxClockDomainIDLen = 64
	clockDomainChars    = "A-Za-z0-9._-"
)

// Patterns of the identity fields, built from the definitions above.
var (
	clockDomainPattern = regexp.MustCompile(fmt.Sprintf(`^[%s]{1,%d}$`, clockDomainChars, MaxClockDomainIDLen))
	fingerprintPattern = regexp.MustCompile(fmt.Sprintf(`^%s[0-9a-f]{%d}$`, regexp.QuoteMeta(FingerprintPrefix), fingerprintHexDigits))
)

// Fingerprint returns the configuration fingerprint of config, the bytes
// that identify a served configuration (for example an engine's launch
// command or a recipe file): "sha256:" + the lowercase hex SHA-256 of config.
func Fingerprint(config []byte) string {
	sum := sha256.Sum256(config)
	return FingerprintPrefix + hex.EncodeToString(sum[:])
}

// CheckConfigurationFingerprint returns nil when s is empty (no fingerprint)
// or "sha256:" followed by 64 lowercase hex digits, else an error wrapping
// ErrInvalidConfig.
func CheckConfigurationFingerprint(s string) error {
	if s == "" || fingerprintPattern.MatchString(s) {
		return nil
	}
	return &ConfigError{Field: "Target.ConfigurationFingerprint", Value: s,
		Rule: fmt.Sprintf("must be %q followed by %d lowercase hex digits", FingerprintPrefix, fingerprintHexDigits)}
}

// CheckClockDomainID returns nil when s is empty (no clock domain) or 1 to
// MaxClockDomainIDLen characters of [A-Za-z0-9._-], else an error wrapping
// ErrInvalidConfig.
func CheckClockDomainID(s string) error {
	if s == "" || clockDomainPattern.MatchString(s) {
		return nil
	}
	return &ConfigError{Field: "Target.ClockDomainID", Value: s,
		Rule: fmt.Sprintf("must be 1 to %d characters of [%s]", MaxClockDomainIDLen, clockDomainChars)}
}
