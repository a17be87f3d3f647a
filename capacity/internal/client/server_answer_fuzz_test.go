package client

import (
	"testing"
)

// FuzzServerAnswers feeds arbitrary bytes to the readers of what a server
// says about itself: llama.cpp's timings object and its over-window
// refusal. Neither may panic, and what they accept keeps its documented
// range.
func FuzzServerAnswers(f *testing.F) {
	f.Add([]byte(`{"cache_n":0,"prompt_n":71,"prompt_ms":104.236,"predicted_n":8,"predicted_ms":1.985}`))
	f.Add([]byte(`{"error":{"code":400,"type":"exceed_context_size_error","n_prompt_tokens":44722,"n_ctx":8192}}`))
	f.Add([]byte(`{"prompt_ms":1e400,"cache_n":-1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if st := serverTimingsOf(b); st != nil {
			for _, n := range []*int{st.CacheN, st.PromptN, st.PredictedN} {
				if n != nil && *n < 0 {
					t.Fatalf("negative count %d from %q", *n, b)
				}
			}
			for _, ms := range []*float64{st.PromptMS, st.PredictedMS} {
				if ms != nil && !(*ms >= 0) {
					t.Fatalf("bad duration %v from %q", *ms, b)
				}
			}
		}
		if r, ok := parseWindowRefusal(string(b)); ok && (r.PromptTokens <= 0 || r.Window <= 0) {
			t.Fatalf("refusal %+v from %q", r, b)
		}
	})
}
