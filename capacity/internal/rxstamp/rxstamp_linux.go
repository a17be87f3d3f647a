//go:build linux

package rxstamp

import (
	"io"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// maxRead is the most one read asks for, as package net caps a stream
// socket's reads (1 GiB).
const maxRead = 1 << 30

// controlSize is the room for one SCM_TIMESTAMPNS control message: its
// header and a struct timespec, aligned.
var controlSize = syscall.CmsgSpace(int(unsafe.Sizeof(syscall.Timespec{})))

// A Reader reads a TCP connection with recvmsg, each read reporting the
// kernel's receive time of its bytes. It is not safe for concurrent use,
// as a connection's reads are not.
type Reader struct {
	conn *net.TCPConn
	raw  syscall.RawConn
	last time.Time // the previous stamp, the lower bound of the next
	// kernel: the last read that returned bytes had the kernel's stamp.
	kernel bool

	// One recvmsg's arguments and results, kept here so that a read
	// allocates nothing: recv is the method value RawConn.Read calls.
	recv    func(fd uintptr) bool
	msg     syscall.Msghdr
	iov     syscall.Iovec
	control [8]uint64 // 8-byte aligned, as a struct cmsghdr must be
	n       int
	errno   syscall.Errno
}

// New returns a Reader of c when c is a *net.TCPConn whose socket takes
// SO_TIMESTAMPNS, else nil. The option stays set for the connection's
// life: c must afterwards be read only through the Reader.
func New(c net.Conn) *Reader {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return nil
	}
	r := &Reader{conn: tc, raw: raw, last: time.Now()}
	r.recv = r.recvmsg
	return r
}

// Read reads into p as c.Read would, with its errors (a *net.OpError "read"
// naming both addresses, io.EOF at the end), and returns with n > 0 the
// arrival of the bytes: the kernel's receive time of the last of them, on
// the monotonic clock, clamped to the previous arrival and to now. A read
// whose message carried no stamp is stamped now.
func (r *Reader) Read(p []byte) (n int, at time.Time, err error) {
	if len(p) == 0 {
		return 0, time.Time{}, nil
	}
	if len(p) > maxRead {
		p = p[:maxRead]
	}
	r.iov.Base = &p[0]
	r.iov.SetLen(len(p))
	r.msg.Iov = &r.iov
	r.msg.Iovlen = 1
	r.msg.Control = (*byte)(unsafe.Pointer(&r.control[0]))
	r.msg.SetControllen(controlSize)
	r.n, r.errno = 0, 0
	perr := r.raw.Read(r.recv)
	n = r.n
	r.iov.Base, r.msg.Iov, r.msg.Control = nil, nil, nil // p is the caller's again
	switch {
	case perr != nil: // closed, or past the deadline
		if op, ok := perr.(*net.OpError); ok {
			perr = op.Err // RawConn.Read's "raw-read" wrapping, replaced by Read's own
		}
		return 0, time.Time{}, r.opError(perr)
	case r.errno != 0:
		// Named "read" as package net names its reads' errors, so that
		// the messages are the same as without stamps.
		return 0, time.Time{}, r.opError(os.NewSyscallError("read", r.errno))
	case n == 0:
		return 0, time.Time{}, io.EOF
	}
	return n, r.stamp(), nil
}

// Kernel reports whether the last read that returned bytes was stamped
// with the kernel's receive time. It is not when the kernel gave none: the
// host timestamps packets only while a socket asks for it, and turns that
// on a moment after the first does (a deferred work item), so the first
// answer on a host where no other socket asked may come unstamped; such
// a read is stamped when it returns.
func (r *Reader) Kernel() bool { return r.kernel }

// recvmsg is one recvmsg of the prepared message; false asks RawConn.Read
// to wait until the socket is readable.
func (r *Reader) recvmsg(fd uintptr) bool {
	for {
		n, _, e := syscall.Syscall(syscall.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&r.msg)), 0)
		switch e {
		case 0:
			r.n = int(n)
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		r.errno = e
		return true
	}
}

// stamp converts the received message's SCM_TIMESTAMPNS to the monotonic
// clock (see the package comment) and keeps it between r.last and now.
func (r *Reader) stamp() time.Time {
	now := time.Now()
	at := now
	var ns int64
	if ns, r.kernel = r.kernelNS(); r.kernel {
		at = now.Add(-time.Duration(now.UnixNano() - ns))
	}
	switch {
	case at.After(now):
		at = now
	case at.Before(r.last):
		at = r.last
	}
	r.last = at
	return at
}

// kernelNS returns the kernel's receive time in the last message, Unix
// nanoseconds, when its control data holds one.
func (r *Reader) kernelNS() (int64, bool) {
	if int(r.msg.Controllen) < controlSize || r.msg.Flags&syscall.MSG_CTRUNC != 0 {
		return 0, false
	}
	h := (*syscall.Cmsghdr)(unsafe.Pointer(&r.control[0]))
	if h.Level != syscall.SOL_SOCKET || h.Type != syscall.SCM_TIMESTAMPNS {
		return 0, false
	}
	ts := (*syscall.Timespec)(unsafe.Add(unsafe.Pointer(&r.control[0]), syscall.CmsgSpace(0)))
	return ts.Nano(), true
}

// opError wraps err (never io.EOF, which Read returns as it is) as
// package net wraps a read's error.
func (r *Reader) opError(err error) error {
	return &net.OpError{Op: "read", Net: "tcp", Source: r.conn.LocalAddr(), Addr: r.conn.RemoteAddr(), Err: err}
}
