//go:build !unix

package h1

import "net"

// peek cannot look at a socket here: every idle connection counts as open
// (a closed one fails its next request, which is then sent again when it
// may be).
func peek(net.Conn) peerState { return peerUnknown }
