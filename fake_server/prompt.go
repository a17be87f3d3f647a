package fakeserver

import (
	"container/list"
	"fmt"
	"hash/fnv"
	"math"
	"regexp"
	"strconv"
)

// The instructions the fake follows, recognised anywhere in the prompt's
// user text:
//
//   - markerPattern: the last match is the request's canary marker, and the
//     answer begins with it (unless faultOmitMarker or faultForeignMarker).
//   - exactlyPattern together with codeWordPattern: "exactly N" (N >= 1, the
//     last such phrase) anywhere in a prompt that also contains the word
//     "code" asks for exactly N lowercase words "code"; the answer is then
//     the marker (if any) followed by N times " code", nothing else. The
//     surrounding sentence does not matter: "Answer with exactly 8 words: the
//     word code repeated" and "reply `code` exactly 8 times" both count.
const (
	markerPattern   = `ANVIL_REQ_(\d+)_(\d{5})`
	exactlyPattern  = `(?i)\bexactly\s+(\d{1,6})\b`
	codeWordPattern = `(?i)\bcode\b`
)

var (
	markerRE   = regexp.MustCompile(markerPattern)
	exactlyRE  = regexp.MustCompile(exactlyPattern)
	codeWordRE = regexp.MustCompile(codeWordPattern)
)

// instructions are what the prompt asks of the answer.
type instructions struct {
	marker string // "" when no marker is asked for
	seed   string // the marker's seed digits
	index  int    // the marker's request index
	words  int    // exactly this many words "code"; 0 when not asked
}

func parseInstructions(text string) instructions {
	var in instructions
	if ms := markerRE.FindAllStringSubmatch(text, -1); len(ms) > 0 {
		m := ms[len(ms)-1]
		in.marker, in.seed = m[0], m[1]
		in.index, _ = strconv.Atoi(m[2])
	}
	if ms := exactlyRE.FindAllStringSubmatch(text, -1); len(ms) > 0 && codeWordRE.MatchString(text) {
		n, _ := strconv.Atoi(ms[len(ms)-1][1])
		in.words = n
	}
	return in
}

// foreignMarker is another request's marker: the same seed, the next index.
func (in instructions) foreignMarker() string {
	return fmt.Sprintf("ANVIL_REQ_%s_%05d", in.seed, (in.index+1)%100000)
}

// blockChars is the number of prompt bytes in one prefix-cache block.
func blockChars(blockTokens int, cpt float64) int {
	return max(1, int(math.Round(float64(blockTokens)*cpt)))
}

// blockHashes hashes the full blocks of size bytes of text.
func blockHashes(text string, size int) []uint64 {
	var ends []int
	for end := size; end <= len(text); end += size {
		ends = append(ends, end)
	}
	return hashBlocks(text, ends)
}

// hashBlocks hashes the blocks of text that end at ends (ascending byte
// offsets), each hash chained to the previous one so a block only matches
// after the same prefix.
func hashBlocks(text string, ends []int) []uint64 {
	hs := make([]uint64, len(ends))
	h := fnv.New64a()
	var prev [8]byte
	start := 0
	for i, end := range ends {
		h.Reset()
		h.Write(prev[:])
		h.Write([]byte(text[start:end]))
		start = end
		v := h.Sum64()
		hs[i] = v
		for j := range prev {
			prev[j] = byte(v >> (8 * j))
		}
	}
	return hs
}

// prefixCache is an LRU set of block hashes with a capacity in blocks. Only
// the engine goroutine uses it.
type prefixCache struct {
	capacity int
	lru      *list.List // front = most recent; values are uint64
	blocks   map[uint64]*list.Element
}

func newPrefixCache(capacityBlocks int) *prefixCache {
	return &prefixCache{capacity: capacityBlocks, lru: list.New(), blocks: map[uint64]*list.Element{}}
}

// lookup returns how many leading blocks are cached and marks them used.
func (c *prefixCache) lookup(hs []uint64) int {
	n := 0
	for n < len(hs) && c.blocks[hs[n]] != nil {
		n++
	}
	for i := n - 1; i >= 0; i-- {
		c.lru.MoveToFront(c.blocks[hs[i]])
	}
	return n
}

// insert adds the blocks, evicting the least recently used beyond capacity.
// Blocks are touched last to first, so a prompt's tail is evicted before its
// head and a shared prefix survives longest, as in vLLM's block pool.
func (c *prefixCache) insert(hs []uint64) {
	if c.capacity == 0 {
		return
	}
	for i := len(hs) - 1; i >= 0; i-- {
		h := hs[i]
		if e, ok := c.blocks[h]; ok {
			c.lru.MoveToFront(e)
			continue
		}
		c.blocks[h] = c.lru.PushFront(h)
		for c.lru.Len() > c.capacity {
			old := c.lru.Back()
			c.lru.Remove(old)
			delete(c.blocks, old.Value.(uint64))
		}
	}
}
