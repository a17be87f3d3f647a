package capacity

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/prompt"
)

// The -update flag rewrites the Go-written golden files of this package
// (here testdata/prompts_extended.json). It is registered only if no other
// test file of the package registered it first.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files under testdata/")
	}
}

func updateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// promptGolden is testdata/prompts.json, written by gen_prompts.py, an
// independent Python implementation of the capacity/PROTOCOL.md prompt formula.
// Regenerate with: cd testdata && python3 gen_prompts.py > prompts.json
type promptGolden struct {
	Cases []struct {
		Context            int    `json:"context"`
		MaxModelLen        int    `json:"max_model_len"`
		MaxTokens          int    `json:"max_tokens"`
		Margin             int    `json:"margin"`
		SharedPrefixTokens int    `json:"shared_prefix_tokens"`
		Index              int    `json:"index"`
		Length             int    `json:"length"`
		SHA256             string `json:"sha256"`
		Prompt             string `json:"prompt"`
	} `json:"cases"`
}

func sharedOrNone(tokens int) int {
	if tokens == 0 {
		return None
	}
	return tokens
}

func TestPromptGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "prompts.json"))
	require.NoError(t, err)
	var g promptGolden
	require.NoError(t, json.Unmarshal(data, &g))
	require.GreaterOrEqual(t, len(g.Cases), 10)
	var buf []byte
	for _, c := range g.Cases {
		name := fmt.Sprintf("ctx=%d/mml=%d/shared=%d/index=%d", c.Context, c.MaxModelLen, c.SharedPrefixTokens, c.Index)
		t.Run(name, func(t *testing.T) {
			w := Workload{Requests: c.Index + 1, Concurrency: 1, ContextTokens: c.Context,
				MaxTokens: c.MaxTokens, SharedPrefixTokens: sharedOrNone(c.SharedPrefixTokens)}
			p, err := newPlan(w, c.MaxModelLen, c.Margin, "")
			require.NoError(t, err)
			buf, err = p.AppendPrompt(buf[:0], c.Index)
			require.NoError(t, err)
			if c.Prompt != "" {
				if diff := cmp.Diff(c.Prompt, string(buf)); diff != "" {
					t.Fatalf("prompt (-python +go):\n%s", diff)
				}
			}
			sum := sha256.Sum256(buf)
			require.Equal(t, c.Length, len(buf), "length")
			require.Equal(t, c.SHA256, hex.EncodeToString(sum[:]), "sha256 of a %d-byte prompt", len(buf))
		})
	}
}

// TestPromptShape checks properties every prompt has, whatever the mode:
// it is exactly int(context * 3.0) characters unless the prefix had to be
// cut, it ends with the request's closing instruction, and it is
// deterministic.
func TestPromptShape(t *testing.T) {
	modes := []Workload{
		{},
		{SharedPrefixTokens: None},
		{PromptCacheMode: promptCacheUnique},
		{PromptCacheMode: promptCacheUnique, SharedPrefixTokens: None},
		{RequestCanaries: true, Seed: -42},
		{ResponseWords: 1},
		{ResponseWords: 300, RequestCanaries: true, ControlledOutputPolicy: policyStrict},
	}
	for mi, w := range modes {
		w.Requests, w.ContextTokens = 40, 0
		p, err := newPlan(w, 262144, defaultMargin, "0123abcd")
		require.NoError(t, err)
		var a, b []byte
		for i := range p.Len() {
			a, err = p.AppendPrompt(a[:0], i)
			require.NoError(t, err)
			b, err = p.AppendPrompt(b[:0], i)
			require.NoError(t, err)
			require.Equal(t, a, b, "mode %d request %d not deterministic", mi, i)
			require.Len(t, a, prompt.Chars(p.Contexts[i]), "mode %d request %d", mi, i)
			want := string(p.layout.AppendTail(nil, i, false))
			require.True(t, strings.HasSuffix(string(a), want), "mode %d request %d lacks its tail", mi, i)
			if w.RequestCanaries {
				require.Contains(t, string(a), "begin your answer with "+client.CanaryMarker(w.Seed, i)+",")
			}
		}
	}
}

func TestUniquePromptsDiffer(t *testing.T) {
	w := Workload{Requests: 3, ContextTokens: 20000, PromptCacheMode: promptCacheUnique}
	run1, err := newPlan(w, 32768, defaultMargin, "run1")
	require.NoError(t, err)
	run2, err := newPlan(w, 32768, defaultMargin, "run2")
	require.NoError(t, err)
	w.OmitUniqueNonce = true
	fixed, err := newPlan(w, 32768, defaultMargin, "ignored")
	require.NoError(t, err)
	require.Empty(t, fixed.Nonce)

	p0, _ := run1.AppendPrompt(nil, 0)
	p1, _ := run1.AppendPrompt(nil, 1)
	q0, _ := run2.AppendPrompt(nil, 0)
	f0, _ := fixed.AppendPrompt(nil, 0)
	f0again, _ := fixed.AppendPrompt(nil, 0)
	// Requests differ from their first line on, and so do runs.
	require.NotEqual(t, firstLine(p0), firstLine(p1))
	require.NotEqual(t, firstLine(p0), firstLine(q0))
	require.Equal(t, "# request-specific prefix for request 0 of run run1", firstLine(p0))
	require.Equal(t, "# request-specific prefix for request 0", firstLine(f0))
	require.Equal(t, f0, f0again)
	// The unique prefix is as long as a shared one would be.
	shared, err := newPlan(Workload{Requests: 3, ContextTokens: 20000}, 32768, defaultMargin, "")
	require.NoError(t, err)
	s0, _ := shared.AppendPrompt(nil, 0)
	require.Equal(t, len(s0), len(p0))
	require.Equal(t, string(s0[8000*3:]), string(p0[8000*3:]), "after the prefix, unique and shared prompts agree")
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return s
}

