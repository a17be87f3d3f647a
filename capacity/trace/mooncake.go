package trace

import (
	"io"
	"time"
)

// mooncakeKeys are the keys of a Mooncake row, in the files' order.
var mooncakeKeys = []string{"timestamp", "input_length", "output_length", "hash_ids"}

// mooncake reads Mooncake JSONL: every row has timestamp (ms, an integer
// or a number), input_length and output_length (integers >= 1), and
// optionally hash_ids (ids of 512-token blocks).
type mooncake struct {
	lines *lines
}

func newMooncake(r io.Reader, name string) *mooncake {
	return &mooncake{lines: newLines(r, name)}
}

func (*mooncake) stampField() string { return "timestamp" }

func (m *mooncake) next(rec *Record) (time.Duration, error) {
	b, line, err := m.lines.next()
	if err != nil {
		return 0, err
	}
	rec.Line = line
	o, err := decodeObject(b, m.lines.name, line, mooncakeKeys)
	if err != nil {
		return 0, err
	}
	stamp, _, err := o.millis("timestamp", true)
	if err != nil {
		return 0, err
	}
	in, _, err := o.int("input_length", 1, MaxTokens, true)
	if err != nil {
		return 0, err
	}
	out, _, err := o.int("output_length", 1, MaxTokens, true)
	if err != nil {
		return 0, err
	}
	ids, err := o.ids("hash_ids", MaxTokens/mooncakeBlockTokens+1)
	if err != nil {
		return 0, err
	}
	rec.PromptTokens, rec.OutputTokens = int(in), int(out)
	if ids != nil {
		rec.Blocks, rec.BlockTokens = ids, mooncakeBlockTokens
	}
	return stamp, nil
}
