package completions

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/capture"
	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
)

// summary is what a stream tells the client, folded from its events the
// way capacity/PROTOCOL.md#api-completions says: the last usage object whose counts
// are not all zero wins.
type summary struct {
	Events, Nulls int
	Texts         int // chunks with a non-empty text
	FirstText     int // index of the first, -1 when none
	Text          string
	Finish        []string
	Usage         [4]int64 // prompt, completion, total, cached; -1 when absent
	ZeroUsage     int      // chunks whose usage counts are all zero
	Done          bool
	Error         string
}

func count(n jsonpick.Int) int64 {
	if v, ok := n.Int64(); ok {
		return v
	}
	return -1
}

func fold(t *testing.T, file string) summary {
	evs, err := capture.Events(file)
	require.NoError(t, err)
	s := summary{FirstText: -1, Usage: [4]int64{-1, -1, -1, -1}}
	d := NewDecoder()
	for _, ev := range evs {
		s.Events++
		if string(bytes.TrimSpace(ev.Data)) == "[DONE]" {
			s.Done = true
			continue
		}
		check(t, d, ev.Data)
		e, err := d.Decode(ev.Data)
		require.NoError(t, err)
		if e.Null {
			s.Nulls++
		}
		text := false
		for _, c := range e.Choices {
			if c.Text.NonEmpty() {
				text = true
				s.Text += c.Text.String()
			}
			if c.FinishReason.NonEmpty() {
				s.Finish = append(s.Finish, c.FinishReason.String())
			}
		}
		if text {
			s.Texts++
			if s.FirstText < 0 {
				s.FirstText = ev.Index
			}
		}
		if u := e.Usage; u.Present {
			c := [4]int64{count(u.Prompt), count(u.Completion), count(u.Total), count(u.Cached)}
			if c[0] == 0 && c[1] == 0 && c[2] == 0 {
				s.ZeroUsage++
			} else {
				s.Usage = c
			}
		}
		if e.Error != nil {
			s.Error = string(e.Error)
		}
	}
	require.Zero(t, d.Fallbacks(), "%s went to encoding/json", file)
	return s
}

// TestCaptures decodes every completions stream of the real captures and
// checks what each tells the client against what its README says.
func TestCaptures(t *testing.T) {
	want := map[string]summary{
		// Every chunk before the usage chunk carries all-zero usage.
		"ollama-0.17.4-completions-stream-usage.sse": {Events: 11, Texts: 8, FirstText: 0, Text: " or o forK def d lG",
			Finish: []string{"length"}, Usage: [4]int64{21, 8, 29, -1}, ZeroUsage: 9, Done: true},
		"ollama-0.17.4-completions-stream-nousage.sse": {Events: 6, Texts: 4, FirstText: 0, Text: " or o forK",
			Finish: []string{"length"}, Usage: [4]int64{-1, -1, -1, -1}, Done: true},
		// Usage rides on the finish chunk, asked for or not.
		"llamacpp-b10573-completions-stream-usage.sse": {Events: 10, Texts: 8, FirstText: 0, Text: ". l this l this# o for",
			Finish: []string{"length"}, Usage: [4]int64{21, 8, 29, 0}, Done: true},
		"llamacpp-b10573-completions-stream-nousage.sse": {Events: 6, Texts: 4, FirstText: 0, Text: ". l this l",
			Finish: []string{"length"}, Usage: [4]int64{21, 4, 25, 20}, Done: true},
		// A batch of two prompts: data: null first, then each prompt's
		// chunks and usage (the client sends one prompt per request).
		"llamacpp-b10573-completions-stream-two-prompts.sse": {Events: 10, Nulls: 1, Texts: 6, FirstText: 1, Text: ".& l{ this-",
			Finish: []string{"length", "length"}, Usage: [4]int64{19, 3, 22, 2}, Done: true},
		// 6 tokens in 5 chunks: the first token was half of "é".
		"llamacpp-b10573-split-utf8-completions-stream.sse": {Events: 7, Texts: 5, FirstText: 0, Text: "éj have allt",
			Finish: []string{"length"}, Usage: [4]int64{21, 6, 27, 0}, Done: true},
		"llamacpp-b10573-bytebias-completions-stream.sse": {Events: 1, FirstText: -1, Usage: [4]int64{-1, -1, -1, -1},
			Error: `{"code":500,"message":"The model produced output that does not match the expected Content-only format","type":"server_error"}`},
	}
	capture.Table(t, capture.Dir("../../.."), want, fold, []string{"*completions*.sse"})
}
