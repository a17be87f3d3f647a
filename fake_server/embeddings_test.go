package fakeserver

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// capturedEmbeddings is an embeddings answer of a capture.
type capturedEmbeddings struct {
	Model string `json:"model"`
	Data  []struct {
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// vectorOf reads a vector: a JSON array of numbers or base64 float32s.
func vectorOf(t *testing.T, raw json.RawMessage) (v []float32, b64 bool) {
	t.Helper()
	var s string
	if json.Unmarshal(raw, &s) == nil {
		b, err := base64.StdEncoding.DecodeString(s)
		require.NoError(t, err)
		for i := 0; i < len(b); i += 4 {
			v = append(v, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
		}
		return v, true
	}
	var fs []*float64
	require.NoError(t, json.Unmarshal(raw, &fs))
	for _, f := range fs {
		if f == nil {
			v = append(v, float32(math.NaN()))
			continue
		}
		v = append(v, float32(*f))
	}
	return v, false
}

// TestEmbeddingsLayoutsMatchCaptures pins the Ollama and llama.cpp
// embeddings bodies to their captures: the captured vectors and counts
// written as each engine writes them.
func TestEmbeddingsLayoutsMatchCaptures(t *testing.T) {
	for _, tc := range []struct {
		capture string
		dialect func() Dialect
	}{
		{"ollama-0.17.4-embeddings-single.json", dialectOllama},
		{"ollama-0.17.4-embeddings-list4.json", dialectOllama},
		{"llamacpp-b10573-embeddings-single.json", dialectLlamaCppAPIs},
		{"llamacpp-b10573-embeddings-list4.json", dialectLlamaCppAPIs},
		{"llamacpp-b10573-embeddings-base64.json", dialectLlamaCppAPIs},
		// Not llamacpp-b10573-embeddings-empty-input.json: one of its 64
		// values is written 0.050769858062267303 by nlohmann::json's Grisu2,
		// which is not always the shortest form; the fake writes the
		// shortest, 0.0507698580622673, the same double.
	} {
		t.Run(tc.capture, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join(transcripts, tc.capture))
			require.NoError(t, err)
			var c capturedEmbeddings
			require.NoError(t, json.Unmarshal(body, &c))
			e := embeddingsAnswer{model: c.Model, prompt: c.Usage.PromptTokens, total: c.Usage.TotalTokens}
			for _, d := range c.Data {
				v, b64 := vectorOf(t, d.Embedding)
				e.vectors, e.base64 = append(e.vectors, v), b64
			}
			d := tc.dialect()
			pinned(t, tc.capture, body, e.render(&d))
		})
	}
}

// postJSON posts body to path and returns the status and the answer.
func postJSON(t *testing.T, srv *Server, path string, body any, hdr map[string]string) (int, http.Header, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	resp, data, err := postRaw(t, srv, path, b, hdr)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, data
}

// TestEmbeddings checks an answer: one unit vector per input, the same
// for the same text, base64 or floats, usage counting each input as
// /tokenize counts its text, and the time of the engine's prefill.
func TestEmbeddings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := small()
		srv := NewInMemory(cfg)
		defer srv.Close()
		inputs := []string{"def helper_0(x): return compute(x, 0);", "The quick brown fox.", "def helper_0(x): return compute(x, 0);"}
		status, hdr, body := postJSON(t, srv, "/v1/embeddings", map[string]any{"model": cfg.Model, "input": inputs}, nil)
		require.Equal(t, 200, status, "%s", body)
		assert.Equal(t, "application/json", hdr.Get("Content-Type"))
		var c capturedEmbeddings
		require.NoError(t, json.Unmarshal(body, &c))
		require.Len(t, c.Data, 3)
		want := 0
		for _, in := range inputs {
			want += srv.cfg.countTokens(in)
		}
		assert.Equal(t, want, c.Usage.PromptTokens)
		assert.Equal(t, want, c.Usage.TotalTokens)
		var vs [][]float32
		for _, d := range c.Data {
			v, b64 := vectorOf(t, d.Embedding)
			require.False(t, b64)
			require.Len(t, v, defaultEmbeddingDimension)
			norm := 0.0
			for _, f := range v {
				norm += float64(f) * float64(f)
			}
			assert.InDelta(t, 1, norm, 1e-5)
			vs = append(vs, v)
		}
		assert.Equal(t, vs[0], vs[2], "the same text, the same vector")
		assert.NotEqual(t, vs[0], vs[1])

		status, _, body = postJSON(t, srv, "/v1/embeddings", map[string]any{"input": inputs[1], "encoding_format": "base64", "dimensions": 8}, nil)
		require.Equal(t, 200, status, "%s", body)
		require.NoError(t, json.Unmarshal(body, &c))
		v, b64 := vectorOf(t, c.Data[0].Embedding)
		assert.True(t, b64)
		assert.Len(t, v, 8)

		synctest.Wait()
		tr, ok := srv.Trace(0)
		require.True(t, ok)
		assert.Equal(t, "embeddings", tr.API)
		assert.Equal(t, 3, tr.Inputs)
		assert.Equal(t, want, tr.PromptTokens)
		assert.Equal(t, tr.PrefillDone, tr.Chunks[0].Scheduled, "answered when the prefill ended")
		assert.Positive(t, tr.PrefillDone)
	})
}

