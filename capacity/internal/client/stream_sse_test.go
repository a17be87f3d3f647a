package client

// The wire facts of package sse the stream tests build inputs from.
const (
	// sseBOM is the UTF-8 byte-order mark the framing drops at the start
	// of a stream.
	sseBOM = "\xEF\xBB\xBF"
	// sseStartBuffer is the framing's first read buffer, in bytes.
	sseStartBuffer = 4096
)
