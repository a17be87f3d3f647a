//go:build !linux

package rxstamp

import (
	"net"
	"time"
)

// A Reader reads a TCP connection with the kernel's receive time of its
// bytes; on this system there is none (New returns nil).
type Reader struct{}

// New returns nil: this system gives no receive time the package reads.
func New(net.Conn) *Reader { return nil }

// Read is never called: New returns no Reader here.
func (r *Reader) Read(p []byte) (int, time.Time, error) {
	panic("rxstamp: Read of a nil Reader")
}

// Kernel is never called: New returns no Reader here.
func (r *Reader) Kernel() bool { return false }
