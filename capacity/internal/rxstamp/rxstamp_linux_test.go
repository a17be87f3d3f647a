//go:build linux

package rxstamp

import (
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pair returns the two ends of a loopback TCP connection: the client's,
// dialed, and the server's, accepted.
func pair(t testing.TB) (client, server *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	s := <-accepted
	require.NotNil(t, s)
	t.Cleanup(func() { c.Close(); s.Close() })
	return c.(*net.TCPConn), s.(*net.TCPConn)
}

// TestReadStampsArrival: bytes written and left unread are stamped with
// the instant they arrived, between the start and the end of the write
// that sent them, not with the later instant the read returned; and the
// stamps of later bytes are later.
func TestReadStampsArrival(t *testing.T) {
	c, s := pair(t)
	r := New(c)
	require.NotNil(t, r, "a loopback TCP connection takes SO_TIMESTAMPNS")
	WaitStamping(t, r, c, s)
	buf := make([]byte, 64)
	var prev time.Time
	for i, msg := range []string{"first", "second", "third"} {
		before := time.Now()
		_, err := s.Write([]byte(msg))
		require.NoError(t, err)
		wrote := time.Now()
		n, at, err := r.Read(buf)
		returned := time.Now()
		require.NoError(t, err)
		require.Equal(t, msg, string(buf[:n]))
		require.False(t, at.Before(before), "write %d: stamped %v before the write began", i, before.Sub(at))
		require.False(t, at.After(wrote), "write %d: stamped %v after the write returned", i, at.Sub(wrote))
		require.True(t, at.Before(returned), "write %d: the stamp is the arrival, before the read returned", i)
		require.True(t, at.After(prev), "write %d: stamps increase", i)
		prev = at
	}
}

// TestReadCoalesced: one read of two writes is stamped with the arrival of
// the second, the last bytes it returns.
func TestReadCoalesced(t *testing.T) {
	c, s := pair(t)
	r := New(c)
	require.NotNil(t, r)
	WaitStamping(t, r, c, s)
	_, err := s.Write([]byte("one,"))
	require.NoError(t, err)
	between := time.Now()
	_, err = s.Write([]byte("two"))
	require.NoError(t, err)
	buf := make([]byte, 64)
	got := ""
	var at time.Time
	for len(got) < len("one,two") {
		n, a, err := r.Read(buf)
		require.NoError(t, err)
		got, at = got+string(buf[:n]), a
	}
	require.Equal(t, "one,two", got)
	require.False(t, at.Before(between), "the last bytes came with the second write")
}

// TestReadErrorsAsNet: every way a read ends gives the error package net's
// Read gives on the same connection state, message included (addresses
// aside).
func TestReadErrorsAsNet(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  func(t *testing.T, c, s *net.TCPConn)
		is   error
	}{
		{"end", func(t *testing.T, c, s *net.TCPConn) { require.NoError(t, s.Close()) }, io.EOF},
		{"reset", func(t *testing.T, c, s *net.TCPConn) {
			require.NoError(t, s.SetLinger(0))
			require.NoError(t, s.Close())
		}, syscall.ECONNRESET},
		{"deadline", func(t *testing.T, c, s *net.TCPConn) {
			require.NoError(t, c.SetReadDeadline(time.Unix(1, 0)))
		}, os.ErrDeadlineExceeded},
		{"closed", func(t *testing.T, c, s *net.TCPConn) { require.NoError(t, c.Close()) }, net.ErrClosed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			read := func(stamped bool) error {
				c, s := pair(t)
				r := New(c)
				require.NotNil(t, r)
				tt.set(t, c, s)
				buf := make([]byte, 8)
				var err error
				if stamped {
					var n int
					n, _, err = r.Read(buf)
					require.Zero(t, n)
				} else {
					_, err = c.Read(buf)
				}
				require.ErrorIs(t, err, tt.is)
				return errors.Join(err, errors.New(c.LocalAddr().String()+" "+c.RemoteAddr().String()))
			}
			plain, stamped := read(false), read(true)
			strip := func(err error) string {
				lines := strings.Split(err.Error(), "\n")
				msg := lines[0]
				for _, addr := range strings.Fields(lines[1]) {
					msg = strings.ReplaceAll(msg, addr, "ADDR")
				}
				return msg
			}
			require.Equal(t, strip(plain), strip(stamped))
			var ne net.Error
			if errors.As(plain, &ne) {
				require.ErrorAs(t, stamped, &ne)
				require.Equal(t, errors.Is(plain, os.ErrDeadlineExceeded), ne.Timeout())
			}
		})
	}
}

// TestReadEmpty: an empty buffer reads nothing, as package net's Read.
func TestReadEmpty(t *testing.T) {
	c, _ := pair(t)
	r := New(c)
	require.NotNil(t, r)
	n, at, err := r.Read(nil)
	require.NoError(t, err)
	require.Zero(t, n)
	require.True(t, at.IsZero())
}

// TestNewOtherConn: a connection that is not TCP has no Reader.
func TestNewOtherConn(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	require.Nil(t, New(a))
}

// TestReadAllocatesNothing: a read of waiting bytes allocates nothing.
func TestReadAllocatesNothing(t *testing.T) {
	c, s := pair(t)
	r := New(c)
	require.NotNil(t, r)
	buf := make([]byte, 1)
	msg := []byte(strings.Repeat("x", 200))
	_, err := s.Write(msg)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(100, func() {
		if _, _, err := r.Read(buf); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs)
}

// BenchmarkRead is a read of waiting bytes with its stamp, beside package
// net's read of the same bytes and a time.Now: what the stamp costs.
func BenchmarkRead(b *testing.B) {
	for _, stamped := range []bool{false, true} {
		name := "net+now"
		if stamped {
			name = "rxstamp"
		}
		b.Run(name, func(b *testing.B) {
			c, s := pair(b)
			r := New(c)
			require.NotNil(b, r)
			msg := make([]byte, 4096)
			buf := make([]byte, len(msg))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Write(msg); err != nil {
					b.Fatal(err)
				}
				for got := 0; got < len(msg); {
					var n int
					var err error
					if stamped {
						n, _, err = r.Read(buf)
					} else {
						n, err = c.Read(buf)
						_ = time.Now()
					}
					if err != nil {
						b.Fatal(err)
					}
					got += n
				}
			}
		})
	}
}

// TestKernel: a read reports whether its stamp was the kernel's; once the
// host timestamps packets (a moment after the first socket asks), every
// read of a stamped socket is.
func TestKernel(t *testing.T) {
	c, s := pair(t)
	r := New(c)
	require.NotNil(t, r)
	require.False(t, r.Kernel(), "no read yet")
	WaitStamping(t, r, c, s)
	buf := make([]byte, 8)
	for range 10 {
		_, err := s.Write([]byte("x"))
		require.NoError(t, err)
		_, _, err = r.Read(buf)
		require.NoError(t, err)
		require.True(t, r.Kernel())
	}
}
