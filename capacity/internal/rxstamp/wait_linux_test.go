//go:build linux

package rxstamp

import (
	"net"
	"testing"
)

// WaitStamping writes a byte to server and reads it through r (client's
// Reader) until the read is stamped by the kernel: the host's packet
// timestamps are turned on a moment after the first socket asks.
func WaitStamping(t testing.TB, r *Reader, client, server net.Conn) {
	t.Helper()
	buf := make([]byte, 1)
	for range 100000 {
		if _, err := server.Write(buf); err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.Read(buf); err != nil {
			t.Fatal(err)
		}
		if r.Kernel() {
			return
		}
	}
	t.Fatal("rxstamp: the kernel never stamped a read of a socket with SO_TIMESTAMPNS")
}
