package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/client"
)

// One request from its body to its timing row: an Encoder writes the
// run's fixed fields around the prompt in a dialect (chat completions),
// Send sends it and reads the stream, Evaluate makes the row.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"Hello\"}}]}\n\n"+
			"data: {\"choices\":[{\"delta\":{\"content\":\" there\"},\"finish_reason\":\"stop\"}]}\n\n"+
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":300,\"completion_tokens\":2,\"total_tokens\":302}}\n\n"+
			"data: [DONE]\n\n")
	}))
	defer srv.Close()

	cl, err := client.New(client.Config{BaseURL: srv.URL + "/v1", Timeout: time.Minute,
		Checks: client.Checks{MaxTokens: 64, Window: 8192}})
	if err != nil {
		panic(err)
	}
	enc, err := client.NewEncoder(client.ChatCompletions, &client.Request{Model: "m", MaxTokens: 64})
	if err != nil {
		panic(err)
	}
	var body client.Buffer
	body.Set(enc.AppendBody(body.Reset(), []byte("Say hello.")))

	ex := client.Exchange{Index: 0, Planned: 512}
	cl.Send(context.Background(), &body, &ex)
	row, failure := cl.Evaluate(&ex)
	answer, _ := ex.Answer()
	fmt.Println(failure == nil, row.ContentChunks, *row.OutputTokens, *row.PromptTokens, answer)
	// Output: true 2 2 300 Hello there
}
