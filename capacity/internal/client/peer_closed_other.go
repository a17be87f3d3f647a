//go:build !unix

package client

import "net"

// peerClosed cannot tell on this platform: a closed connection is then
// found when the request's answer does not come (see connection_rule.go).
func peerClosed(net.Conn) bool { return false }
