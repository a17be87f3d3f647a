package capacity

import (
	"encoding/json"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// TestDiscoverLlamaCppSlots: the slots of the captured llama-server
// (--parallel 4) come from /props total_slots; a /props without it (an
// older build) falls back to the entries of the captured /slots; a server
// without /slots, or whose /props is no llama.cpp answer, has none. Its
// per-slot window is n_ctx in both captures: 8192 at --ctx-size 32768, 2048
// at --ctx-size 8192.
func TestDiscoverLlamaCppSlots(t *testing.T) {
	props := wiretest.ReadTranscript(t, "llamacpp-b10573-props.json")
	var withoutTotal map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(props, &withoutTotal))
	delete(withoutTotal, "total_slots")
	noTotal, err := json.Marshal(withoutTotal)
	require.NoError(t, err)
	slots := wiretest.ReadTranscript(t, "llamacpp-b10573-slots.json")
	var slotList []struct {
		NCtx int `json:"n_ctx"`
	}
	require.NoError(t, json.Unmarshal(slots, &slotList))
	require.Len(t, slotList, 4)
	for _, s := range slotList {
		require.Equal(t, 8192, s.NCtx, "/slots n_ctx is the window of one slot, as /props n_ctx")
	}

	tests := []struct {
		name              string
		models, props     []byte
		slots             []byte // nil: GET /slots is 404
		window, wantSlots int
		wantSource        string
	}{
		{"props total_slots", wiretest.ReadTranscript(t, "llamacpp-b10573-models.json"), props, slots, 8192, 4, "/props"},
		{"ctx-size 8192 over 4 slots", wiretest.ReadTranscript(t, "llamacpp-b10573-models-ctx8192-parallel4.json"),
			wiretest.ReadTranscript(t, "llamacpp-b10573-props-ctx8192-parallel4.json"), nil, 2048, 4, "/props"},
		{"no total_slots: /slots", wiretest.ReadTranscript(t, "llamacpp-b10573-models.json"), noTotal, slots, 8192, 4, "/slots"},
		{"no total_slots, no /slots", wiretest.ReadTranscript(t, "llamacpp-b10573-models.json"), noTotal, nil, 8192, 0, ""},
		{"not llama.cpp", wiretest.ReadTranscript(t, "llamacpp-b10573-models.json"), []byte(`{"total_slots":"four"}`), slots, 8192, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var slotsAsked int
			mux := http.NewServeMux()
			mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(tt.models) })
			mux.HandleFunc("GET /props", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(tt.props) })
			mux.HandleFunc("GET /slots", func(w http.ResponseWriter, r *http.Request) {
				slotsAsked++
				if tt.slots == nil {
					http.Error(w, `{"error":{"code":501,"message":"This server does not support slots endpoint.","type":"not_supported_error"}}`, http.StatusNotImplemented)
					return
				}
				_, _ = w.Write(tt.slots)
			})
			d, err := Discover(t.Context(), Target{BaseURL: "http://llama.invalid/v1", HTTPClient: wiretest.Serve(t, mux)})
			require.NoError(t, err)
			require.Equal(t, tt.window, d.Window)
			require.Equal(t, tt.wantSlots, d.Slots)
			require.Equal(t, tt.wantSource, d.SlotsSource)
			if tt.wantSource == "/props" {
				require.Zero(t, slotsAsked, "/slots is asked only when /props names no total_slots")
			}
		})
	}
}

// TestRunConcurrencyAboveSlots: a run against the captured llama-server
// with more requests in flight than its 4 slots says so once, in the
// artifact's context_window (slots, slots_source and the note), naming
// the queueing and --parallel's split of --ctx-size; at 4 nothing is said.
func TestRunConcurrencyAboveSlots(t *testing.T) {
	for _, conc := range []int{4, 6} {
		synctest.Test(t, func(t *testing.T) {
			srv := newLlamaCppServer(t)
			target := Target{BaseURL: "http://llama.invalid/v1", HTTPClient: wiretest.Serve(t, srv.handler()), MetricsURL: "off"}
			rep, err := Run(t.Context(), target, Workload{MaxTokens: 64, Requests: conc, Concurrency: conc, ContextTokens: 1000, PromptSizing: promptSizingExact})
			require.NoError(t, err)
			require.Equal(t, conc, rep.Completed, "failures: %+v", rep.Failures)
			cw := rep.AnvilGo.ContextWindow
			require.Equal(t, 4, *cw.Slots)
			require.Equal(t, "/props", *cw.SlotsSource)
			if conc == 4 {
				require.Nil(t, cw.Note)
				return
			}
			require.NotNil(t, cw.Note)
			require.Equal(t, "Workload.Concurrency 6 exceeds the 4 slots the server runs at once (/props): up to 2 requests wait in the server's queue, and that wait is part of their TTFT; "+
				"llama.cpp's --parallel splits --ctx-size across its slots, each serving the window of 8192 tokens it advertises (/models): raise --parallel (and --ctx-size with it) or lower the concurrency", *cw.Note)
		})
	}
}

// TestDiscoverWindowOutOfRange: a /models window outside 1..MaxContextTokens
// is named with its value and the range, not reported as missing.
func TestDiscoverWindowOutOfRange(t *testing.T) {
	for _, v := range []string{"0", "-4096", "4194304"} {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model","max_model_len":` + v + `}]}`))
		})
		_, err := Discover(t.Context(), Target{BaseURL: "http://vllm.invalid/v1", HTTPClient: wiretest.Serve(t, mux)})
		require.ErrorIs(t, err, ErrInvalidConfig)
		require.ErrorContains(t, err, `the /models entry "m" has max_model_len `+v+`, out of the range 1..1048576 of a window`)
	}
}
