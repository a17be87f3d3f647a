package embeddings_test

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/internal/embeddings"
)

func ExampleChecker_Check() {
	c := embeddings.NewChecker()
	for _, body := range []string{
		`{"object":"list","data":[{"object":"embedding","embedding":[0.6,0.8],"index":0},{"object":"embedding","embedding":[1,0],"index":1}],` +
			`"model":"m","usage":{"prompt_tokens":12,"total_tokens":12}}`,
		`{"object":"list","data":[{"object":"embedding","embedding":[0.6,0.8],"index":0}]}`,
		`{"object":"list","data":[{"embedding":[0.6,0.8],"index":0},{"embedding":[1,null],"index":1}]}`,
		`{"object":"list","data":[{"embedding":[0.6,0.8],"index":0},{"embedding":[1,0,0],"index":1}]}`,
	} {
		r, err := c.Check([]byte(body), embeddings.Want{Inputs: 2})
		if err != nil {
			fmt.Println(err)
			continue
		}
		p, _ := r.Usage.Prompt.Int64()
		fmt.Printf("%d vectors of %d (%v), %d input tokens\n", r.Vectors, r.Dimension, r.Format, p)
	}
	// Output:
	// 2 vectors of 2 (float), 12 input tokens
	// embeddings answer: 1 vectors for 2 inputs
	// embeddings answer: vector 1: value 1 is null (a NaN or an infinity written as JSON)
	// embeddings answer: vector 1: 3 values, where vector 0 has 2
}
