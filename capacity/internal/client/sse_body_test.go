package client

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// byteScan is the event-stream line state machine of trackedBody written a
// byte at a time: the reference the segment-wise scan must agree with.
type byteScan struct {
	lineStart, comment, prevCR bool
	pending                    int64
	head                       []byte
}

func (b *byteScan) keep(c byte) {
	if b.pending < pendingHeadSize {
		b.head = append(b.head, c)
	}
	b.pending++
}

func (b *byteScan) scan(p []byte) {
	for _, c := range p {
		switch {
		case c == '\n' && b.prevCR:
			b.prevCR = false
			continue
		case c == '\n' || c == '\r':
			if b.lineStart {
				b.pending, b.head = 0, b.head[:0]
			} else if !b.comment {
				b.keep(c)
			}
			b.lineStart, b.comment = true, false
			b.prevCR = c == '\r'
			continue
		}
		b.prevCR = false
		if b.lineStart {
			b.lineStart = false
			b.comment = c == ':'
		}
		if !b.comment {
			b.keep(c)
		}
	}
}

// FuzzTrackedBodyScan: whatever the bytes and however the reads split
// them, the segment-wise scan counts the same pending bytes and keeps the
// same head as the byte-wise reference.
func FuzzTrackedBodyScan(f *testing.F) {
	for _, s := range []string{"data: x\n\n", "data: x\r\n\r\n", "data: x\r\r", "data: x\n", ": c\ndata: y", "data: x\n\n: ka\n\ndata",
		"data: [DONE]\r", "\r\n\r\n\n", "data: a\r\ndata: b\r\n", ":\r\n:x\rdata"} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		ref := byteScan{lineStart: true}
		ref.scan(data)
		tb := newTrackedBody(nil, nil)
		step := int(split%16) + 1
		for p := data; len(p) > 0; {
			n := min(step, len(p))
			tb.scan(p[:n])
			p = p[n:]
		}
		require.Equal(t, ref.pending, tb.trailing(), "%q", data)
		require.Equal(t, string(ref.head), string(tb.head[:min(tb.pending, pendingHeadSize)]), "%q", data)
		require.Equal(t, ref.lineStart, tb.lineStart)
		require.Equal(t, ref.prevCR, tb.prevCR)
	})
}
