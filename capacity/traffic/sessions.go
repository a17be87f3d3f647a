package traffic

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/blocktext"
	"github.com/anvilbench/anvil/capacity/session"
	"github.com/anvilbench/anvil/capacity/trace"
)

// starts says how sessions start: users at once (a closed loop) or
// each at its offset (an open loop).
type starts struct {
	users   int
	offsets []time.Duration
}

// SessionOptions are how Sessions starts its sessions and writes their
// messages.
type SessionOptions struct {
	// Users, for synthetic sessions, starts that many sessions at once and
	// a new one whenever one ends: a fixed number of concurrent users (a
	// closed loop). Synthetic needs exactly one of Users and Starts.
	Users int
	// Starts, for synthetic sessions, starts session s at Starts[s] from
	// the start of the measured phase (an arrival schedule), however many
	// are running (an open loop): one non-decreasing offset per session.
	// Recorded sessions start at their recorded offsets, so Recorded
	// needs Users and Starts unset.
	Starts []time.Duration
	// CharsPerToken turns a user message's tokens into characters; 0 is
	// the reference's 3.0 characters per token.
	CharsPerToken float64
	// Salt is written into every user message (give each run its own).
	Salt string
	// IgnoreEOS sends "ignore_eos" and "min_tokens" (see Replay).
	IgnoreEOS bool
	// Trace is the trace recorded sessions were read from, for the
	// artifact's anvil_go.workload.trace; nil for none.
	Trace *trace.Description
}

// turnPlan is one planned turn.
type turnPlan struct {
	user, output int
	think        time.Duration // after the previous turn ended
	blocks       []int64       // the first turn's blocks (recorded sessions)
	blockTokens  int
	line         int // the turn's trace line (recorded sessions); 0 for synthetic ones
}

// Sessions runs conversations through a capacity run: it is the run's
// Source (an Answerer, so turn k+1 carries the answers the server
// actually gave), its Schedule, and a Gate among its Observers that ends
// dispatch when every session has ended. Use it through Workload.
//
// Which session measured request i belongs to is decided when the run
// asks when i is due (the dispatch is in index order): the session whose
// next turn is due first, among those whose previous turn has ended and
// a new session that may start (closed loop: fewer than the users
// running; open loop: its start offset). While a turn is in flight that
// could end and make another turn due earlier, the decision waits for
// it. Turn k+1 is then due its think time after turn k ended
// (capacity.DueAfter). A failed turn ends its session; it is recorded
// (the run's failure row) and never retried.
type Sessions struct {
	plans []([]turnPlan)
	ids   []string // recorded session ids; nil for synthetic sessions
	spec  string   // the synthetic sessions' spec, compact form; "" for recorded ones
	start starts
	opts  SessionOptions

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when a turn ends
	at      time.Time     // the measured phase's start (Start); zero before
	next    int           // the next session to start
	active  int           // sessions started and not ended
	state   []sessionState
	ready   []int // sessions whose last turn ended and that have turns left
	byIndex map[int]*sentTurn
	lines   map[int]int // request index -> trace line of the turn it sent (recorded sessions)
}

type sessionState struct {
	history   []capacity.Message
	turns     int // turns ended successfully
	lastIndex int
	endedAt   time.Time
	answered  int // tokens of the answers in history, at 3 characters per token
	planned   int // tokens of the user messages in history
}

type sentTurn struct {
	session, turn int // turn is 1-based
	user          capacity.Message
}

var (
	_ capacity.SizedSource = (*Sessions)(nil)
	_ capacity.Answerer    = (*Sessions)(nil)
	_ capacity.Answerer    = sizedSessions{}
	_ capacity.Schedule    = (*Sessions)(nil)
	_ capacity.Gate        = (*Sessions)(nil)
)

// Synthetic returns n sessions of spec, started as opts.Users or
// opts.Starts says (n offsets).
func Synthetic(spec session.Spec, n int, opts SessionOptions) (*Sessions, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	switch {
	case opts.Users == 0 && opts.Starts == nil:
		return nil, fmt.Errorf("traffic: SessionOptions: Users (a closed loop) or Starts (an open loop) must be set")
	case opts.Users != 0 && opts.Starts != nil:
		return nil, fmt.Errorf("traffic: SessionOptions: Users = %d and %d Starts: must be one or the other", opts.Users, len(opts.Starts))
	}
	plans := make([][]turnPlan, n)
	for s := range plans {
		plans[s] = make([]turnPlan, spec.Turns)
		for k := range plans[s] {
			plans[s][k] = turnPlan{user: spec.UserTokens, output: spec.OutputTokens, think: spec.ThinkTime(s, k+1)}
		}
	}
	s, err := newSessions(plans, starts{users: opts.Users, offsets: opts.Starts}, opts)
	if err != nil {
		return nil, err
	}
	s.spec = spec.String()
	return s, nil
}

