package fakeserver

import "time"

// group is a run of same-kind tokens written as one output chunk.
type group struct {
	kind   tokenKind
	text   string
	tokens int
	at     time.Duration // when the engine produced its last token
}

// chunker cuts the engine's step outputs into output chunks. With size 0
// each step's tokens are one chunk per kind (a speculative step's accepted
// tokens arrive together). With size k > 0 a chunk is sent as soon as k
// tokens of one kind are ready, at the time the step producing its last
// token ended; a chunk is shorter only when the kind changes (reasoning to
// content) or the output ends. pending carries tokens across steps.
type chunker struct {
	plan    *outputPlan
	size    int
	pending group
}

// feed returns the chunks ready after outs; final flushes the rest.
func (c *chunker) feed(outs []stepOut, final bool) []group {
	var gs []group
	flush := func() {
		if c.pending.tokens > 0 {
			gs = append(gs, c.pending)
		}
		c.pending = group{}
	}
	for _, o := range outs {
		for i := o.from; i < o.to; i++ {
			t := c.plan.at(i)
			if c.pending.tokens > 0 && (t.kind != c.pending.kind || (c.size == 0 && i == o.from)) {
				flush()
			}
			c.pending.kind = t.kind
			c.pending.text += t.text
			c.pending.tokens++
			c.pending.at = o.at
			if c.size > 0 && c.pending.tokens == c.size {
				flush()
			}
		}
		if c.size == 0 {
			flush()
		}
	}
	if final {
		flush()
	}
	return gs
}
