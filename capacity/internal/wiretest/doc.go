// Package wiretest is for tests only: the servers and captures the tests
// of the client (package internal/client) and of the engine (package
// capacity) both talk to: a server over the in-memory network of package
// pipenet (Serve), a chat handler answering a short stream (WriteOKStream,
// ConnCounter), an HTTP/1.1 server written on a bare listener that decides
// what becomes of each connection (StartRaw), and the real engines'
// captures of the module's testdata (ReadTranscript).
//
// It imports nothing of the module but pipenet, so that both packages'
// tests import it; it never imports the client it serves.
package wiretest
