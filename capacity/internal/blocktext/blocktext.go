package blocktext

import (
	"errors"
	"fmt"
)

// alphabet holds the first characters of blocks: block id x starts with
// alphabet[x mod len(alphabet)]. Letters and digits only, so after the
// newline that ends the previous block a tokenizer's pre-tokenizer
// starts a new token at the block's first character.
const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// FirstChars is the number of distinct first characters of blocks:
// blocks whose ids differ modulo FirstChars differ from their first
// character.
const FirstChars = len(alphabet)

// ownMark opens a prompt's unshared filler. It is not in alphabet, so the
// filler differs from any block from its first character.
const ownMark = '#'

// ErrLayout is wrapped by every error of this package.
var ErrLayout = errors.New("blocktext: invalid prompt")

// Sizing says how many characters of prompt text hold a number of
// tokens. The run's prompt sizing supplies it: CharsPerToken for a fixed
// ratio, or a SizingFunc over a calibrated curve.
type Sizing interface {
	// Chars returns the characters that hold tokens tokens; it must be
	// non-negative and the same for the same tokens during a run, since
	// every block of a run is Chars(BlockTokens) characters long.
	Chars(tokens int) int
}

// SizingFunc adapts a function to Sizing.
type SizingFunc func(tokens int) int

// Chars returns f(tokens).
func (f SizingFunc) Chars(tokens int) int { return f(tokens) }

// CharsPerToken sizes text at a fixed number of characters per token:
// Chars(n) is int(n * c), truncated toward zero as the reference
// sizing's budget (3.0 characters per token) is.
type CharsPerToken float64

// Chars returns int(tokens * c).
func (c CharsPerToken) Chars(tokens int) int { return int(float64(tokens) * float64(c)) }

// Layout is a run's block layout: every block is Sizing.Chars(BlockTokens)
// characters, the same for every request, so equal ids give equal bytes.
type Layout struct {
	// BlockTokens is the size of one block in tokens (512 for Mooncake).
	BlockTokens int
	// Sizing turns token counts into characters.
	Sizing Sizing
	// BlockLen, when positive, is the length of every block in
	// characters instead of Sizing.Chars(BlockTokens): the length exact
	// sizing found to count BlockTokens.
	BlockLen int
	// Salt, when not empty, is written on every block's first line after
	// its id: runs with different salts share no block, so a replay does
	// not find the blocks of an earlier run in the server's cache. Equal
	// ids in one run still give equal bytes.
	Salt string
}

// Prompt is one request's prompt: its blocks, its length and its own
// text.
type Prompt struct {
	// Blocks are the ids of the prompt's consecutive blocks from its
	// start.
	Blocks []int64
	// Tokens is the prompt's planned length in tokens, Tail included:
	// Text sizes the whole prompt at Sizing.Chars(Tokens) characters.
	Tokens int
	// Own identifies the request (its index, the run's nonce): it opens
	// the unshared filler that follows the blocks when they are shorter
	// than the prompt.
	Own string
	// Tail closes the prompt (the request's instruction); it is never
	// shared and never cut.
	Tail string
}

// BlockChars returns the length of one block, Sizing.Chars(BlockTokens),
// or an error when the layout cannot hold a block: a block must be long
// enough for its header (its first character and its id), so that
// different ids differ within it.
func (l Layout) BlockChars() (int, error) {
	if l.BlockTokens < 1 {
		return 0, fmt.Errorf("%w: Layout.BlockTokens = %d: must be at least 1", ErrLayout, l.BlockTokens)
	}
	n, what := l.BlockLen, "Layout.BlockLen"
	if n <= 0 {
		if l.Sizing == nil {
			return 0, fmt.Errorf("%w: Layout.Sizing: must be non-nil", ErrLayout)
		}
		n, what = l.Sizing.Chars(l.BlockTokens), fmt.Sprintf("Layout.Sizing.Chars(%d)", l.BlockTokens)
	}
	if least := l.MinBlockChars(); n < least {
		return 0, fmt.Errorf("%w: %s = %d: a block must be at least %d characters (its header)", ErrLayout, what, n, least)
	}
	return n, nil
}

// MinBlockChars is the least length of a block: its longest header (a
// character, the 19 digits of the largest int64, the salt and a newline)
// and its closing newline.
func (l Layout) MinBlockChars() int {
	if l.Salt != "" {
		return minBlockChars + 1 + len(l.Salt)
	}
	return minBlockChars
}

// minBlockChars is the longest header (a character, the 19 digits of the
// largest int64 and a newline) plus the block's closing newline: every
// block holds its whole header.
const minBlockChars = 1 + 19 + 1 + 1

