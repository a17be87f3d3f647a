package wiretest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// A ConnCounter answers a chat request with WriteOKStream's stream, its
// prompt counted at CharsPerToken, and counts the request.
func ExampleConnCounter() {
	h := &wiretest.ConnCounter{}
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"messages":[{"role":"user","content":"`+strings.Repeat("x", 300)+`"}]}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Print(string(b))
	fmt.Println(h.Chats.Load(), "chat request")
	// Output:
	// data: {"choices":[{"delta":{"content":"ok"}}]}
	//
	// data: {"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":3,"total_tokens":103}}
	//
	// data: [DONE]
	//
	// 1 chat request
}
