// Package h1 is an HTTP/1.1 client transport that does each exchange on
// the caller's goroutine: it writes the request, reads the response head
// and hands over a body that reads the connection directly. A connection
// costs no goroutine and, between writes, no write buffer: at thousands
// of streams in flight, net/http's Transport spends about 10 KiB a
// connection on its two goroutines (readLoop and writeLoop) and its write
// buffer, which this transport does not.
//
// A Transport serves only what it can serve exactly: plain "http" URLs
// that its fallback *http.Transport would reach without a proxy, over
// HTTP/1.1. Everything else (https, which negotiates HTTP/2; a proxy; a
// request expecting 100-continue or asking for a protocol upgrade; a
// fallback with keep-alives disabled, a response header timeout, the
// deprecated Dial or unencrypted HTTP/2) is sent by the fallback
// unchanged. What the
// transport does, it does as net/http's Transport does:
//
//   - It dials with the fallback's DialContext and the request's context,
//     so net.Dialer reports DNSStart, DNSDone, ConnectStart and
//     ConnectDone to the request's httptrace.ClientTrace; it calls
//     GetConn, GotConn (Reused, WasIdle, IdleTime), PutIdleConn and
//     GotFirstResponseByte itself, and Request.Write calls WroteHeaders
//     and WroteRequest.
//   - It writes with Request.Write through a bufio.Writer of the
//     fallback's WriteBufferSize (4 KiB when unset) taken from a pool for
//     the write only, and reads through a 4 KiB bufio.Reader a connection
//     keeps. It asks for gzip and decodes it when the request names no
//     Accept-Encoding (unless the fallback disables compression), skips
//     1xx answers other than 101, and limits the response head to the
//     fallback's MaxResponseHeaderBytes (10 MiB when unset).
//   - A connection goes back to the host's idle list (most recently used
//     first, at most MaxIdleConnsPerHost of the fallback) only once its
//     body was read to its end and neither side asked for a close; a body
//     closed before its end closes the connection. An idle connection is
//     checked before it is taken (a non-blocking peek at its socket): one
//     the server closed, or that holds bytes nobody asked for, is dropped,
//     its end of stream read first so that a reader watching the
//     connection sees the close. One idle for longer than the fallback's
//     IdleConnTimeout is dropped when next looked at (no timer runs).
//     MaxConnsPerHost is not enforced.
//   - While a request is in flight, context.AfterFunc closes its
//     connection when the request's context is done, and every error from
//     then on is the context's cause.
//   - A request that fails on a reused connection is sent again on
//     another one when nothing of it was written (and its body can be
//     sent again: none, or GetBody), or when it is replayable (GET, HEAD,
//     OPTIONS or TRACE without a body that cannot be sent again) and the
//     connection ended before a response byte. When a write fails after
//     part of the request went out, the answer the server may have sent
//     already (a 413 before reading a large body) is read and returned.
package h1
