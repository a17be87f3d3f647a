package embeddings

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/capture"
)

func check(t *testing.T, c *Checker, body []byte, w Want) outcome {
	t.Helper()
	want := reference(body, w)
	got := outcomeOf(c.Check(body, w))
	if !sameOutcome(got, want) {
		t.Fatalf("Check(%q, %+v) = %+v, encoding/json's %+v", body, w, got, want)
	}
	return got
}

var seeds = []string{
	`{"object":"list","data":[{"object":"embedding","embedding":[0.5,-1e-3,2],"index":0}],"usage":{"prompt_tokens":3,"total_tokens":3}}`,
	`{"data":[{"embedding":[1,2],"index":1},{"embedding":[3,4],"index":0}]}`,
	`{"data":[{"embedding":[1,2],"index":0},{"embedding":[3,4],"index":0}]}`,
	`{"data":[{"embedding":[1,2]},{"embedding":[3]}]}`,
	`{"data":[{"embedding":[1,null]}]}`, `{"data":[{"embedding":[1,NaN]}]}`, `{"data":[{"embedding":[-Infinity]}]}`, " \n{\"data\":[{\"embedding\":[NaN]}]}",
	`{"data":[{"embedding":[1e400]}]}`, `{"data":[{"embedding":[` + strings.Repeat("9", 308) + `,` + strings.Repeat("9", 309) + `.5]}]}`,
	`{"data":[{"embedding":[-` + strings.Repeat("1", 309) + `]}]}`, `{"data":[{"embedding":["1"]}]}`, `{"data":[{"embedding":[]}]}`, `{"data":[{"embedding":""}]}`,
	`{"data":[{"embedding":"AAAAPw=="}]}`, `{"data":[{"embedding":"AADAfw=="}]}`, `{"data":[{"embedding":"AAAA"}]}`, `{"data":[{"embedding":"!!"}]}`,
	`{"data":[{"embedding":"AAAA\u0050w=="}]}`, `{"data":[{"embedding":{}}]}`, `{"data":[null]}`, `{"data":[]}`, `{"data":{}}`,
	`{"error":{"code":501,"message":"This server does not support embeddings.","type":"not_supported_error"}}`, `{"error":null,"data":[{"embedding":[1]}]}`,
	`{"data":[{"embedding":[1],"index":"0"}]}`, `{"data":[{"embedding":[1],"index":1.5}]}`, `[]`, `{"data":[{"embedding":[1]}]} x`,
}

func FuzzCheckMatchesEncodingJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s), uint8(1), false, uint16(0))
	}
	files, err := capture.Glob(capture.Dir("../../.."), "*embeddings*.json")
	require.NoError(f, err)
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(f, err)
		f.Add(b, uint8(1), false, uint16(0))
		f.Add(b, uint8(4), true, uint16(64))
	}
	f.Fuzz(func(t *testing.T, body []byte, inputs uint8, b64 bool, dim uint16) {
		w := Want{Inputs: int(inputs % 5), Dimension: int(dim % 512)}
		if b64 {
			w.Format = Base64
		}
		c := NewChecker()
		check(t, c, body, w)
		check(t, c, body, w) // with the buffers of the first
	})
}

func TestSeeds(t *testing.T) {
	c := NewChecker()
	for _, s := range seeds {
		for _, in := range []int{0, 1, 2} {
			check(t, c, []byte(s), Want{Inputs: in})
		}
	}
}
