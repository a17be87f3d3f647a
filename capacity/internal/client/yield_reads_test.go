package client

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAnswerReadsYield: the first yieldReads reads of an answer that
// return bytes yield the processor, the later ones do not, and the next
// request's write starts the count again.
func TestAnswerReadsYield(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	yields := 0
	c := &watchedConn{Conn: client, rule: NewConnectionRule(nil), yield: func() { yields++ }}
	buf := make([]byte, 8)
	readAll := func(reads int) {
		t.Helper()
		go func() {
			for range reads {
				server.Write([]byte("event"))
			}
		}()
		for range reads {
			n, err := c.Read(buf)
			require.NoError(t, err)
			require.Equal(t, "event", string(buf[:n]))
		}
	}
	request := func() {
		t.Helper()
		go func() { server.Read(make([]byte, 16)) }()
		_, err := c.Write([]byte("request"))
		require.NoError(t, err)
	}
	request()
	readAll(yieldReads + 3)
	require.Equal(t, yieldReads, yields, "the first reads of an answer yield")
	request()
	readAll(yieldReads + 1)
	require.Equal(t, 2*yieldReads, yields, "a new request's answer yields again")
}
