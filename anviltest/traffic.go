package anviltest

import (
	"crypto/rand"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/session"
	"github.com/anvilbench/anvil/capacity/trace"
	"github.com/anvilbench/anvil/capacity/traffic"
)

// Environment variables of recorded and conversational traffic: either
// variable replaces the synthetic plan of the benchmark that runs
// (capacity/PROTOCOL.md#trace-replay).
const (
	// envTrace is the path of a trace file to replay (relative to the
	// package directory, as go test runs): every row is sent at its
	// recorded offset, divided by ANVIL_TRACE_SPEEDUP, with its recorded
	// prompt and output lengths, under the benchmark's Concurrency as the
	// cap on requests in flight.
	envTrace = "ANVIL_TRACE"
	// envTraceFormat is the trace's format, mooncake, azure or jsonl, when
	// the file's name does not tell (see trace.Format).
	envTraceFormat = "ANVIL_TRACE_FORMAT"
	// envTraceSpeedUp divides every recorded offset (trace.SpeedUp).
	envTraceSpeedUp = "ANVIL_TRACE_SPEEDUP"
	// envTraceFirst replays the first N rows only (trace.First).
	envTraceFirst = "ANVIL_TRACE_FIRST"
	// envTraceWindow replays the rows recorded in START..END after the
	// trace's first row (Go durations; END may be left out), starting the
	// replay at START (trace.Window).
	envTraceWindow = "ANVIL_TRACE_WINDOW"
	// envSessions runs synthetic multi-turn sessions of this spec, its
	// compact form (session.ParseSpec), e.g.
	// turns=3,user=200,output=128,think=2s: the benchmark's Concurrency
	// is the number of concurrent users. "recorded" runs the sessions of
	// the ANVIL_TRACE file instead (anvil's JSONL with session and turn
	// keys), each started at its first turn's offset.
	envSessions = "ANVIL_SESSIONS"
	// envSessionsCount is the number of sessions of ANVIL_SESSIONS (unset:
	// one per user).
	envSessionsCount = "ANVIL_SESSIONS_COUNT"
	// envIgnoreEOS set to 1 sends "ignore_eos": true and "min_tokens" with
	// every request of a trace or of sessions, the vLLM and SGLang fields
	// that make the model produce its max_tokens; a server that rejects
	// unknown fields fails every request with it.
	envIgnoreEOS = "ANVIL_IGNORE_EOS"
)

// recordedSessions is the value of ANVIL_SESSIONS that runs a trace's
// recorded sessions.
const recordedSessions = "recorded"

// noSessionFormats names the trace formats whose rows carry no session
// (a trace of them has nothing for ANVIL_SESSIONS=recorded to run).
const noSessionFormats = "mooncake and azure"

// Traffic is what replaces a benchmark's synthetic plan (WithTraffic): a
// traffic.Replay, a *traffic.Sessions, or any value whose Workload method
// sets a Workload's Source and Schedule the same way. Workload is given
// the benchmark's Workload, with its plan's fields (Requests, Duration,
// Burst, Rate, Arrival, Burstiness, ContextTokens) cleared, so its
// Concurrency (the cap on requests in flight), MaxTokens, Timeout and the
// rest still apply.
type Traffic interface {
	Workload(w capacity.Workload) capacity.Workload
}

var (
	_ Traffic = traffic.Replay{}
	_ Traffic = (*traffic.Sessions)(nil)
)

// WithTraffic runs t instead of the benchmark's synthetic plan. It wins
// over ANVIL_TRACE and ANVIL_SESSIONS.
func WithTraffic(t Traffic) Option {
	return func(s *settings) { s.traffic = t }
}

// envTraffic is the traffic the environment asks for.
type envTraffic struct {
	path          string
	format        trace.Format
	speedUp       float64
	first         int
	window        *trace.Window
	sessions      *session.Spec
	recorded      bool // ANVIL_SESSIONS=recorded
	sessionsCount int
	ignoreEOS     *bool
}

// parseTracePath stores ANVIL_TRACE.
func parseTracePath(e *environment, v string) error {
	e.traffic.path = v
	return nil
}

// parseTraceFormat parses ANVIL_TRACE_FORMAT (trace.Format).
func parseTraceFormat(e *environment, v string) error {
	e.traffic.format = trace.Format(v)
	return e.traffic.format.Check()
}

