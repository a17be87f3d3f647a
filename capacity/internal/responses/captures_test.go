package responses

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/capture"
	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
)

// summary is what a stream tells the client, folded from its events the
// way capacity/PROTOCOL.md#api-responses says.
type summary struct {
	Events               int
	Texts, Reasonings    int // events of each kind
	FirstText, FirstReas int // index of the first such event with text, -1 when none
	Text                 string
	End                  Kind // the event that ends the answer: Completed, Incomplete, Failed, Error; Other when none
	Status               string
	Usage                [5]int64 // input, output, total, cached, reasoning; -1 when absent
	Message              string   // the server's message of a Failed or Error end
	Timings              bool
}

func count(n jsonpick.Int) int64 {
	if v, ok := n.Int64(); ok {
		return v
	}
	return -1
}

// fold decodes a capture's events, each as encoding/json does and on the
// fast path, and folds them.
func fold(t *testing.T, file string) summary {
	evs, err := capture.Events(file)
	require.NoError(t, err)
	s := summary{FirstText: -1, FirstReas: -1, Usage: [5]int64{-1, -1, -1, -1, -1}}
	d := NewDecoder()
	for _, ev := range evs {
		check(t, d, string(ev.Name), ev.Data)
		e, err := d.Decode(ev.Name, ev.Data)
		require.NoError(t, err)
		s.Events++
		switch e.Kind {
		case Text:
			s.Texts++
			if e.Delta.NonEmpty() && s.FirstText < 0 {
				s.FirstText = ev.Index
			}
			s.Text += e.Delta.String()
		case Reasoning:
			s.Reasonings++
			if e.Delta.NonEmpty() && s.FirstReas < 0 {
				s.FirstReas = ev.Index
			}
		case Completed, Incomplete, Failed, Error:
			s.End, s.Status = e.Kind, e.Status.String()
			if u := e.Usage; u.Present {
				s.Usage = [5]int64{count(u.Input), count(u.Output), count(u.Total), count(u.Cached), count(u.Reasoning)}
			}
			if e.Kind == Failed || e.Kind == Error {
				s.Message = e.ErrorMessage()
			}
			s.Timings = e.Timings != nil
		}
	}
	require.Zero(t, d.Fallbacks(), "%s went to encoding/json", file)
	return s
}

// TestCaptures decodes every Responses stream of the real captures and
// checks what each tells the client against what its README says.
func TestCaptures(t *testing.T) {
	const peg = "The model produced output that does not match the expected peg-native format"
	want := map[string]summary{
		"ollama-0.17.4-responses-stream-string.sse": {Events: 16, Texts: 8, FirstText: 4, FirstReas: -1, Text: " or o forK def d lG",
			End: Completed, Status: "completed", Usage: [5]int64{21, 8, 29, 0, 0}},
		"ollama-0.17.4-responses-stream-messages.sse": {Events: 12, Texts: 4, FirstText: 4, FirstReas: -1, Text: " or o forK",
			End: Completed, Status: "completed", Usage: [5]int64{21, 4, 25, 0, 0}},
		// llama.cpp sends no output_tokens_details and its "timings" beside
		// the response; "completed" although max_output_tokens stopped it.
		"llamacpp-b10573-responses-stream-string.sse": {Events: 16, Texts: 8, FirstText: 4, FirstReas: -1, Text: "dfF{A|$ l",
			End: Completed, Status: "completed", Usage: [5]int64{71, 8, 79, 0, -1}, Timings: true},
		"llamacpp-b10573-responses-stream-messages.sse": {Events: 12, Texts: 4, FirstText: 4, FirstReas: -1, Text: "dfF{",
			End: Completed, Status: "completed", Usage: [5]int64{71, 4, 75, 70, -1}, Timings: true},
		"llamacpp-b10573-responses-stream-instructions-items.sse": {Events: 12, Texts: 4, FirstText: 4, FirstReas: -1, Text: "u q##",
			End: Completed, Status: "completed", Usage: [5]int64{115, 4, 119, 14, -1}, Timings: true},
		// Four SSE comments before response.created are no events.
		"llamacpp-b10573-responses-stream-sse-ping.sse": {Events: 10, Texts: 2, FirstText: 4, FirstReas: -1, Text: " on h",
			End: Completed, Status: "completed", Usage: [5]int64{7301, 2, 7303, 0, -1}, Timings: true},
		"llamacpp-b10573-responses-unknown-model.sse": {Events: 12, Texts: 4, FirstText: 4, FirstReas: -1, Text: "dfF{",
			End: Completed, Status: "completed", Usage: [5]int64{71, 4, 75, 70, -1}, Timings: true},
		// created and in_progress before every delta; 6 output tokens in
		// 5 deltas (the first token was half of "é").
		"llamacpp-b10573-split-utf8-responses-stream.sse": {Events: 21, Texts: 5, FirstText: 4, FirstReas: -1, Text: "ér x od",
			End: Completed, Status: "completed", Usage: [5]int64{71, 6, 77, 70, -1}, Timings: true},
		// Reasoning only: no output_text.delta at all.
		"llamacpp-b10573-think-responses-stream.sse": {Events: 11, Reasonings: 6, FirstText: -1, FirstReas: 3,
			End: Completed, Status: "completed", Usage: [5]int64{79, 6, 85, 78, -1}, Timings: true},
		// Seven created/in_progress pairs, then a data-only error object.
		"llamacpp-b10573-bytebias-responses-stream.sse": {Events: 15, FirstText: -1, FirstReas: -1,
			End: Error, Usage: [5]int64{-1, -1, -1, -1, -1}, Message: peg},
	}
	capture.Table(t, capture.Dir("../../.."), want, fold, []string{"*responses*.sse"})
}
