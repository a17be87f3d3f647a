//go:build linux

package rxstamp_test

import (
	"fmt"
	"net"

	"github.com/anvilbench/anvil/capacity/internal/rxstamp"
)

// A read of a TCP connection through a Reader returns, with its bytes,
// when they reached the host.
func Example() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		panic(err)
	}
	defer server.Close()

	r := rxstamp.New(client) // nil where the system gives no receive times
	server.Write([]byte("hello"))
	buf := make([]byte, 16)
	n, at, err := r.Read(buf)
	fmt.Println(string(buf[:n]), err, at.IsZero())
	// Output: hello <nil> false
}
