package h1

import "net"

// peerState is what a look at an idle connection's socket found (peek).
type peerState int

const (
	peerUnknown peerState = iota // not a socket, or the look failed
	peerOpen                     // open, nothing to read
	peerEOF                      // the server closed it
	peerData                     // bytes nobody asked for
)

// PeerClosed reports whether the server has already closed c (or whatever
// c wraps, through NetConn methods): a non-blocking peek at the socket
// reads the end of the stream with no data before it. It never consumes a
// byte, never waits, and reports false for anything it cannot tell.
func PeerClosed(c net.Conn) bool { return peek(c) == peerEOF }