// Recorded returns the sessions read from a trace (session.Read), each
// started at its first turn's Offset (an open loop), each turn's user
// message of its UserTokens, max_tokens its OutputTokens, sent its Think
// after the previous turn ended. The first turn's blocks open its
// message. Request.Session is the recorded session id (the session's
// index for a row without one).
func Recorded(sessions []session.Recorded, opts SessionOptions) (*Sessions, error) {
	if opts.Users != 0 || opts.Starts != nil {
		return nil, fmt.Errorf("traffic: SessionOptions: Users = %d and %d Starts: must be unset for recorded sessions, which start at their recorded offsets", opts.Users, len(opts.Starts))
	}
	plans := make([][]turnPlan, len(sessions))
	offsets := make([]time.Duration, len(sessions))
	for s, rs := range sessions {
		if len(rs.Turns) == 0 {
			return nil, fmt.Errorf("traffic: session %d (%q) has no turns", s, rs.ID)
		}
		offsets[s] = rs.Turns[0].Offset
		for k, rec := range rs.Turns {
			tp := turnPlan{user: rec.UserTokens, output: rec.OutputTokens, think: rec.Think, line: rec.Line}
			if k == 0 {
				tp.blocks, tp.blockTokens = rec.Blocks, rec.BlockTokens
			}
			plans[s] = append(plans[s], tp)
		}
	}
	s, err := newSessions(plans, starts{offsets: offsets}, opts)
	if err != nil {
		return nil, err
	}
	s.ids = make([]string, len(sessions))
	for i, rs := range sessions {
		s.ids[i] = rs.ID
	}
	return s, nil
}

func newSessions(plans [][]turnPlan, start starts, opts SessionOptions) (*Sessions, error) {
	switch {
	case len(plans) == 0:
		return nil, fmt.Errorf("traffic: no sessions")
	case start.users < 0:
		return nil, fmt.Errorf("traffic: SessionOptions.Users = %d: must be at least 1", start.users)
	case start.offsets != nil && len(start.offsets) != len(plans):
		return nil, fmt.Errorf("traffic: SessionOptions.Starts: %d offsets for %d sessions: must be one per session", len(start.offsets), len(plans))
	}
	for s := 1; s < len(start.offsets); s++ {
		if start.offsets[s] < start.offsets[s-1] {
			return nil, fmt.Errorf("traffic: SessionOptions.Starts[%d] = %v: must not be before Starts[%d] = %v", s, start.offsets[s], s-1, start.offsets[s-1])
		}
	}
	return &Sessions{plans: plans, start: start, opts: opts, changed: make(chan struct{}),
		state: make([]sessionState, len(plans)), byIndex: map[int]*sentTurn{}, lines: map[int]int{}}, nil
}

// Turns returns the number of turns planned over all sessions: the most
// measured requests the run sends.
func (s *Sessions) Turns() int {
	n := 0
	for _, p := range s.plans {
		n += len(p)
	}
	return n
}

// Workload returns w with the sessions as its Source, Schedule and one
// of its Observers, Requests the planned turns, and, for a closed loop,
// Concurrency the number of users.
func (s *Sessions) Workload(w capacity.Workload) capacity.Workload {
	w.Source, w.Schedule, w.Requests = s, s, s.Turns()
	w.Observers = append(w.Observers[:len(w.Observers):len(w.Observers)], s)
	if s.start.users > 0 {
		w.Concurrency = s.start.users
	}
	return w
}

// Start implements capacity.Observer: the start of the measured phase is
// the origin of SessionOptions.Starts, and every session starts afresh, so
// one Sessions serves run after run (never two runs at once). Its end
// hook writes anvil_go.workload (the sessions, their spec) into the
// artifact.
func (s *Sessions) Start(_ context.Context, at time.Time) func(*artifact.Report) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at = at
	s.next, s.active, s.ready = 0, 0, nil
	s.state = make([]sessionState, len(s.plans))
	clear(s.byIndex)
	clear(s.lines)
	return func(rep *artifact.Report) {
		if rep.AnvilGo == nil {
			return
		}
		rep.AnvilGo.Workload = s.sessionsWorkload()
		s.mu.Lock()
		defer s.mu.Unlock()
		for k := range rep.AnvilGo.Requests {
			d := &rep.AnvilGo.Requests[k]
			if line, ok := s.lines[d.RequestIndex]; ok {
				d.TraceLine = &line
			}
		}
	}
}

