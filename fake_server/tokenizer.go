package fakeserver

import (
	"hash/fnv"
	"math"
	"unicode"
	"unicode/utf8"
)

// Tokenizer names the rule that counts prompt tokens. Every count the
// server reports or enforces uses it: usage.prompt_tokens (plus the chat
// template's Config.TemplateTokens), the context-length check, the prefix
// cache's blocks and /tokenize.
type Tokenizer string

// The tokenizers.
const (
	// TokenizerChars counts a text of n characters (Unicode code points) as
	// ceil(n / Config.CharsPerToken) tokens: a fixed ratio a client could
	// learn from one request. It is the default (the empty Tokenizer).
	TokenizerChars Tokenizer = "chars"
	// TokenizerWords counts by character class, so the characters per
	// token depend on the text and no fixed ratio predicts it. A text is
	// cut into maximal runs; each run costs:
	//
	//   - letters (unicode.IsLetter, with the combining marks that follow
	//     one): ceil(n / WordsLetterRun) tokens for a run of n code points;
	//   - a decimal digit (unicode.IsDigit): 1 token each, so "12" is 2;
	//   - whitespace (unicode.IsSpace): 1 token per maximal run, so
	//     "\n    " is 1;
	//   - any other character (punctuation, symbols, "_"): 1 token each.
	//
	// The line "def helper_12():\n    return compute(12)  # routine
	// specialist context\n" (70 characters) is 33 tokens, 2.1 characters
	// per token; with 4-digit numbers it is 74 characters in 37 tokens,
	// 2.0 per token.
	// Config.CharsPerToken is not used.
	TokenizerWords Tokenizer = "words"
)

// WordsLetterRun is the number of letters TokenizerWords counts as one
// token: a run of n letters is ceil(n / WordsLetterRun) tokens.
const WordsLetterRun = 4

// vocabSize is the number of ordinary token ids, qwen-sized; the template
// tokens use the two ids after them (qwen's <|im_start|> and <|im_end|>).
const vocabSize = 151643

// tokenizer returns c's Tokenizer, the empty one meaning TokenizerChars.
func (c *Config) tokenizer() Tokenizer {
	if c.Tokenizer == "" {
		return TokenizerChars
	}
	return c.Tokenizer
}

// CountTokens is the number of tokens the configured tokenizer counts in
// text, without the chat template's tokens.
func (c Config) CountTokens(text string) int {
	c = c.withDefaults()
	return c.countTokens(text)
}

func (c *Config) countTokens(text string) int {
	if c.tokenizer() == TokenizerWords {
		return len(wordPieces(text))
	}
	return countTokens(text, c.CharsPerToken)
}

// countTokens is TokenizerChars: ceil(code points / cpt).
func countTokens(text string, cpt float64) int {
	n := utf8.RuneCountInString(text)
	if n == 0 {
		return 0
	}
	return int(math.Ceil(float64(n) / cpt))
}

// runeClass is a character class of TokenizerWords.
type runeClass uint8

const (
	classLetter runeClass = iota
	classDigit
	classSpace
	classOther
)

func classOf(r rune) runeClass {
	switch {
	case unicode.IsLetter(r):
		return classLetter
	case unicode.IsDigit(r):
		return classDigit
	case unicode.IsSpace(r):
		return classSpace
	}
	return classOther
}

// wordPieces cuts text into TokenizerWords tokens and returns the byte
// offset just past each one.
func wordPieces(text string) []int {
	var ends []int
	letters := 0       // letters in the current token of a letter run
	prev := classOther // class of the previous rune
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:]) // invalid bytes: size 1
		i += size
		cl := classOf(r)
		if unicode.Is(unicode.Mn, r) && prev == classLetter {
			cl = classLetter // a combining mark stays with its letter
		}
		switch {
		case cl == classLetter && prev == classLetter && letters < WordsLetterRun:
			letters++
			ends[len(ends)-1] = i
		case cl == classSpace && prev == classSpace:
			ends[len(ends)-1] = i
		default:
			letters = 1
			ends = append(ends, i)
		}
		prev = cl
	}
	return ends
}

// blockEnds returns the byte offsets that end each full prefix-cache block
// of blockTokens tokens of text.
func (c *Config) blockEnds(text string) []int {
	var ends []int
	if c.tokenizer() == TokenizerWords {
		pieces := wordPieces(text)
		for k := c.BlockTokens; k <= len(pieces); k += c.BlockTokens {
			ends = append(ends, pieces[k-1])
		}
		return ends
	}
	size := blockChars(c.BlockTokens, c.CharsPerToken)
	for end := size; end <= len(text); end += size {
		ends = append(ends, end)
	}
	return ends
}

// tokenIDs lists the ids of a prompt of n tokens whose text is text: the
// template's n - count(text) tokens first, as the ids vocabSize+1 and
// vocabSize+2 alternating, then one id per token of text, a hash of the
// token's text (so equal pieces get equal ids).
func (c *Config) tokenIDs(text string, n int) []int {
	var pieces []string
	if c.tokenizer() == TokenizerWords {
		start := 0
		for _, end := range wordPieces(text) {
			pieces = append(pieces, text[start:end])
			start = end
		}
	} else {
		runes := []rune(text)
		cpt := c.CharsPerToken
		for i := range countTokens(text, cpt) {
			lo, hi := int(float64(i)*cpt), int(float64(i+1)*cpt)
			lo, hi = min(lo, len(runes)), min(hi, len(runes))
			pieces = append(pieces, string(runes[lo:hi]))
		}
	}
	ids := make([]int, 0, max(n, len(pieces)))
	for i := range n - len(pieces) {
		ids = append(ids, vocabSize+1+i%2)
	}
	h := fnv.New32a()
	for _, p := range pieces {
		h.Reset()
		_, _ = h.Write([]byte(p))
		ids = append(ids, int(h.Sum32()%vocabSize))
	}
	return ids
}
