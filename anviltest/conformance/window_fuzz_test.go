package conformance

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzWindowAnswers: whatever a server answers, the parsers of /models,
// /props, /api/ps and /api/show return a window in [0, 2^31-1] without
// panicking, and a /models entry has a window only with the field it came
// in. The seeds are the captured answers.
func FuzzWindowAnswers(f *testing.F) {
	for _, name := range []string{"llamacpp/models.json", "llamacpp/props.json", "ollama/models.json", "ollama/api-ps.json", "ollama/api-show.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"data":[{"id":"m","max_model_len":1e300,"meta":{"n_ctx":-1}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, parse := range []func([]byte, string) int{parseLlamaCppProps, parseOllamaPS, parseOllamaShow} {
			if n := parse(body, "tiny:latest"); n < 0 || n > math.MaxInt32 {
				t.Fatalf("window %d", n)
			}
		}
		entries, _ := parseModelList(body)
		for _, e := range entries {
			if e.window < 0 || e.window > math.MaxInt32 || (e.window > 0) != (e.field != "") {
				t.Fatalf("entry %+v", e)
			}
		}
	})
}
