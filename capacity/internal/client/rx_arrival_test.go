package client

import (
	"fmt"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/rxstamp"
	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// TestStampsAreArrivals: on Linux the run's own connections stamp what
// they read with the kernel's receive time (package rxstamp), over
// either transport: the first response byte and the first content event
// are stamped between the start and the end of the server's write that
// sent them (the whole answer, in one write), not when the goroutine
// reading them runs again. (A stamp
// taken when the read returns comes after the write began and, unless
// the reader ran before the writer's own clock reading, after its end.)
// Each request is sent twice, the second on the kept-alive connection,
// whose previous answer's stamps must not leak into the next.
func TestStampsAreArrivals(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the kernel's receive times are read on Linux only")
	}
	holdKernelStamps(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	base := "http://" + ln.Addr().String() + "/v1"
	written := make(chan [2]time.Time, 1)
	wiretest.StartRaw(t, ln, func(c net.Conn, _ int, _ *http.Request) bool {
		rest := "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":400,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n"
		answer := fmt.Sprintf("%s%s%x\r\n%s\r\n0\r\n\r\n", streamHead, firstEvent, len(rest), rest)
		before := time.Now()
		_, err := c.Write([]byte(answer)) // one write: one arrival for every byte
		written <- [2]time.Time{before, time.Now()}
		return err == nil
	})
	for name, hc := range runTransports(t, nil) {
		cl := testClient(t, Config{BaseURL: base, HTTPClient: hc, Checks: Checks{MaxTokens: 8}})
		for i := range 2 {
			ex := &Exchange{}
			cl.Send(t.Context(), promptBody(t, 8), ex)
			require.Empty(t, ex.class, "%s #%d: %s", name, i, ex.message)
			w := <-written
			before, wrote := w[0], w[1]
			first := ex.FirstContent()
			require.False(t, first.Before(before), "%s #%d: first content stamped %v before the server's write", name, i, before.Sub(first))
			require.False(t, first.After(wrote), "%s #%d: first content stamped %v after the server's write returned", name, i, first.Sub(wrote))
			require.NotNil(t, ex.firstByteMS, "%s #%d", name, i)
			// On the phases' scale: ms after t0.
			firstByte := *ex.firstByteMS
			require.GreaterOrEqual(t, firstByte, MS(before.Sub(ex.Start())), "%s #%d: first byte stamped before the server's write", name, i)
			require.LessOrEqual(t, firstByte, MS(first.Sub(ex.Start())), "%s #%d: the first byte is stamped at the latest with the first event", name, i)
		}
	}
}

// holdKernelStamps keeps, for the test, a socket that asks the host to
// timestamp the packets it receives, and returns once a packet was: the
// host turns that on a moment after the first socket asks, and off after
// the last closes, so the first answer of a test would otherwise come
// unstamped (the client then stamps it when its read returns).
func holdKernelStamps(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	s, err := ln.Accept()
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(); s.Close() })
	r := rxstamp.New(c)
	require.NotNil(t, r)
	buf := make([]byte, 1)
	for range 100000 {
		_, err := s.Write(buf)
		require.NoError(t, err)
		_, _, err = r.Read(buf)
		require.NoError(t, err)
		if r.Kernel() {
			return
		}
	}
	t.Fatal("the kernel never stamped a read of a socket with SO_TIMESTAMPNS")
}
