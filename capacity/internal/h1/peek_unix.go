//go:build unix

package h1

import (
	"net"
	"syscall"
)

// peek looks at an idle connection's socket without waiting or consuming
// a byte: the end of stream (the server closed it), bytes nobody asked
// for, or nothing (still open, or not a socket it can look at). A
// connection that wraps another names it with a NetConn method (as
// *tls.Conn does).
func peek(c net.Conn) peerState {
	for {
		if sc, ok := c.(syscall.Conn); ok {
			return peekSocket(sc)
		}
		w, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return peerUnknown
		}
		c = w.NetConn()
	}
}

func peekSocket(sc syscall.Conn) peerState {
	raw, err := sc.SyscallConn()
	if err != nil {
		return peerUnknown
	}
	state := peerUnknown
	_ = raw.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case n == 0 && err == nil:
			state = peerEOF
		case n > 0:
			state = peerData
		case err == syscall.EAGAIN: //nolint:errorlint // a raw errno
			state = peerOpen
		}
	})
	return state
}