func TestWarmupPrompt(t *testing.T) {
	p, err := newPlan(Workload{Requests: 4, Warmup: 6, RequestCanaries: true, ContextTokens: 500, SharedPrefixTokens: 100}, 4096, defaultMargin, "")
	require.NoError(t, err)
	measured := map[string]bool{}
	for i := range p.Len() {
		b, err := p.AppendPrompt(nil, i)
		require.NoError(t, err)
		measured[string(b)] = true
	}
	for k := range 6 {
		b, err := p.AppendWarmupPrompt(nil, k)
		require.NoError(t, err)
		require.Len(t, b, prompt.Chars(500))
		require.False(t, measured[string(b)])
		require.NotContains(t, string(b), client.CanaryMarkerPrefix)
		require.True(t, strings.HasSuffix(string(b), fmt.Sprintf("\n# warmup request %d: summarize the above in one line.", k)))
	}
	_, err = p.AppendWarmupPrompt(nil, -1)
	require.Error(t, err)
	_, err = p.AppendPrompt(nil, 4)
	require.ErrorContains(t, err, "request index 4: must be in 0..3")
}

// TestPromptExtendedGolden pins the prompts of the modes the reference does
// not have (unique, canaries, response words) against testdata written by
// this package with -update; TestPromptShape and TestPromptTails say why
// they are right.
func TestPromptExtendedGolden(t *testing.T) {
	cases := []struct {
		Name  string
		W     Workload
		Index int
	}{
		{"unique-nonce", Workload{PromptCacheMode: promptCacheUnique, ContextTokens: 100, SharedPrefixTokens: 40, Requests: 3}, 2},
		{"unique-omit-nonce", Workload{PromptCacheMode: promptCacheUnique, OmitUniqueNonce: true, ContextTokens: 100, SharedPrefixTokens: 40, Requests: 3}, 1},
		{"unique-no-prefix", Workload{PromptCacheMode: promptCacheUnique, ContextTokens: 60, SharedPrefixTokens: None, Requests: 1}, 0},
		{"canary", Workload{RequestCanaries: true, Seed: 1717, ContextTokens: 120, SharedPrefixTokens: 30, Requests: 6}, 5},
		{"words-strict", Workload{ResponseWords: 8, ControlledOutputPolicy: policyStrict, ContextTokens: 90, SharedPrefixTokens: None, Requests: 2}, 1},
		{"canary-words-cut", Workload{RequestCanaries: true, ResponseWords: 3, ContextTokens: 80, SharedPrefixTokens: 200, Requests: 1}, 0},
	}
	got := map[string]string{}
	for _, c := range cases {
		p, err := newPlan(c.W, 8192, defaultMargin, "f00dcafe")
		require.NoError(t, err, c.Name)
		b, err := p.AppendPrompt(nil, c.Index)
		require.NoError(t, err, c.Name)
		got[c.Name] = string(b)
	}
	path := filepath.Join("testdata", "prompts_extended.json")
	if updateGolden() {
		data, err := json.MarshalIndent(got, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, append(data, '\n'), 0o644))
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -run TestPromptExtendedGolden -update")
	var want map[string]string
	require.NoError(t, json.Unmarshal(data, &want))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("prompts (-golden +got):\n%s", diff)
	}
}

func TestPromptTooSmall(t *testing.T) {
	// A prompt budget of 10 tokens (30 characters) cannot hold a
	// 46-character closing instruction: the plan fails before any request,
	// naming the model length (the sampled contexts were clamped to the
	// budget; ContextTokens is not at fault).
	_, err := newPlan(Workload{Requests: 1}, defaultMaxTokens+defaultMargin+10, defaultMargin, "")
	require.ErrorIs(t, err, ErrInvalidConfig)
	var ce *FieldError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "Target.MaxModelLen", ce.Field)
	require.Equal(t, defaultMaxTokens+defaultMargin+10, ce.Value)
	require.ErrorContains(t, err, "leaves a prompt budget of 10 tokens (30 characters)")
	require.ErrorContains(t, err, "request 0 needs at least 16 tokens for its 46-character closing instruction")

	// The smallest context named is the smallest that plans.
	_, err = newPlan(Workload{Requests: 1}, defaultMaxTokens+defaultMargin+16, defaultMargin, "")
	require.NoError(t, err)
	_, err = newPlan(Workload{Requests: 1}, defaultMaxTokens+defaultMargin+15, defaultMargin, "")
	require.ErrorContains(t, err, "needs at least 16 tokens")
}

func BenchmarkAppendPrompt(b *testing.B) {
	for _, ctx := range []int{16000, 65536, 262144} {
		for _, mode := range []PromptCacheMode{promptCacheShared, promptCacheUnique} {
			b.Run(fmt.Sprintf("ctx=%d/%s", ctx, mode), func(b *testing.B) {
				p, err := newPlan(Workload{Requests: 64, ContextTokens: ctx, PromptCacheMode: mode, RequestCanaries: true}, 1048576, defaultMargin, "0123456789abcdef")
				require.NoError(b, err)
				benchAppendPrompt(b, p)
			})
		}
	}
}

// benchAppendPrompt measures building the prompts of p, a plan of 64
// requests, in turn into one reused buffer; bytes/s are those of the last
// request's prompt.
func benchAppendPrompt(b *testing.B, p *plan) {
	buf, err := p.AppendPrompt(nil, 63)
	require.NoError(b, err)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		buf, _ = p.AppendPrompt(buf[:0], i%64)
		i++
	}
}
