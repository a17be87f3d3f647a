package fakeserver

import (
	"hash/fnv"
	"math"
	"unicode"
	"unicode/utf8"
)

// The values of Config.Tokenizer, as documented there.
const (
	tokenizerBPE   = "bpe"
	tokenizerChars = "chars"
	tokenizerWords = "words"
)

// wordsLetterRun is the number of letters the words tokenizer counts as one
// token: a run of n letters is ceil(n / wordsLetterRun) tokens.
const wordsLetterRun = 4

// vocabSize is the number of ordinary token ids, qwen-sized; the template
// tokens use the two ids after them (qwen's <|im_start|> and <|im_end|>).
const vocabSize = 151643

// tokenizer returns c's Tokenizer, the empty one meaning "bpe".
func (c *Config) tokenizer() string {
	if c.Tokenizer == "" {
		return tokenizerBPE
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
	switch c.tokenizer() {
	case tokenizerWords:
		return len(wordPieces(text))
	case tokenizerBPE:
		n := 0
		bpeScan(text, func(int) { n++ })
		return n
	}
	return countTokens(text, c.CharsPerToken)
}

// pieces returns the byte offsets just past each token of text, for the
// tokenizers that cut text into pieces ("bpe", "words"), or nil.
func (c *Config) pieces(text string) []int {
	switch c.tokenizer() {
	case tokenizerWords:
		return wordPieces(text)
	case tokenizerBPE:
		var ends []int
		bpeScan(text, func(end int) { ends = append(ends, end) })
		return ends
	}
	return nil
}

// countTokens is tokenizerChars: ceil(code points / cpt).
func countTokens(text string, cpt float64) int {
	n := utf8.RuneCountInString(text)
	if n == 0 {
		return 0
	}
	return int(math.Ceil(float64(n) / cpt))
}

// runeClass is a character class of tokenizerWords.
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

// wordPieces cuts text into tokenizerWords tokens and returns the byte
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
		case cl == classLetter && prev == classLetter && letters < wordsLetterRun:
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
	if c.tokenizer() != tokenizerChars {
		pieces := c.pieces(text)
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
	if c.tokenizer() != tokenizerChars {
		start := 0
		for _, end := range c.pieces(text) {
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

// The costs of the "bpe" tokenizer (Config.Tokenizer).
const (
	// bpeLetterRun is the letters one token holds: a run of n ASCII
	// letters is ceil(n / bpeLetterRun) tokens, as a large vocabulary
	// holds common words whole and cuts long ones.
	bpeLetterRun = 8
	// bpePunctRun is the punctuation characters one token holds: "():"
	// is one token, "()):" two.
	bpePunctRun = 3
)

// bpeClass is a character class of the "bpe" tokenizer.
type bpeClass uint8

const (
	bpeLetter bpeClass = iota // an ASCII letter
	bpeDigit                  // an ASCII digit
	bpeSpace                  // unicode.IsSpace
	bpePunct                  // any other ASCII character
	bpeOther                  // a character outside ASCII, or an invalid byte
)

func bpeClassOf(r rune) bpeClass {
	switch {
	case 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z':
		return bpeLetter
	case '0' <= r && r <= '9':
		return bpeDigit
	case unicode.IsSpace(r):
		return bpeSpace
	case r < utf8.RuneSelf:
		return bpePunct
	}
	return bpeOther
}

// bpeScan cuts text into the "bpe" tokenizer's tokens, as a
// byte-pair-encoding tokenizer's pre-tokenizer cuts it, and calls emit
// with the byte offset just past each one:
//
//   - a run of n ASCII letters is ceil(n / bpeLetterRun) tokens, and a
//     run of n other ASCII characters (punctuation, symbols)
//     ceil(n / bpePunctRun); a single space before either is part of
//     its first token (" return" is one token);
//   - each ASCII digit is a token ("2048" is 4);
//   - a run of whitespace is one token ("\n    " is 1);
//   - every other character is a token of its own (an invalid byte too).
func bpeScan(text string, emit func(end int)) {
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		cl := bpeClassOf(r)
		if r == ' ' && i+1 < len(text) {
			if next := bpeClassOf(rune(text[i+1])); next == bpeLetter || next == bpePunct {
				i++ // the space opens the word's first token
				cl = next
			}
		}
		switch cl {
		case bpeLetter, bpePunct:
			run := bpeLetterRun
			if cl == bpePunct {
				run = bpePunctRun
			}
			n := 0
			for i < len(text) && text[i] < utf8.RuneSelf && bpeClassOf(rune(text[i])) == cl {
				i++
				if n++; n == run {
					emit(i)
					n = 0
				}
			}
			if n > 0 {
				emit(i)
			}
		case bpeSpace:
			for i < len(text) {
				r, size := utf8.DecodeRuneInString(text[i:])
				if !unicode.IsSpace(r) {
					break
				}
				i += size
			}
			emit(i)
		default:
			i += size
			emit(i)
		}
	}
}