// Admit implements capacity.Gate: request i is admitted when Due gave it
// a turn; when no session has a turn left, dispatch ends.
func (s *Sessions) Admit(i int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byIndex[i] != nil
}

// Due implements capacity.Schedule; see Sessions for the choice. While it
// waits for a turn in flight it gives up when ctx ends, returning DueNow
// (which Admit does not admit). Called without Start, the first Due is
// the origin of SessionOptions.Starts.
func (s *Sessions) Due(ctx context.Context, i int) capacity.Due {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at.IsZero() {
		s.at = time.Now()
	}
	for {
		now := time.Now()
		// The candidates: the ready session due first, and a new session.
		ready, readyAt := -1, time.Time{}
		for r, sess := range s.ready {
			st := s.state[sess]
			if at := st.endedAt.Add(s.plans[sess][st.turns].think); ready < 0 || at.Before(readyAt) {
				ready, readyAt = r, at
			}
		}
		startAt, canStart := s.nextStart(now)
		useStart := canStart && (ready < 0 || !readyAt.Before(startAt))
		at := readyAt
		if useStart {
			at = startAt
		}
		inFlight := len(s.byIndex) > 0
		switch {
		case ready < 0 && !canStart && !inFlight:
			return capacity.DueNow() // nothing left: Admit ends dispatch
		case ready < 0 && !canStart, inFlight && at.After(now):
			// A turn in flight may end and make another turn due before
			// the earliest known: wait for it, or for that time.
			if !s.wait(ctx, ready >= 0 || canStart, at.Sub(now)) {
				return capacity.DueNow() // the run is over: not admitted
			}
		case useStart:
			sess := s.next
			s.next++
			s.active++
			s.byIndex[i] = &sentTurn{session: sess, turn: 1}
			if s.start.users > 0 {
				return capacity.DueNow()
			}
			return capacity.DueAt(s.start.offsets[sess])
		default:
			sess := s.ready[ready]
			s.ready = append(s.ready[:ready], s.ready[ready+1:]...)
			st := &s.state[sess]
			s.byIndex[i] = &sentTurn{session: sess, turn: st.turns + 1}
			return capacity.DueAfter(st.lastIndex, s.plans[sess][st.turns].think)
		}
	}
}

// wait releases the lock until a turn ends, d has passed (when timed) or
// ctx ends, and reports whether the run goes on.
func (s *Sessions) wait(ctx context.Context, timed bool, d time.Duration) bool {
	changed := s.changed
	var wake <-chan time.Time
	if timed {
		timer := time.NewTimer(d)
		defer timer.Stop()
		wake = timer.C
	}
	s.mu.Unlock()
	defer s.mu.Lock()
	select {
	case <-changed:
	case <-wake:
	case <-ctx.Done():
		return false
	}
	return true
}

// nextStart is when the next session may start, if one may.
func (s *Sessions) nextStart(now time.Time) (time.Time, bool) {
	if s.next >= len(s.plans) {
		return time.Time{}, false
	}
	if s.start.users > 0 {
		return now, s.active < s.start.users
	}
	return s.at.Add(s.start.offsets[s.next]), true
}

// Request implements capacity.Source: the session's history (every
// earlier user message and the answer the server gave to it) and a new
// user message of the turn's planned tokens; PromptTokens counts the
// user messages' planned tokens and the answers at 3 characters per
// token (at CharsPerToken when set).
func (s *Sessions) Request(_ context.Context, i int) (capacity.Request, error) {
	return s.request(i, s.opts.CharsPerToken, nil)
}

// SizedBy implements capacity.SizedSource: the sessions' Source with
// every user message sized to count its turn's user tokens on the server
// (its first turn's blocks, for recorded sessions, each block the length
// at which it counts its block tokens and each distinct block counted
// once), and each turn's PromptTokens what the server is to count for
// it: the chat template's tokens of its messages (Sizer.Template), the
// user messages' planned tokens and the answers, counted at the
// characters per token of the user messages' own text. It shares the
// sessions' state (s stays the run's Schedule and Gate); s itself keeps
// its own sizing for later runs.
func (s *Sessions) SizedBy(ctx context.Context, sz capacity.Sizer) (capacity.Source, error) {
	z := &sessionSizing{first: make([]int, len(s.plans))}
	var specs []textSpec
	blockTokens, turns := 0, 0
	for sess, plan := range s.plans {
		z.first[sess] = len(specs)
		turns = max(turns, len(plan))
		for k, tp := range plan {
			own, tail := s.turnText(sess, k+1)
			specs = append(specs, textSpec{blocks: tp.blocks, own: ownText(own, s.opts.Salt), tail: tail, tokens: tp.user, request: tp.user})
			if len(tp.blocks) > 0 {
				blockTokens = tp.blockTokens
			}
		}
	}
	var err error
	if z.template, err = sz.Template(ctx, 0); err != nil {
		return nil, err
	}
	if turns > 1 {
		t1, err := sz.Template(ctx, 1)
		if err != nil {
			return nil, err
		}
		z.exchange = t1 - z.template
	}
	own, tail := s.turnText(len(s.plans), 0) // a session and turn no request has
	if z.z, err = sizeTexts(ctx, sz, specs, blockTokens, s.opts.Salt, textSpec{own: own, tail: tail}); err != nil {
		return nil, err
	}
	return sizedSessions{s: s, z: z}, nil
}