// parseTraceSpeedUp parses ANVIL_TRACE_SPEEDUP in the range of
// trace.SpeedUp.
func parseTraceSpeedUp(e *environment, v string) error {
	f, err := strconv.ParseFloat(v, 64)
	if err == nil {
		err = trace.SpeedUp(f).Check()
	}
	e.traffic.speedUp = f
	return err
}

// parseTraceFirst parses ANVIL_TRACE_FIRST in the range of trace.First.
func parseTraceFirst(e *environment, v string) error {
	n, err := strconv.Atoi(v)
	if err == nil {
		err = trace.First(n).Check()
	}
	e.traffic.first = n
	return err
}

// parseTraceWindow parses ANVIL_TRACE_WINDOW (parseWindow).
func parseTraceWindow(e *environment, v string) error {
	w, err := parseWindow(v)
	e.traffic.window = &w
	return err
}

// parseSessions parses ANVIL_SESSIONS: "recorded", or a spec
// (session.ParseSpec).
func parseSessions(e *environment, v string) error {
	if v == recordedSessions {
		e.traffic.recorded = true
		return nil
	}
	spec, err := session.ParseSpec(v)
	e.traffic.sessions = &spec
	return err
}

// parseIgnoreEOS parses ANVIL_IGNORE_EOS.
func parseIgnoreEOS(e *environment, v string) error {
	return boolean(func(e *environment) **bool { return &e.traffic.ignoreEOS })(e, v)
}

// parseSessionsCount parses ANVIL_SESSIONS_COUNT.
func parseSessionsCount(e *environment, v string) error {
	// Each session sends at least one request: capacity's bound on
	// Workload.Requests bounds the sessions too (before any is built).
	n, err := positiveInt(v, func(n int) error {
		return checkWorkload("Workload.Requests", capacity.Workload{Requests: n})
	})
	e.traffic.sessionsCount = n
	return err
}

// parseWindow reads START..END (END may be empty).
func parseWindow(v string) (trace.Window, error) {
	start, end, ok := strings.Cut(v, "..")
	if !ok {
		return trace.Window{}, errNotAllowed
	}
	var w trace.Window
	var err error
	if w.Start, err = time.ParseDuration(start); err != nil {
		return w, err
	}
	if end != "" {
		if w.End, err = time.ParseDuration(end); err != nil {
			return w, err
		}
	}
	return w, w.Check()
}

// applyTraffic replaces w's synthetic plan with the traffic of the
// options or the environment, and reports whether it did.
func (s *settings) applyTraffic(w capacity.Workload) (capacity.Workload, bool, error) {
	e, err := s.env()
	if err != nil {
		return w, false, err
	}
	t := s.traffic
	if t == nil {
		if t, err = e.traffic.resolve(w, s.redact); err != nil || t == nil {
			return w, false, err
		}
	}
	if e.rate != 0 {
		return w, false, fmt.Errorf("anviltest: %s with a trace or sessions: their own schedule replaces the arrival rate; unset %s", envRate, envRate)
	}
	w.Requests, w.Duration, w.Burst, w.ContextTokens = 0, 0, 0, 0
	w.Rate, w.Arrival, w.Burstiness = 0, "", 0
	return t.Workload(w), true, nil
}

// ignoresEOS reports whether ANVIL_IGNORE_EOS asks for ignore_eos.
func (et envTraffic) ignoresEOS() bool { return et.ignoreEOS != nil && *et.ignoreEOS }

