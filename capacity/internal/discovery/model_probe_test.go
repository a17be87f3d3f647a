package discovery

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/wiretest"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

func TestParseModels(t *testing.T) {
	tests := []struct {
		name, body, model string
		want              modelInfo
		err               string
	}{
		{name: "vllm", body: `{"data":[{"id":"a","max_model_len":32768}]}`, want: modelInfo{ID: "a", MaxModelLen: 32768, Field: "max_model_len", Listed: []string{"a"}}},
		{name: "requested model wins over the first", body: `{"data":[{"id":"a","max_model_len":1},{"id":"b","max_model_len":2}]}`, model: "b", want: modelInfo{ID: "b", MaxModelLen: 2, Field: "max_model_len", Listed: []string{"a", "b"}}},
		{name: "unknown model falls back to the first", body: `{"data":[{"id":"a","max_model_len":1},{"id":"b"}]}`, model: "zz", want: modelInfo{ID: "a", MaxModelLen: 1, Field: "max_model_len", Listed: []string{"a", "b"}}},
		{name: "field order", body: `{"data":[{"id":"a","context_length":3,"max_context_length":2}]}`, want: modelInfo{ID: "a", MaxModelLen: 2, Field: "max_context_length", Listed: []string{"a"}}},
		{name: "first positive integer", body: `{"data":[{"id":"a","max_model_len":0,"max_context_length":"8k","context_length":4096.0}]}`, want: modelInfo{ID: "a", MaxModelLen: 4096, Field: "context_length", Listed: []string{"a"}, OutOfRange: "max_model_len 0"}},
		{name: "negative and fractional skipped", body: `{"data":[{"id":"a","max_model_len":-5,"max_context_length":1.5}]}`, want: modelInfo{ID: "a", Listed: []string{"a"}, OutOfRange: "max_model_len -5"}},
		{name: "above the largest window", body: `{"data":[{"id":"a","max_model_len":4194304}]}`, want: modelInfo{ID: "a", Listed: []string{"a"}, OutOfRange: "max_model_len 4194304"}},
		{name: "a long number is cut", body: `{"data":[{"id":"a","max_model_len":1234567890123456789012345678901234567890}]}`, want: modelInfo{ID: "a", Listed: []string{"a"}, OutOfRange: "max_model_len 123456789012345678901234..."}},
		{name: "meta.n_ctx out of range", body: `{"data":[{"id":"m","meta":{"n_ctx":0}}]}`, want: modelInfo{ID: "m", Listed: []string{"m"}, OutOfRange: "meta.n_ctx 0"}},
		{name: "null", body: `{"data":[{"id":"a","max_model_len":null}]}`, want: modelInfo{ID: "a", Listed: []string{"a"}}},
		{name: "ollama: none", body: `{"object":"list","data":[{"id":"tiny:latest","object":"model"}]}`, want: modelInfo{ID: "tiny:latest", Listed: []string{"tiny:latest"}}},
		{name: "llama.cpp meta.n_ctx", body: `{"data":[{"id":"m","meta":{"n_ctx":2048,"n_ctx_train":8192}}]}`, want: modelInfo{ID: "m", MaxModelLen: 2048, Field: "meta.n_ctx", Listed: []string{"m"}}},
		{name: "llama.cpp meta.n_ctx after the fields", body: `{"data":[{"id":"m","max_model_len":4096,"meta":{"n_ctx":2048}}]}`, want: modelInfo{ID: "m", MaxModelLen: 4096, Field: "max_model_len", Listed: []string{"m"}}},
		{name: "meta without n_ctx", body: `{"data":[{"id":"m","meta":{"n_ctx":"2k"}}]}`, want: modelInfo{ID: "m", Listed: []string{"m"}}},
		{name: "empty list", body: `{"data":[]}`, err: "the model list is empty"},
		{name: "not json", body: `<html>`, err: "not a model list"},
		{name: "no id", body: `{"data":[{"max_model_len":5}]}`, err: "no string id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseModels([]byte(tt.body), tt.model)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

// TestParseLlamaCppCaptures: the captured llama-server answers give the
// window of one slot, from /v1/models (meta.n_ctx) and /props alike: 8192
// at --ctx-size 32768 --parallel 4, 2048 at --ctx-size 8192 --parallel 4.
func TestParseLlamaCppCaptures(t *testing.T) {
	for _, tt := range []struct {
		suffix string
		want   int
	}{{"", 8192}, {"-ctx8192-parallel4", 2048}} {
		info, err := parseModels(wiretest.ReadTranscript(t, "llamacpp-b10573-models"+tt.suffix+".json"), "")
		require.NoError(t, err)
		require.Equal(t, modelInfo{ID: "tiny.gguf", MaxModelLen: tt.want, Field: "meta.n_ctx", Listed: []string{"tiny.gguf"}}, info)
		n, bad := parseLlamaCppProps(wiretest.ReadTranscript(t, "llamacpp-b10573-props"+tt.suffix+".json"), "tiny.gguf")
		require.Equal(t, tt.want, n)
		require.Empty(t, bad)
	}
}

// TestProbeModelFake probes the fake's /v1/models.
func TestProbeModelFake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		plain, err := fakeserver.Profile("plain")
		require.NoError(t, err)
		srv := fakeserver.NewInMemory(plain)
		defer srv.Close()
		cfg := testConfig(t, srv.URL+"/v1", srv.Client())
		info, err := probeModel(t.Context(), cfg)
		require.NoError(t, err)
		require.Equal(t, modelInfo{ID: "fake-plain", MaxModelLen: 131072, Field: "max_model_len", Listed: []string{"fake-plain"}}, info)
	})
}
