package traffic

import (
	"context"
	"time"

	"github.com/anvilbench/anvil/capacity"
)

// Answer implements capacity.Answerer: a successful turn's answer joins
// its session's history; a failed turn ends its session.
func (s *Sessions) Answer(_ context.Context, i int, a capacity.Answer) {
	s.answer(i, a, s.opts.CharsPerToken)
}

func (s *Sessions) answer(i int, a capacity.Answer, charsPerToken float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.byIndex[i]
	if st == nil {
		return
	}
	delete(s.byIndex, i)
	state := &s.state[st.session]
	if a.OK {
		state.history = append(state.history, st.user, capacity.Message{Role: "assistant", Content: a.Content})
		state.planned += s.plans[st.session][st.turn-1].user
		state.answered += answerTokens(charsPerToken, len(a.Content))
		state.turns, state.lastIndex, state.endedAt = st.turn, i, time.Now()
	}
	if a.OK && state.turns < len(s.plans[st.session]) {
		s.ready = append(s.ready, st.session)
	} else {
		s.active--
	}
	close(s.changed)
	s.changed = make(chan struct{})
}
