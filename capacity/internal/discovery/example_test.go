package discovery_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/discovery"
)

// A vLLM-like server lists its model with its window on GET /models:
// nothing declared, discovery learns both from it, and says where.
func ExampleDiscover() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"qwen3-8b","object":"model","max_model_len":32768}]}`)
	}))
	defer srv.Close()
	base := srv.URL + "/v1"
	cl, err := client.New(client.Config{BaseURL: base, HTTPClient: srv.Client()})
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := discovery.Discover(context.Background(), discovery.Config{Client: cl, BaseURL: base, Timeout: time.Minute})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("model", d.Model, "from", d.ModelSource)
	fmt.Println("window", d.Window, "from", d.WindowSource)
	// Output:
	// model qwen3-8b from /models
	// window 32768 from /models
}
