package traffic

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/internal/blocktext"
	"github.com/anvilbench/anvil/capacity/internal/budget"
)

// This file is exact sizing of the prompts a replay and sessions write
// (capacity/PROTOCOL.md#exact-sizing-traffic): every block is the length
// that counts its block tokens, each distinct block is counted once, and
// each prompt's budget is searched until its blocks' counts and the count
// of the rest (the last block cut short, the request's own text, its
// tail) make its planned tokens.

// textSpec is one prompt text to size: the content of one user message.
type textSpec struct {
	blocks    []int64
	own, tail string
	tokens    int // the tokens the text is to count as a message's content
	request   int // the tokens its whole request is planned at
}

// sizedText is a text's budget in characters, whether it keeps its tail,
// and, when even its least budget counts more than its tokens (a plan
// below the chat template's tokens: unsizable), what that least budget
// counts. A text of a request planned at or above the window is not sized
// (overWindow): the engine refuses the request before its body is built.
type sizedText struct {
	budget     int
	tail       bool
	unsizable  bool
	least      int
	overWindow bool
}

// textSizing is what sizing learned of a source's texts: the block length
// and the texts' budgets.
type textSizing struct {
	blockLen int // 0 without blocks
	texts    []sizedText
	ratio    float64 // the characters per token of the own text, at the size of the median text
}

// countWorkers is the most counts of distinct blocks sent at once to a
// tokenizer endpoint.
const countWorkers = 8

// ownKindName names the requests' own text in errors.
const ownKindName = "the requests' own text"

// sizeTexts sizes specs for the server s describes. blockTokens is the
// size of every block; salt is the run's; sample is the own text and the
// tail of the calibration samples: like the requests', the own text one
// no request has.
func sizeTexts(ctx context.Context, s capacity.Sizer, specs []textSpec, blockTokens int, salt string, sample textSpec) (textSizing, error) {
	var z textSizing
	ids := map[int64]bool{}
	var maxID int64 = -1
	window := s.Window()
	fits := func(sp textSpec) bool { return window <= 0 || sp.request < window }
	var sized []textSpec // the specs of requests that fit the window
	for _, sp := range specs {
		if fits(sp) {
			sized = append(sized, sp)
		}
	}
	for _, sp := range sized {
		for _, id := range sp.blocks {
			ids[id] = true
			maxID = max(maxID, id)
		}
	}
	c := &textCounter{exact: s.Exact(), layout: blocktext.Layout{BlockTokens: blockTokens, Salt: salt}}
	ownKind := capacity.TextKind{Name: ownKindName, Write: ownSample(ownText(sample.own, salt)), Tokens: ownSizes(sized, blockTokens)}
	var err error
	if c.own, err = s.Counter(ctx, ownKind); err != nil {
		return z, err
	}
	if !c.exact && sample.tail != "" {
		// Every tail is as long as every other and counts alike: one
		// calibration request counts them all.
		if c.tail, err = s.Count(ctx, sample.tail); err != nil {
			return z, err
		}
	}
	if len(ids) > 0 {
		// From a block's header (about 20 tokens) up to a whole block: the
		// curve is calibrated where the last block of a prompt is cut.
		if c.blocks, err = s.Counter(ctx, capacity.TextKind{Name: "block text", Write: blockSample(c.layout, maxID+1),
			Tokens: []int{min(8, blockTokens), blockTokens}}); err != nil {
			return z, err
		}
		sorted := slices.Sorted(maps.Keys(ids))
		if c.layout.BlockLen, err = blockLength(ctx, c.blocks, c.layout, sorted[len(sorted)/2]); err != nil {
			return z, err
		}
		if c.counts, err = countBlocks(ctx, c.blocks, c.layout, sorted); err != nil {
			return z, err
		}
		z.blockLen = c.layout.BlockLen
	}
	if z.ratio, err = ownRatio(ctx, c.own, sized, ownKind.Write); err != nil {
		return z, err
	}
	z.texts = make([]sizedText, len(specs))
	for i, sp := range specs {
		if !fits(sp) {
			z.texts[i].overWindow = true
			continue
		}
		if z.texts[i], err = c.size(ctx, sp, z.ratio); err != nil {
			return z, err
		}
	}
	return z, nil
}

