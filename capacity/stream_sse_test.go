package capacity

import "io"

// The wire facts of package sse the stream tests build inputs from.
const (
	// sseBOM is the UTF-8 byte-order mark the framing drops at the start
	// of a stream.
	sseBOM = "\xEF\xBB\xBF"
	// sseStartBuffer is the framing's first read buffer, in bytes.
	sseStartBuffer = 4096
)

// splitReader returns s in two reads, split at byte at.
type splitReader struct {
	s  string
	at int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.s) == 0 {
		return 0, io.EOF
	}
	n := len(r.s)
	if r.at > 0 && r.at < n {
		n = r.at
	}
	n = copy(p, r.s[:n])
	r.s, r.at = r.s[n:], r.at-n
	return n, nil
}
