package sse_test

import (
	"fmt"
	"strings"

	"github.com/anvilbench/anvil/capacity/sse"
)

// A chat-completion stream read event by event: the comment and the
// keep-alive event without data are skipped by the caller or the framing,
// CRLF line ends are as good as LF, and the last event lacks the blank line
// that would dispatch it, so it is not an event.
func ExampleReader() {
	body := ": keep-alive\r\n\r\n" +
		"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\r\n\r\n" +
		"event: ping\n\n" +
		"data: [DONE]\n\n" +
		"data: cut"
	r := sse.NewReader(strings.NewReader(body), 64<<10)
	for r.Scan() {
		ev := r.Event()
		fmt.Printf("type %q data %q\n", ev.Type, ev.Data)
	}
	fmt.Println("err:", r.Err())
	// Output:
	// type "" data "{\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}"
	// type "ping" data ""
	// type "" data "[DONE]"
	// err: <nil>
}

// An event larger than the limit ends the reading with bufio.ErrTooLong.
func ExampleReader_Err() {
	r := sse.NewReader(strings.NewReader("data: "+strings.Repeat("x", 100)+"\n\n"), 32)
	for r.Scan() {
		fmt.Println("never")
	}
	fmt.Println(r.Err())
	// Output:
	// bufio.Scanner: token too long
}