// textCounter counts prompt texts as the server does: each whole block by
// its count, and the rest of the prompt (the last block cut short, the
// own text, the tail) as one text with a tokenizer endpoint, or by kind
// from calibration: the cut block on the blocks' curve, the own text on
// its own, the tail at the count of one.
type textCounter struct {
	exact       bool
	layout      blocktext.Layout // with the block length found
	counts      map[int64]int    // the count of each distinct block
	own, blocks capacity.Counter
	tail        int // calibration: what a tail counts
}

// count is the server's count of text, the prompt of p at budget b.
func (c *textCounter) count(ctx context.Context, p blocktext.Prompt, text []byte) (int, error) {
	n, rest := 0, 0 // the tokens of the whole blocks, the start of the rest
	body := len(text) - len(p.Tail)
	if len(p.Blocks) > 0 {
		full := min(body/c.layout.BlockLen, len(p.Blocks))
		for _, id := range p.Blocks[:full] {
			n += c.counts[id]
		}
		rest = full * c.layout.BlockLen
	}
	if c.exact {
		if rest < len(text) {
			m, err := c.own.Count(ctx, string(text[rest:]))
			if err != nil {
				return 0, err
			}
			n += m
		}
		return n, nil
	}
	if rest/max(c.layout.BlockLen, 1) < len(p.Blocks) && rest < body {
		cut := min(c.layout.BlockLen, body-rest) // the last block, cut short
		m, err := c.blocks.Count(ctx, string(text[rest:rest+cut]))
		if err != nil {
			return 0, err
		}
		n += m
		rest += cut
	}
	if rest < body {
		m, err := c.own.Count(ctx, string(text[rest:body]))
		if err != nil {
			return 0, err
		}
		n += m
	}
	if p.Tail != "" {
		n += c.tail
	}
	return n, nil
}

// size searches the budget of one text: see textCounter.
func (c *textCounter) size(ctx context.Context, sp textSpec, ratio float64) (sizedText, error) {
	st := sizedText{tail: sp.tail != "" && keepsTail(sp.tail, sp.tokens)}
	p := blocktext.Prompt{Blocks: sp.blocks, Own: sp.own}
	if st.tail {
		p.Tail = sp.tail
	}
	var buf []byte
	count := func(b int) (int, error) {
		var err error
		if buf, err = c.layout.AppendText(buf[:0], p, b); err != nil {
			return 0, err
		}
		return c.count(ctx, p, buf)
	}
	guess := int(math.Round(ratio * float64(sp.tokens)))
	if len(sp.blocks) > 0 {
		guess = int(math.Round(float64(c.layout.BlockLen) * float64(sp.tokens) / float64(c.layout.BlockTokens)))
	}
	r, err := budget.Search(count, sp.tokens, len(p.Tail), budget.MaxChars(max(sp.tokens, 1)), guess)
	if err != nil {
		return st, err
	}
	st.budget = r.Budget
	if r.Tokens > sp.tokens && r.Budget == len(p.Tail) {
		st.unsizable, st.least = true, r.Tokens
	}
	return st, nil
}

// ownSizes are the tokens of the own text the specs need (their tokens
// less their blocks', at blockTokens a block).
func ownSizes(specs []textSpec, blockTokens int) []int {
	var sizes []int
	for _, sp := range specs {
		n := sp.tokens - len(sp.blocks)*blockTokens
		if len(sp.blocks) > 0 {
			n = max(n, min(sp.tokens, blockTokens)/2) // the last block cut short
		}
		if n > 0 {
			sizes = append(sizes, n)
		}
	}
	return sizes
}

// ownSample writes own text as a request's own filler writes it, of own.
func ownSample(own string) func(dst []byte, n int) []byte {
	return func(dst []byte, n int) []byte {
		b, _ := blocktext.Layout{}.AppendText(dst, blocktext.Prompt{Own: own}, n)
		return b
	}
}

