package messages

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/capture"
	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
)

// summary is what a stream tells the client, folded from its events the
// way capacity/PROTOCOL.md#api-messages says: each usage count is the last one
// reported (message_delta's over message_start's).
type summary struct {
	Events                 int
	Texts, Thinkings, Ping int // events of each kind
	FirstText, FirstThink  int // index of the first such event with text, -1 when none
	Text                   string
	Start, Stop            bool // message_start, message_stop seen
	StopReason             string
	Usage                  [4]int64 // input, cache read, cache creation, output; -1 when never reported
	Message                string   // the server's message of an Error
}

func fold(t *testing.T, file string) summary {
	evs, err := capture.Events(file)
	require.NoError(t, err)
	s := summary{FirstText: -1, FirstThink: -1, Usage: [4]int64{-1, -1, -1, -1}}
	last := func(i int, n jsonpick.Int) {
		if v, ok := n.Int64(); ok {
			s.Usage[i] = v
		}
	}
	d := NewDecoder()
	for _, ev := range evs {
		check(t, d, string(ev.Name), ev.Data)
		e, err := d.Decode(ev.Name, ev.Data)
		require.NoError(t, err)
		s.Events++
		switch e.Kind {
		case Text:
			s.Texts++
			if e.Text.NonEmpty() && s.FirstText < 0 {
				s.FirstText = ev.Index
			}
			s.Text += e.Text.String()
		case Thinking:
			s.Thinkings++
			if e.Text.NonEmpty() && s.FirstThink < 0 {
				s.FirstThink = ev.Index
			}
		case MessageStart:
			s.Start = true
		case MessageDelta:
			s.StopReason = e.StopReason.String()
		case MessageStop:
			s.Stop = true
		case Ping:
			s.Ping++
		case Error:
			s.Message = e.ErrorMessage()
		}
		if u := e.Usage; u.Present {
			last(0, u.Input)
			last(1, u.CacheRead)
			last(2, u.CacheCreation)
			last(3, u.Output)
		}
	}
	require.Zero(t, d.Fallbacks(), "%s went to encoding/json", file)
	return s
}

// TestCaptures decodes every Messages stream of the real captures and
// checks what each tells the client against what its README says.
func TestCaptures(t *testing.T) {
	const peg = "The model produced output that does not match the expected peg-native format"
	want := map[string]summary{
		// Ollama's message_start input_tokens is an estimate (7, 10); the
		// real count comes in message_delta. No cache counts, no ping.
		"ollama-0.17.4-messages-stream.sse": {Events: 13, Texts: 8, FirstText: 2, FirstThink: -1, Text: " or o forK def d lG",
			Start: true, Stop: true, StopReason: "max_tokens", Usage: [4]int64{21, -1, -1, 8}},
		"ollama-0.17.4-messages-stream-no-headers.sse": {Events: 13, Texts: 8, FirstText: 2, FirstThink: -1, Text: " or o forK def d lG",
			Start: true, Stop: true, StopReason: "max_tokens", Usage: [4]int64{21, -1, -1, 8}},
		"ollama-0.17.4-messages-stream-system.sse": {Events: 9, Texts: 4, FirstText: 2, FirstThink: -1, Text: "&{- will",
			Start: true, Stop: true, StopReason: "max_tokens", Usage: [4]int64{19, -1, -1, 4}},
		// llama.cpp's input_tokens leaves out the cached prefix
		// (1 + 70 = 71 prompt tokens).
		"llamacpp-b10573-messages-stream.sse": {Events: 13, Texts: 8, FirstText: 2, FirstThink: -1, Text: "dfF{A|$ l",
			Start: true, Stop: true, StopReason: "max_tokens", Usage: [4]int64{1, 70, -1, 8}},
		"llamacpp-b10573-messages-stream-system.sse": {Events: 9, Texts: 4, FirstText: 2, FirstThink: -1, Text: " q###",
			Start: true, Stop: true, StopReason: "max_tokens", Usage: [4]int64{98, 14, -1, 4}},
		// "messages":"not an array" answered 200 with a stream generated
		// from an empty conversation.
		"llamacpp-b10573-messages-bad-messages.sse": {Events: 12, Texts: 7, FirstText: 2, FirstThink: -1, Text: "4 irQ it z[",
			Start: true, Stop: true, StopReason: "max_tokens", Usage: [4]int64{10, 14, -1, 8}},
		// No message_start: no input count anywhere in the stream.
		"llamacpp-b10573-split-utf8-messages-stream.sse": {Events: 9, Texts: 5, FirstText: 1, FirstThink: -1, Text: "ér x od",
			Stop: true, StopReason: "max_tokens", Usage: [4]int64{-1, -1, -1, 6}},
		"llamacpp-b10573-think-messages-stream.sse": {Events: 12, Thinkings: 6, FirstText: -1, FirstThink: 2,
			Start: true, Stop: true, StopReason: "max_tokens", Usage: [4]int64{1, 78, -1, 6}},
		// Cut by Ollama's token repeat limit (llm/server.go aborts a
		// prediction whose token repeats more than 30 times): the body ends
		// after the 31st " more" in a row, without content_block_stop,
		// message_delta or message_stop; the counts are message_start's
		// (its input estimate, output 0).
		"ollama-0.17.4-messages-stream-repeat-cut.sse": {Events: 109, Texts: 107, FirstText: 2, FirstThink: -1,
			Text:  ` w all8 w all8-6KKKKKK8q{KKK vQ86\A"? dA i? ally i? all all o v zCKK8 mKKKKKK more^ more e. all aboveKKKK8? l eKKKKKK more eK` + strings.Repeat(" more", 31),
			Start: true, Usage: [4]int64{14, -1, -1, 0}},
		// event: error with an OpenAI-shaped body, nothing else.
		"llamacpp-b10573-bytebias-messages-stream.sse": {Events: 1, FirstText: -1, FirstThink: -1,
			Usage: [4]int64{-1, -1, -1, -1}, Message: peg},
	}
	capture.Table(t, capture.Dir("../../.."), want, fold, []string{"*-messages-*.sse"})
}
