package capacity_test

import (
	"context"
	"fmt"
	"log"

	"github.com/anvilbench/anvil/capacity"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// ExampleDiscover finds the model and its context window as Run does, and
// says where each came from: here the fake's /v1/models advertises both.
// A declared window that disagrees with the advertised one is named.
func ExampleDiscover() {
	cfg := fakeserver.Fast()
	cfg.MaxModelLen = 16384
	srv := fakeserver.New(cfg)
	defer srv.Close()

	d, err := capacity.Discover(context.Background(), capacity.Target{BaseURL: srv.URL + "/v1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("model", d.Model, "from", d.ModelSource)
	fmt.Println("window", d.Window, "from", d.WindowSource, "truncation checked at", d.TruncationWindow)

	d, err = capacity.Discover(context.Background(), capacity.Target{BaseURL: srv.URL + "/v1", MaxModelLen: 32768})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("window", d.Window, "from", d.WindowSource, "truncation checked at", d.TruncationWindow)
	fmt.Println(d.Note != "")
	// Output:
	// model fake-fast from /models
	// window 16384 from /models truncation checked at 16384
	// window 32768 from Target.MaxModelLen truncation checked at 16384
	// true
}

// ExampleDiscover_slots reads a llama.cpp server's slots from /props
// (here the fake's llama.cpp answers: no window in /v1/models, the window
// of a slot and total_slots in /props). A run with more requests in
// flight than slots says so in anvil_go.context_window.note. Asked says
// what each endpoint answered.
func ExampleDiscover_slots() {
	cfg := fakeserver.Fast()
	cfg.MaxModelLen, cfg.MaxSeqs = 8192, 4
	cfg.Dialect.OmitModelLen, cfg.Dialect.ServeProps = true, true
	srv := fakeserver.New(cfg)
	defer srv.Close()

	d, err := capacity.Discover(context.Background(), capacity.Target{BaseURL: srv.URL + "/v1", Model: "fake-fast", MaxModelLen: 8192})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("window", d.Window, "advertised", d.Advertised, "by", d.AdvertisedSource)
	fmt.Println("slots", d.Slots, "from", d.SlotsSource)
	for _, step := range d.Asked {
		fmt.Println(step)
	}
	// Output:
	// window 8192 advertised 8192 by /props
	// slots 4 from /props
	// GET /models: 1 model, no window
	// GET /props: answered, window 8192, 4 slots
}
