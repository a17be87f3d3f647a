package fakeserver

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseInstructions(t *testing.T) {
	for _, tc := range []struct {
		prompt string
		want   instructions
	}{
		{"summarize the above in one line.", instructions{}},
		{"Begin your answer with ANVIL_REQ_1717_00042.", instructions{marker: "ANVIL_REQ_1717_00042", seed: "1717", index: 42}},
		{"Answer with exactly 8 words: the lowercase word code repeated.", instructions{words: 8}},
		{"Reply `code` EXACTLY 12 times, nothing else.", instructions{words: 12}},
		{"Respond with the word code exactly\n3 times", instructions{words: 3}},
		// "exactly N" without the word code is not a controlled-output request.
		{"Use exactly 5 sentences.", instructions{}},
		// "exactly" not followed by digits is not either.
		{"Begin exactly with ANVIL_REQ_9_00001 and then write code.", instructions{marker: "ANVIL_REQ_9_00001", seed: "9", index: 1}},
		// Filler mentioning other markers: the last one is the request's.
		{"ANVIL_REQ_1_00001 ... begin with ANVIL_REQ_1_00002, then exactly 2 words code",
			instructions{marker: "ANVIL_REQ_1_00002", seed: "1", index: 2, words: 2}},
		// The capacity package's closing instruction.
		{"\n# request 3: begin your answer with ANVIL_REQ_1717_00003, then reply with exactly 8 words: the lowercase word code repeated 8 times, separated by spaces, and nothing else.",
			instructions{marker: "ANVIL_REQ_1717_00003", seed: "1717", index: 3, words: 8}},
		{"reply with exactly 1 word: the lowercase word code, and nothing else.", instructions{words: 1}},
		// The filler's "compute" and "context" are not the word code.
		{"def helper_1():\n    return compute(1)  # routine specialist context\nexactly 4", instructions{}},
	} {
		got := parseInstructions(tc.prompt)
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(instructions{})); diff != "" {
			t.Errorf("parseInstructions(%q) (-want +got):\n%s", tc.prompt, diff)
		}
	}
}

func answerText(p *outputPlan) string {
	var b strings.Builder
	for _, tk := range p.tokens {
		if tk.kind == kindContent {
			b.WriteString(tk.text)
		}
	}
	return b.String()
}

func TestPlanFollowsAndDisobeys(t *testing.T) {
	in := parseInstructions("Begin with ANVIL_REQ_7_99999. Answer with exactly 3 words code.")
	for _, tc := range []struct {
		fault Fault
		want  string
	}{
		{faultNone, "ANVIL_REQ_7_99999 code code code"},
		{faultOmitMarker, "code code code"},
		{faultForeignMarker, "ANVIL_REQ_7_00000 code code code"},
		{faultExtraWords, "ANVIL_REQ_7_99999 code code code and more"},
		{faultLateMarker, "Answer: ANVIL_REQ_7_99999 code code code"},
		{faultReasoningOnly, ""},
	} {
		p := planOutput(planInput{in: in, reasoning: 4, answer: 10, budget: 100, fault: tc.fault}, rand.New(rand.NewPCG(1, 2)))
		if got := answerText(p); got != tc.want {
			t.Errorf("fault %q: answer %q, want %q", tc.fault, got, tc.want)
		}
	}
	// A free answer begins with the marker and has the drawn length.
	free := parseInstructions("Begin with ANVIL_REQ_7_00001.")
	p := planOutput(planInput{in: free, answer: 12, budget: 100}, rand.New(rand.NewPCG(1, 2)))
	if got := answerText(p); !strings.HasPrefix(got, "ANVIL_REQ_7_00001 ") || len(p.tokens) != 12 {
		t.Errorf("free answer %q has %d tokens, want the marker first and 12 tokens", got, len(p.tokens))
	}
}

func TestCountTokens(t *testing.T) {
	for _, tc := range []struct {
		text string
		cpt  float64
		want int
	}{
		{"", 3.155, 0},
		{"abc", 3.155, 1},
		{"abcd", 3.155, 2},
		{strings.Repeat("x", 196608), seedCharsPerToken, 62317},
		{"héllo", 1, 5}, // code points, not bytes
	} {
		if got := countTokens(tc.text, tc.cpt); got != tc.want {
			t.Errorf("countTokens(%d chars, %v) = %d, want %d", len(tc.text), tc.cpt, got, tc.want)
		}
	}
}

// FuzzParseInstructions: any prompt parses without panicking, a found marker
// matches markerPattern, the plan honours the budget, and the answer obeys:
// it begins with the marker and, under an "exactly N" instruction, is the
// marker and N words "code" and nothing else (cut short only by the budget).
func FuzzParseInstructions(f *testing.F) {
	f.Add("Begin with ANVIL_REQ_1_00002 then exactly 3 words code", 5)
	f.Add("exactly 999999 code", 3)
	f.Add("ANVIL_REQ_99999999999999999999_00001", 1)
	f.Fuzz(func(t *testing.T, prompt string, budget int) {
		in := parseInstructions(prompt)
		if in.marker != "" && !markerRE.MatchString(in.marker) {
			t.Fatalf("marker %q does not match %s", in.marker, markerPattern)
		}
		budget = 1 + int(uint(budget)%200)
		p := planOutput(planInput{in: in, reasoning: 3, answer: 5, budget: budget}, rand.New(rand.NewPCG(1, 1)))
		if len(p.tokens) > budget || len(p.tokens) == 0 {
			t.Fatalf("plan of %d tokens for budget %d", len(p.tokens), budget)
		}
		answer := answerText(p)
		if p.finish == "stop" && !strings.HasPrefix(answer, in.marker) {
			t.Fatalf("answer %q does not begin with the marker %q", answer, in.marker)
		}
		if in.words > 0 {
			full := strings.TrimPrefix(in.marker+strings.Repeat(" code", in.words), " ")
			if !strings.HasPrefix(full, answer) || (p.finish == "stop" && answer != full) {
				t.Fatalf("answer %q (finish %s) to %d words code with marker %q", answer, p.finish, in.words, in.marker)
			}
		}
	})
}

// TestTokenPieces: for each tokenizer, the ids of a text are one per token
// (after the template's), and the cache blocks end inside the text, on
// token boundaries, invalid UTF-8 included.
func TestTokenPieces(t *testing.T) {
	for _, tok := range []string{tokenizerChars, tokenizerWords} {
		cfg := Fast()
		cfg.Tokenizer, cfg.BlockTokens = tok, 2
		cfg = cfg.withDefaults()
		for _, text := range []string{"", "abc", "a\xffb\xc3 12 e\u0301 日本語 def helper_1():", strings.Repeat("return compute(7) ", 9)} {
			n := cfg.countTokens(text)
			ids := cfg.tokenIDs(text, n+3)
			if len(ids) != n+3 {
				t.Errorf("%s %q: %d ids for %d tokens + 3", tok, text, len(ids), n)
			}
			for i, id := range ids[:3] {
				if id != vocabSize+1+i%2 {
					t.Errorf("%s %q: template id %d = %d", tok, text, i, id)
				}
			}
			ends := cfg.blockEnds(text)
			if len(ends) != n/2 && tok == tokenizerWords {
				t.Errorf("%s %q: %d blocks of 2 tokens for %d tokens", tok, text, len(ends), n)
			}
			for i, e := range ends {
				if e > len(text) || (i > 0 && e <= ends[i-1]) {
					t.Errorf("%s %q: block ends %v", tok, text, ends)
				}
			}
		}
	}
}
