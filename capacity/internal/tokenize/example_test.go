package tokenize_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/tokenize"
)

// A server whose /tokenize counts every text as 5 tokens: Discover finds
// it at the API root, and Count counts with it.
func ExampleDiscover() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"count":5}`)
	}))
	defer srv.Close()
	cl, err := client.New(client.Config{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	tk, err := tokenize.Discover(ctx, cl, tokenize.Config{BaseURL: srv.URL + "/v1", Model: "m", Timeout: time.Minute})
	if err != nil {
		fmt.Println(err)
		return
	}
	n, err := tk.Count(ctx, []byte("def helper_0():"))
	fmt.Println(tk.Path(), tk.Chat(), n, err)
	// Output: /tokenize true 5 <nil>
}
