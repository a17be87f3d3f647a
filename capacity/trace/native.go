package trace

import (
	"fmt"
	"io"
	"time"
)

// Bounds of the JSONL format's session keys.
const (
	// maxSessionBytes is the longest session id.
	maxSessionBytes = 256
	// maxTurns is the highest turn number.
	maxTurns = 100_000
)

// nativeKeys are the keys of the JSONL format (documented in doc.go and
// PROTOCOL.md#trace-replay).
var nativeKeys = []string{
	"offset_ms", "prompt_tokens", "output_tokens", "blocks", "block_tokens",
	"session", "turn", "user_tokens", "think_ms",
}

// native reads the JSONL format. block_tokens must be the same in every
// row that gives it, so equal block ids mean blocks of equal size.
type native struct {
	lines          *lines
	blockTokens    int64
	blockTokensAt  int
	blockTokensSet bool
}

func newNative(r io.Reader, name string) *native {
	return &native{lines: newLines(r, name), blockTokens: mooncakeBlockTokens}
}

func (*native) stampField() string { return "offset_ms" }

func (n *native) next(rec *Record) (time.Duration, error) {
	b, line, err := n.lines.next()
	if err != nil {
		return 0, err
	}
	rec.Line = line
	o, err := decodeObject(b, n.lines.name, line, nativeKeys)
	if err != nil {
		return 0, err
	}
	stamp, _, err := o.millis("offset_ms", true)
	if err != nil {
		return 0, err
	}
	prompt, _, err := o.int("prompt_tokens", 1, MaxTokens, true)
	if err != nil {
		return 0, err
	}
	out, _, err := o.int("output_tokens", 1, MaxTokens, true)
	if err != nil {
		return 0, err
	}
	bt, ok, err := o.int("block_tokens", 1, maxBlockTokens, false)
	if err != nil {
		return 0, err
	}
	if ok {
		if n.blockTokensSet && bt != n.blockTokens {
			v, _ := o.raw("block_tokens")
			return 0, o.fail("block_tokens", v,
				fmt.Sprintf("%d, as on line %d: equal block ids must mean blocks of one size", n.blockTokens, n.blockTokensAt))
		}
		n.blockTokens, n.blockTokensAt, n.blockTokensSet = bt, line, true
	}
	ids, err := o.ids("blocks", MaxTokens)
	if err != nil {
		return 0, err
	}
	rec.PromptTokens, rec.OutputTokens = int(prompt), int(out)
	if ids != nil {
		rec.Blocks, rec.BlockTokens = ids, int(n.blockTokens)
	}
	return stamp, n.session(o, rec)
}

// session reads the session keys: turn is required with session and
// absent without it; user_tokens and think_ms belong to sessions, and
// think_ms to turns after the first.
func (n *native) session(o object, rec *Record) error {
	s, hasSession, err := o.str("session", maxSessionBytes)
	if err != nil {
		return err
	}
	if !hasSession {
		for _, k := range []string{"turn", "user_tokens", "think_ms"} {
			if v, ok := o.raw(k); ok {
				return o.fail(k, v, "absent in a row without a session")
			}
		}
		return nil
	}
	turn, _, err := o.int("turn", 1, maxTurns, true)
	if err != nil {
		return err
	}
	user, _, err := o.int("user_tokens", 1, int64(rec.PromptTokens), false)
	if err != nil {
		return err
	}
	think, hasThink, err := o.millis("think_ms", false)
	if err != nil {
		return err
	}
	if hasThink && turn == 1 {
		v, _ := o.raw("think_ms")
		return o.fail("think_ms", v, "absent on turn 1 (a session's first turn is sent at its offset)")
	}
	rec.Session, rec.Turn, rec.UserTokens, rec.Think = s, int(turn), int(user), think
	return nil
}