// sessionSizing is what exact sizing found for sessions' user messages.
type sessionSizing struct {
	z        textSizing
	first    []int // the index in z.texts of each session's first turn
	template int   // the chat template's tokens of a first turn
	exchange int   // the tokens it adds for every earlier exchange
}

// sizedSessions is the Source and Answerer of Sessions.SizedBy.
type sizedSessions struct {
	s *Sessions
	z *sessionSizing
}

// Request implements capacity.Source.
func (z sizedSessions) Request(_ context.Context, i int) (capacity.Request, error) {
	return z.s.request(i, z.z.z.ratio, z.z)
}

// Answer implements capacity.Answerer.
func (z sizedSessions) Answer(_ context.Context, i int, a capacity.Answer) {
	z.s.answer(i, a, z.z.z.ratio)
}

// answerTokens is the planned tokens of an answer of chars characters at
// charsPerToken characters per token (0: 3.0).
func answerTokens(charsPerToken float64, chars int) int {
	if charsPerToken > 0 {
		return int(float64(chars) / charsPerToken)
	}
	return chars / 3
}

// turnText is the own text and the tail of session sess's turn (1-based).
func (s *Sessions) turnText(sess, turn int) (own, tail string) {
	own = "session " + padded(sess) + " turn " + padded(turn)
	return own, "\n# " + own + ": answer in a few lines."
}

// request is request i's turn: its user message sized by sz (nil: at
// charsPerToken), its answers counted at charsPerToken.
func (s *Sessions) request(i int, charsPerToken float64, sz *sessionSizing) (capacity.Request, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.byIndex[i]
	if st == nil {
		return capacity.Request{}, fmt.Errorf("traffic: request %d has no session turn (Due was not asked)", i)
	}
	tp := s.plans[st.session][st.turn-1]
	own, tail := s.turnText(st.session, st.turn)
	var text string
	var err error
	var sized sizedText
	if sz == nil {
		text, err = prompt(charsPerToken, tp.blocks, tp.blockTokens, tp.user, s.opts.Salt, own, tail)
	} else {
		sized = sz.z.texts[sz.first[st.session]+st.turn-1]
		if !sized.tail {
			tail = ""
		}
		if sized.overWindow {
			sized.budget, tail = 0, "" // the turn is refused before its body is built
		}
		l := blocktext.Layout{BlockTokens: tp.blockTokens, BlockLen: sz.z.blockLen, Salt: s.opts.Salt}
		var b []byte
		b, err = l.AppendText(nil, blocktext.Prompt{Blocks: tp.blocks, Own: ownText(own, s.opts.Salt), Tail: tail}, sized.budget)
		text = string(b)
	}
	if err != nil {
		return capacity.Request{}, fmt.Errorf("traffic: session %d turn %d: %w", st.session, st.turn, err)
	}
	st.user = capacity.Message{Role: "user", Content: text}
	if tp.line > 0 {
		s.lines[i] = tp.line
	}
	state := s.state[st.session]
	msgs := append(append(make([]capacity.Message, 0, len(state.history)+1), state.history...), st.user)
	req := capacity.Request{
		Messages:     msgs,
		PromptTokens: state.planned + state.answered + tp.user,
		MaxTokens:    tp.output,
		Session:      s.sessionID(st.session),
		Turn:         st.turn - 1,
	}
	if sz != nil {
		req.PromptTokens += sz.template + (st.turn-1)*sz.exchange
		if sized.unsizable {
			req.LeastTokens = req.PromptTokens - tp.user + sized.least
		}
	}
	if s.opts.IgnoreEOS {
		req.Body = forceOutput(tp.output)
	}
	return req, nil
}

// sessionID is what Request.Session says of session i: its recorded id,
// or its index for a synthetic session or a row without one.
func (s *Sessions) sessionID(i int) string {
	if i < len(s.ids) && s.ids[i] != "" {
		return s.ids[i]
	}
	return strconv.Itoa(i)
}