// blockSample writes block id, an id no request sends, n characters
// long: what a block of that length counts is what the curve of the
// samples tells, whole or cut short.
func blockSample(l blocktext.Layout, id int64) func(dst []byte, n int) []byte {
	return func(dst []byte, n int) []byte {
		l.BlockLen = max(n, l.MinBlockChars())
		start := len(dst)
		dst, _ = l.AppendBlock(dst, id)
		return dst[:start+n]
	}
}

// blockLength is the length at which block id counts l.BlockTokens.
func blockLength(ctx context.Context, c capacity.Counter, l blocktext.Layout, id int64) (int, error) {
	var buf []byte
	count := func(n int) (int, error) {
		l.BlockLen = n
		var err error
		if buf, err = l.AppendBlock(buf[:0], id); err != nil {
			return 0, err
		}
		return c.Count(ctx, string(buf))
	}
	r, err := budget.Search(count, l.BlockTokens, l.MinBlockChars(), budget.MaxChars(l.BlockTokens), defaultCharsPerToken.Chars(l.BlockTokens))
	if err != nil {
		return 0, fmt.Errorf("the length of a block of %d tokens: %w", l.BlockTokens, err)
	}
	return r.Budget, nil
}

// countBlocks counts each block of ids once, at most countWorkers at a
// time.
func countBlocks(ctx context.Context, c capacity.Counter, l blocktext.Layout, ids []int64) (map[int64]int, error) {
	counts := make(map[int64]int, len(ids))
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	next := make(chan int64)
	for range countWorkers {
		wg.Go(func() {
			var buf []byte
			for id := range next {
				var err error
				buf, err = l.AppendBlock(buf[:0], id)
				n := 0
				if err == nil {
					n, err = c.Count(ctx, string(buf))
				}
				mu.Lock()
				if err != nil && first == nil {
					first = fmt.Errorf("block %d: %w", id, err)
				}
				counts[id] = n
				mu.Unlock()
			}
		})
	}
	for _, id := range ids {
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed {
			break
		}
		next <- id
	}
	close(next)
	wg.Wait()
	return counts, first
}

// ownRatio is the characters per token of the own text at the size of
// the median spec: the first guess of every search, and the ratio
// sessions count their answers at.
func ownRatio(ctx context.Context, c capacity.Counter, specs []textSpec, write func(dst []byte, n int) []byte) (float64, error) {
	sizes := []int{64}
	for _, sp := range specs {
		sizes = append(sizes, max(sp.tokens, 1))
	}
	slices.Sort(sizes)
	chars := defaultCharsPerToken.Chars(max(sizes[len(sizes)/2], 64))
	text := write(nil, chars)
	n, err := c.Count(ctx, string(text))
	if err != nil {
		return 0, err
	}
	return min(max(float64(chars)/float64(max(n, 1)), budget.MinCharsPerToken), budget.MaxCharsPerToken), nil
}

// keepsTail reports whether a text of tokens tokens keeps its tail: when
// the tail is at most half the prompt at the reference's ratio.
func keepsTail(tail string, tokens int) bool {
	return len(tail) <= defaultCharsPerToken.Chars(tokens)/2
}

// ownText is a request's own text: what identifies it, and the salt.
func ownText(own, salt string) string {
	if salt != "" {
		return own + " " + salt
	}
	return own
}

// numberDigits is the width the numbers of a request's own text and tail
// are written in, zero-padded (a trace line, a request index, a session
// and a turn): every request's own text and tail are as long as every
// other's (below a million), so they count alike, and calibration by a
// text's length sizes the shortest prompts too.
const numberDigits = 6

// padded is n zero-padded to numberDigits digits.
func padded(n int) string {
	s := strconv.Itoa(n)
	if len(s) < numberDigits {
		s = strings.Repeat("0", numberDigits-len(s)) + s
	}
	return s
}

// lineOwn is the own text of a replayed request of trace line line.
func lineOwn(line int) string { return "trace line " + padded(line) }