// resolve builds the traffic the environment asks for; nil for none. A
// trace's error passes redact before it is wrapped: a row's value may be
// a credential.
func (et envTraffic) resolve(w capacity.Workload, redact func(error) error) (Traffic, error) {
	switch {
	case et.recorded && et.path == "":
		return nil, fmt.Errorf("anviltest: %s=%s needs %s, the trace whose sessions to run", envSessions, recordedSessions, envTrace)
	case et.recorded && et.sessionsCount != 0:
		return nil, fmt.Errorf("anviltest: %s counts synthetic sessions: %s=%s runs every session of the trace", envSessionsCount, envSessions, recordedSessions)
	case et.recorded:
		return et.readSessions(redact)
	case et.path != "" && et.sessions != nil:
		return nil, fmt.Errorf("anviltest: %s and %s are both set: a run replays a trace or runs sessions, not both", envTrace, envSessions)
	case et.path == "" && et.ignoreEOS != nil && et.sessions == nil:
		return nil, fmt.Errorf("anviltest: %s needs %s or %s", envIgnoreEOS, envTrace, envSessions)
	case et.path == "" && (et.format != "" || et.speedUp != 0 || et.first != 0 || et.window != nil):
		return nil, fmt.Errorf("anviltest: %s, %s, %s and %s need %s", envTraceFormat, envTraceSpeedUp, envTraceFirst, envTraceWindow, envTrace)
	case et.sessions == nil && et.sessionsCount != 0:
		return nil, fmt.Errorf("anviltest: %s needs %s", envSessionsCount, envSessions)
	case et.sessions != nil:
		users := max(w.Concurrency, 1)
		n := et.sessionsCount
		if n == 0 {
			n = users
		}
		sess, err := traffic.Synthetic(*et.sessions, n, traffic.SessionOptions{Users: users, Salt: rand.Text(), IgnoreEOS: et.ignoresEOS()})
		if err != nil {
			return nil, fmt.Errorf("anviltest: %s: %w", envSessions, err)
		}
		return sess, nil
	case et.path != "":
		return et.readReplay(redact)
	}
	return nil, nil
}

// reader opens the trace of ANVIL_TRACE with its options; close it
// after the read.
func (et envTraffic) reader() (*trace.Reader, *os.File, error) {
	var opts []trace.Option
	if et.format != "" {
		opts = append(opts, et.format)
	}
	if et.speedUp != 0 {
		opts = append(opts, trace.SpeedUp(et.speedUp))
	}
	if et.first != 0 {
		opts = append(opts, trace.First(et.first))
	}
	if et.window != nil {
		opts = append(opts, *et.window)
	}
	f, err := os.Open(et.path)
	if err != nil {
		return nil, nil, fmt.Errorf("anviltest: %s: %w", envTrace, err)
	}
	return trace.NewReader(f, et.path, opts...), f, nil
}

// readReplay reads the trace of ANVIL_TRACE with its options.
func (et envTraffic) readReplay(redact func(error) error) (traffic.Replay, error) {
	r, f, err := et.reader()
	if err != nil {
		return traffic.Replay{}, err
	}
	defer f.Close()
	var recs []trace.Record
	for r.Scan() {
		recs = append(recs, r.Record())
	}
	desc, err := r.Description()
	if err != nil {
		return traffic.Replay{}, fmt.Errorf("anviltest: %s: %w", envTrace, redact(err))
	}
	if len(recs) == 0 {
		return traffic.Replay{}, fmt.Errorf("anviltest: %s=%q: no row to replay (file, window or %s)", envTrace, et.path, envTraceFirst)
	}
	return traffic.Replay{Records: recs, Description: &desc, Salt: rand.Text(), IgnoreEOS: et.ignoresEOS()}, nil
}

// readSessions reads the recorded sessions of the ANVIL_TRACE file.
func (et envTraffic) readSessions(redact func(error) error) (*traffic.Sessions, error) {
	r, f, err := et.reader()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recorded, err := session.Read(r)
	if err != nil {
		return nil, fmt.Errorf("anviltest: %s: %w", envTrace, redact(err))
	}
	desc, err := r.Description()
	if err != nil {
		return nil, fmt.Errorf("anviltest: %s: %w", envTrace, redact(err))
	}
	if len(recorded) == 0 {
		return nil, fmt.Errorf("anviltest: %s=%q: no session to run (file, window or %s)", envTrace, et.path, envTraceFirst)
	}
	if !slices.ContainsFunc(recorded, func(s session.Recorded) bool { return s.ID != "" }) {
		return nil, fmt.Errorf("anviltest: %s=%s: %s=%q (format %s) has no sessions: none of its %d rows has a session key (only the jsonl format carries session and turn; %s traces have none): replay its rows with %s alone, or give %s a session spec",
			envSessions, recordedSessions, envTrace, et.path, desc.Format, desc.Rows, noSessionFormats, envTrace, envSessions)
	}
	s, err := traffic.Recorded(recorded, traffic.SessionOptions{Salt: rand.Text(), IgnoreEOS: et.ignoresEOS(), Trace: &desc})
	if err != nil {
		return nil, fmt.Errorf("anviltest: %s: %w", envTrace, err)
	}
	return s, nil
}
