package client

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Content codings the client decodes (capacity/PROTOCOL.md#wire-protocol).
// Requests ask for identity unless Target.Headers sets Accept-Encoding, but
// a server or a proxy may compress anyway; the stream is then decoded as it
// arrives, and each event is stamped when it comes out decoded.
const (
	encodingIdentity = "identity"
	encodingGzip     = "gzip"
	encodingXGzip    = "x-gzip" // the legacy name of gzip (RFC 9110, 8.4.1.3)
	encodingDeflate  = "deflate"
)

// errUnsupportedEncoding is wrapped by the error of a Content-Encoding the
// client cannot decode.
var errUnsupportedEncoding = errors.New("unsupported Content-Encoding")

// decodingError marks a read error of a decoder (corrupt compressed data),
// as opposed to a transport error of the body beneath it.
type decodingError struct {
	encoding string
	err      error
}

func (e *decodingError) Error() string {
	return fmt.Sprintf("%s data does not decode: %v", e.encoding, e.err)
}
func (e *decodingError) Unwrap() error { return e.err }

// DecodeBody returns resp's body decoded as its Content-Encoding says: the
// codings in the order they were applied, so they are undone last first.
// A coding other than gzip, deflate and identity is an error naming it.
// A transport that already decoded the body (resp.Uncompressed) has removed
// the header.
func DecodeBody(resp *http.Response) (io.Reader, error) {
	var codings []string
	for _, v := range resp.Header.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.ToLower(strings.TrimSpace(c)); c != "" && c != encodingIdentity {
				codings = append(codings, c)
			}
		}
	}
	var r io.Reader = resp.Body
	for i := len(codings) - 1; i >= 0; i-- {
		switch c := codings[i]; c {
		case encodingGzip, encodingXGzip:
			r = &lazyDecoder{name: encodingGzip, src: r, open: func(src io.Reader) (io.Reader, error) { return gzip.NewReader(src) }}
		case encodingDeflate:
			r = &lazyDecoder{name: encodingDeflate, src: r, open: openDeflate}
		default:
			return nil, fmt.Errorf("%w %q (the client decodes gzip and deflate)", errUnsupportedEncoding, c)
		}
	}
	return r, nil
}

// openDeflate opens "deflate" content: zlib-wrapped as RFC 9110 says, or
// the raw DEFLATE data some servers send instead (told apart by the zlib
// header check of RFC 1950: CM = 8 and CMF*256+FLG a multiple of 31).
func openDeflate(src io.Reader) (io.Reader, error) {
	br := bufio.NewReader(src)
	head, err := br.Peek(2)
	if err != nil && len(head) < 2 {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if head[0]&0x0f == 8 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
		return zlib.NewReader(br)
	}
	return flate.NewReader(br), nil
}

// lazyDecoder opens its decoder at the first Read, so that reading the
// coding's header happens in the read path (bounded by the request's
// limits, stamped and classified like any other read).
type lazyDecoder struct {
	name string
	src  io.Reader
	open func(io.Reader) (io.Reader, error)
	dec  io.Reader
}

var _ io.Reader = (*lazyDecoder)(nil)

// Read implements io.Reader. An empty body decodes to an empty body; a
// corrupt one is a *decodingError; a body cut short is io.ErrUnexpectedEOF.
func (d *lazyDecoder) Read(p []byte) (int, error) {
	if d.dec == nil {
		dec, err := d.open(d.src)
		switch {
		case errors.Is(err, io.EOF):
			return 0, io.EOF // no body at all
		case err != nil:
			return 0, d.wrap(err)
		}
		d.dec = dec
	}
	n, err := d.dec.Read(p)
	if err != nil && err != io.EOF { //nolint:errorlint // io.EOF is returned unwrapped by the io.Reader contract
		err = d.wrap(err)
	}
	return n, err
}

// wrap marks decoder errors; transport errors and a body cut short pass
// through unchanged.
func (d *lazyDecoder) wrap(err error) error {
	var (
		corrupt flate.CorruptInputError
	)
	if errors.As(err, &corrupt) || errors.Is(err, gzip.ErrHeader) || errors.Is(err, gzip.ErrChecksum) ||
		errors.Is(err, zlib.ErrHeader) || errors.Is(err, zlib.ErrChecksum) || errors.Is(err, zlib.ErrDictionary) {
		return &decodingError{encoding: d.name, err: err}
	}
	return err
}