// TestEmbeddingsErrors checks the refusals of bad requests.
func TestEmbeddingsErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := NewInMemory(small())
		defer srv.Close()
		for _, tc := range []struct {
			body   map[string]any
			status int
			param  string
		}{
			{map[string]any{"input": []string{}}, 400, "input"},
			{map[string]any{"input": 5}, 400, "input"},
			{map[string]any{"input": "x", "model": "other"}, 404, "model"},
			{map[string]any{"input": "x", "encoding_format": "int8"}, 400, "encoding_format"},
			{map[string]any{"input": "x", "dimensions": 0}, 400, "dimensions"},
			{map[string]any{"input": "x", "dimensions": 65}, 400, "dimensions"},
		} {
			status, _, body := postJSON(t, srv, "/v1/embeddings", tc.body, nil)
			assert.Equal(t, tc.status, status, "%v: %s", tc.body, body)
			var e struct {
				Error struct {
					Param string `json:"param"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal(body, &e), "%s", body)
			assert.Equal(t, tc.param, e.Error.Param, "%v", tc.body)
		}
	})
}

// TestEmbeddingsFaults checks the faults of /v1/embeddings.
func TestEmbeddingsFaults(t *testing.T) {
	for _, tc := range []struct {
		fault  Fault
		check  func(t *testing.T, status int, body []byte)
		base64 bool
	}{
		{fault: faultVectorCount, check: func(t *testing.T, _ int, body []byte) {
			var c capturedEmbeddings
			require.NoError(t, json.Unmarshal(body, &c))
			assert.Len(t, c.Data, 1, "one vector for two inputs")
		}},
		{fault: faultVectorNaN, check: func(t *testing.T, _ int, body []byte) {
			assert.Contains(t, string(body), "null")
		}},
		{fault: faultVectorNaN, base64: true, check: func(t *testing.T, _ int, body []byte) {
			var c capturedEmbeddings
			require.NoError(t, json.Unmarshal(body, &c))
			v, _ := vectorOf(t, c.Data[0].Embedding)
			assert.True(t, math.IsNaN(float64(v[len(v)/2])))
		}},
		{fault: faultVectorDimension, check: func(t *testing.T, _ int, body []byte) {
			var c capturedEmbeddings
			require.NoError(t, json.Unmarshal(body, &c))
			a, _ := vectorOf(t, c.Data[0].Embedding)
			b, _ := vectorOf(t, c.Data[1].Embedding)
			assert.Equal(t, len(a)-1, len(b))
		}},
		{fault: faultUsageTotal, check: func(t *testing.T, _ int, body []byte) {
			var c capturedEmbeddings
			require.NoError(t, json.Unmarshal(body, &c))
			assert.Zero(t, c.Usage.TotalTokens)
			assert.Positive(t, c.Usage.PromptTokens)
		}},
		{fault: faultHTTP503, check: func(t *testing.T, status int, body []byte) {
			assert.Equal(t, 503, status)
			assertErrorBody(t, body, "server_error")
		}},
		{fault: faultEmptyBody, check: func(t *testing.T, status int, body []byte) {
			assert.Equal(t, 200, status)
			assert.Empty(t, body)
		}},
		{fault: faultStall, check: func(t *testing.T, status int, body []byte) {
			assert.Equal(t, 200, status, "a stream fault changes nothing")
			assert.True(t, json.Valid(body))
		}},
	} {
		t.Run(string(tc.fault), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := NewInMemory(small())
				defer srv.Close()
				req := map[string]any{"input": []string{"a b c", "d e f"}}
				if tc.base64 {
					req["encoding_format"] = "base64"
				}
				status, _, body := postJSON(t, srv, "/v1/embeddings", req, map[string]string{faultHeader: string(tc.fault)})
				tc.check(t, status, body)
			})
		})
	}
}
