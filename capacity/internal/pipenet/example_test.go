package pipenet_test

import (
	"fmt"
	"io"
	"net/http"

	"github.com/anvilbench/anvil/capacity/internal/pipenet"
)

// A handler served in memory: the client's requests never touch a socket.
func ExampleNewServer() {
	s := pipenet.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s", r.Method, r.URL.Path)
	}))
	defer s.Close()

	resp, err := s.Client().Get(s.URL + "/v1/models")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body))
	// Output: 200 GET /v1/models
}
