package capacity

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// TestDiscoverNativeWindowOutOfRange: a window of llama.cpp's /props or
// Ollama's /api/ps and /api/show that is a number outside
// 1..maxContextTokens is no window, and both the step's Asked line and the
// error of a discovery that found none name it (issue 19 item 2).
func TestDiscoverNativeWindowOutOfRange(t *testing.T) {
	ollamaModels, err := os.ReadFile(filepath.Join(transcripts, "ollama-0.17.4-models.json"))
	require.NoError(t, err)
	llamaModels := `{"object":"list","data":[{"id":"tiny.gguf","object":"model","meta":{"n_vocab":32000}}]}`
	show := func(n string) string {
		return `{"model_info":{"general.architecture":"llama","llama.context_length":` + n + `}}`
	}
	const tail = " gave a context length"
	for _, tc := range []struct {
		name, models string
		native       map[string]string
		asked        []string
		errTail      string
	}{
		{
			name: "props n_ctx -5", models: llamaModels,
			native: map[string]string{"GET /props": `{"n_ctx":-5,"total_slots":1}`},
			asked: []string{
				"GET /models: 1 model, no window",
				"GET /props: n_ctx -5 out of the range 1..1048576 of a window, 1 slots",
				"GET /api/ps: HTTP 404 Not Found",
				"POST /api/show: HTTP 404 Not Found",
			},
			errTail: tail + " (/props n_ctx -5: out of the range 1..1048576 of a window): set Target.MaxModelLen",
		},
		{
			name: "props default_generation_settings.n_ctx 1e300", models: llamaModels,
			native: map[string]string{"GET /props": `{"default_generation_settings":{"n_ctx":1e300}}`},
			asked: []string{
				"GET /models: 1 model, no window",
				"GET /props: default_generation_settings.n_ctx 1e300 out of the range 1..1048576 of a window",
				"GET /slots: HTTP 404 Not Found",
				"GET /api/ps: HTTP 404 Not Found",
				"POST /api/show: HTTP 404 Not Found",
			},
			errTail: tail + " (/props default_generation_settings.n_ctx 1e300: out of the range 1..1048576 of a window): set Target.MaxModelLen",
		},
		{
			name: "ollama ps and show", models: string(ollamaModels),
			native: map[string]string{
				"GET /api/ps":    `{"models":[{"name":"tiny:latest","model":"tiny:latest","context_length":-5}]}`,
				"POST /api/show": show("1e300"),
			},
			asked: []string{
				"GET /models: 1 model, no window",
				"GET /props: HTTP 404 Not Found",
				"GET /api/ps: context_length -5 out of the range 1..1048576 of a window",
				"POST /api/show: llama.context_length 1e300 out of the range 1..1048576 of a window",
			},
			errTail: tail + " (/api/ps context_length -5, /api/show llama.context_length 1e300: out of the range 1..1048576 of a window): set Target.MaxModelLen",
		},
		{
			name: "no number is no out-of-range value", models: string(ollamaModels),
			native: map[string]string{"GET /api/ps": `{"models":[]}`, "POST /api/show": show(`"big"`)},
			asked: []string{
				"GET /models: 1 model, no window",
				"GET /props: HTTP 404 Not Found",
				`GET /api/ps: answered, no window in "{\"models\":[]}"`,
				`POST /api/show: answered, no window in "{\"model_info\":{\"general.architecture\":\"llama\",\"llama.context_length\":\"big\"}}"`,
			},
			errTail: tail + ": set Target.MaxModelLen",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(nativeServer(t, tc.models, tc.native))
			defer srv.Close()
			d, err := Discover(t.Context(), Target{BaseURL: srv.URL + "/v1", MetricsURL: "off"})
			require.ErrorIs(t, err, ErrInvalidConfig)
			require.Equal(t, "", cmp.Diff(tc.asked, d.Asked))
			root := srv.URL
			require.ErrorContains(t, err, "neither "+root+"/props (llama.cpp) nor "+root+"/api/ps or "+root+"/api/show (ollama)"+tc.errTail)
		})
	}
}
