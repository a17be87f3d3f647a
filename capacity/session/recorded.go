package session

import (
	"fmt"
	"strconv"

	"github.com/anvilbench/anvil/capacity/internal/field"

	"github.com/anvilbench/anvil/capacity/trace"
)

// Recorded is a session read from a trace: its turns in order.
type Recorded struct {
	// ID is the row's session id; empty for a row without one, which is a
	// session of one turn.
	ID string
	// Turns holds turn k at index k-1. Every turn's UserTokens is set:
	// as the row gives it, or derived (see Read).
	Turns []trace.Record
}

// Read reads the sessions of a trace in anvil's JSONL format (the rows'
// session and turn keys), ordered by their first turn's row. A session's
// rows must come as turns 1, 2, 3... in the file (which is in time
// order); a turn out of sequence is a *capacity.FieldError naming its line.
// A row without a session is a session of one turn. A turn without
// user_tokens gets UserTokens = PromptTokens on turn 1, and later
// PromptTokens minus the previous turn's PromptTokens and OutputTokens,
// which must leave at least one token.
//
// Read consumes r; r.Description describes the trace afterwards.
func Read(r *trace.Reader) ([]Recorded, error) {
	var out []Recorded
	index := map[string]int{}
	for r.Scan() {
		rec := r.Record()
		if rec.Session == "" {
			if rec.UserTokens == 0 {
				rec.UserTokens = rec.PromptTokens
			}
			out = append(out, Recorded{Turns: []trace.Record{rec}})
			continue
		}
		i, ok := index[rec.Session]
		if !ok {
			i = len(out)
			index[rec.Session] = i
			out = append(out, Recorded{ID: rec.Session})
		}
		s := &out[i]
		if want := len(s.Turns) + 1; rec.Turn != want {
			return nil, &field.Error{Pkg: pkg, Kind: errInvalid, Where: r.Name() + ":" + strconv.Itoa(rec.Line), Field: "turn", Value: rec.Turn,
				Rule: "must be " + fmt.Sprintf("%d, the next turn of session %q", want, rec.Session)}
		}
		if rec.UserTokens == 0 {
			rec.UserTokens = rec.PromptTokens
			if n := len(s.Turns); n > 0 {
				prev := s.Turns[n-1]
				history := prev.PromptTokens + prev.OutputTokens
				if rec.PromptTokens <= history {
					return nil, &field.Error{Pkg: pkg, Kind: errInvalid, Where: r.Name() + ":" + strconv.Itoa(rec.Line), Field: "prompt_tokens", Value: rec.PromptTokens,
						Rule: "must be " + fmt.Sprintf("above %d, the previous turn's prompt_tokens + output_tokens (line %d), or give user_tokens",
							history, prev.Line)}
				}
				rec.UserTokens = rec.PromptTokens - history
			}
		}
		s.Turns = append(s.Turns, rec)
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
