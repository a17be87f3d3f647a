package client

import (
	"strings"
	"unicode/utf8"
)

// VisibleCaptureLimit is the number of characters (Unicode code points) of
// a response's visible content kept for the request-canary and
// controlled-output checks (capacity/PROTOCOL.md#timings). Content beyond it is
// counted as truncation, not stored, so memory stays bounded whatever the
// server sends.
const VisibleCaptureLimit = 8192

// visibleCapture is a bounded capture of a response's visible content. The zero
// value keeps VisibleCaptureLimit characters; it is not safe for concurrent
// use (one capture belongs to one stream).
type visibleCapture struct {
	// Limit is the number of characters kept; 0 means VisibleCaptureLimit.
	Limit int

	buf       strings.Builder
	runes     int
	truncated bool
}

// Append adds a content delta, keeping characters until the limit is
// reached and recording truncation when any character is dropped. A delta
// is cut on a character boundary; invalid UTF-8 bytes count as one
// character each.
func (c *visibleCapture) Append(s string) {
	if s == "" {
		return
	}
	limit := c.Limit
	if limit <= 0 {
		limit = VisibleCaptureLimit
	}
	room := limit - c.runes
	if room <= 0 {
		c.truncated = true
		return
	}
	// Fast path: a delta no longer in bytes than the room fits whole.
	if len(s) <= room {
		c.buf.WriteString(s)
		c.runes += utf8.RuneCountInString(s)
		return
	}
	cut, n := 0, 0
	for cut < len(s) && n < room {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
		n++
	}
	c.buf.WriteString(s[:cut])
	c.runes += n
	if cut < len(s) {
		c.truncated = true
	}
}

// String returns the captured text.
func (c *visibleCapture) String() string { return c.buf.String() }

// Len returns the number of characters captured.
func (c *visibleCapture) Len() int { return c.runes }

// Truncated reports whether content was dropped because the limit was
// reached; a truncated capture is incomplete and fails closed.
func (c *visibleCapture) Truncated() bool { return c.truncated }

// Reset empties the capture for the next stream, keeping its Limit. The
// buffer is released, not reused, so a String returned earlier stays valid
// and no stream's text reaches another's capture.
func (c *visibleCapture) Reset() {
	c.buf = strings.Builder{}
	c.runes, c.truncated = 0, false
}