// Text returns the prompt's text, Sizing.Chars(p.Tokens) characters long:
// see AppendText.
func (l Layout) Text(p Prompt) (string, error) {
	if l.Sizing == nil {
		return "", fmt.Errorf("%w: Layout.Sizing: must be non-nil", ErrLayout)
	}
	b, err := l.AppendText(nil, p, l.Sizing.Chars(p.Tokens))
	return string(b), err
}

// AppendText appends the prompt's text of exactly chars characters to
// dst: the blocks' texts in order, cut to chars - len(p.Tail) characters
// (so a block cut short is a prefix of its full text); when the blocks
// are shorter, the unshared filler opened by p.Own fills up to that
// length; then p.Tail. Exact sizing varies only chars between attempts;
// every block keeps its bytes. A prompt without blocks needs no valid
// BlockTokens.
func (l Layout) AppendText(dst []byte, p Prompt, chars int) ([]byte, error) {
	bc := 0
	if len(p.Blocks) > 0 {
		var err error
		if bc, err = l.BlockChars(); err != nil {
			return dst, err
		}
	}
	avail := chars - len(p.Tail)
	if avail < 0 {
		return dst, fmt.Errorf("%w: %d characters cannot hold the tail of %d characters", ErrLayout, chars, len(p.Tail))
	}
	end := len(dst) + avail
	for _, id := range p.Blocks {
		if id < 0 {
			return dst, fmt.Errorf("%w: block id %d: must be >= 0", ErrLayout, id)
		}
		if len(dst) == end {
			break
		}
		dst = appendBlock(dst, id, l.Salt, min(bc, end-len(dst)), bc)
	}
	if n := end - len(dst); n > 0 {
		dst = appendOwn(dst, p.Own, n)
	}
	return append(dst, p.Tail...), nil
}

// AppendBlock appends the full text of block id to dst, as AppendText
// writes it: callers that stream a prompt's bytes can cache it per id.
func (l Layout) AppendBlock(dst []byte, id int64) ([]byte, error) {
	bc, err := l.BlockChars()
	if err != nil {
		return dst, err
	}
	if id < 0 {
		return dst, fmt.Errorf("%w: block id %d: must be >= 0", ErrLayout, id)
	}
	return appendBlock(dst, id, l.Salt, bc, bc), nil
}

// appendBlock appends the first n characters of the text of block id,
// whose full length is full:
//
//	{c}{di}\n                 (or {c}{di} {salt}\n)
//	def block_line():\n    return compute(line)  # shared context\n
//	def block_line():\n    return compute(line)  # shared context\n
//	...
//
// with c = alphabet[id mod FirstChars] and di the id's 19 decimal
// digits, lowest first, cut to full-1 characters and ended by a newline, so the next
// block starts a token. Only the header names the id, in as many
// characters for every id, and the lines are alike: blocks of any ids
// count alike on a tokenizer that counts digits by their number.
func appendBlock(dst []byte, id int64, salt string, n, full int) []byte {
	start := len(dst)
	stop := start + n
	body := start + full - 1 // the closing newline's position
	dst = append(dst, alphabet[id%int64(FirstChars)])
	dst = appendID(dst, id)
	if salt != "" {
		dst = append(dst, ' ')
		dst = append(dst, salt...)
	}
	dst = append(dst, '\n')
	for len(dst) < body {
		dst = append(dst, blockLine...)
	}
	dst = append(dst[:body], '\n')
	return dst[:stop]
}

// appendOwn appends n characters of the request's unshared filler:
//
//	#{own}\n
//	def own_line():\n    return compute(line)  # request context\n
//	...
//
// cut to n.
func appendOwn(dst []byte, own string, n int) []byte {
	stop := len(dst) + n
	dst = append(dst, ownMark)
	dst = append(dst, own...)
	dst = append(dst, '\n')
	for len(dst) < stop {
		dst = append(dst, ownLine...)
	}
	return dst[:stop]
}

// The lines of a block and of a request's own filler: each the same line
// over and over, without digits, so that any cut of either counts about
// its length's share of tokens on any tokenizer, and what a text counts
// grows with its length alone.
const (
	blockLine = "def block_line():\n    return compute(line)  # shared context\n"
	ownLine   = "def own_line():\n    return compute(line)  # request context\n"
)

// idDigits is the width of a block id in its header: the digits of the
// largest int64.
const idDigits = 19

// appendID appends the idDigits decimal digits of id >= 0, the lowest
// first (12345 is "5432100000000000000"): every block's header is as long
// as every other's, so headers count alike on any tokenizer that counts
// digits by their number, and two ids differ from their lowest differing
// digit on, as early in the header as their decimal forms would, never
// after a run of padding a prefix cache could share.
func appendID(dst []byte, id int64) []byte {
	for range idDigits {
		dst = append(dst, byte('0'+id%10))
		id /= 10
	}
	return dst
}
