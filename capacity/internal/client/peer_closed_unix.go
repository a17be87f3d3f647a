//go:build unix

package client

import (
	"net"
	"syscall"
)

// peerClosed reports whether the server has already closed c: a
// non-blocking peek at the socket reads the end of the stream (0 bytes)
// with no data before it. It never consumes a byte, and it reports false
// for anything it cannot tell (a connection without a socket, data
// pending, an error). It does not wait: Control does not take the
// connection's read lock, which the transport's reader holds while it
// waits for the next answer.
func peerClosed(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	_ = raw.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = n == 0 && err == nil
	})
	return closed
}
