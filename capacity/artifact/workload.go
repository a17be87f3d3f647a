package artifact

// The members of a run whose measured requests came from a trace or from
// multi-turn sessions instead of the synthetic plan (package
// capacity/traffic writes them): "anvil_go.workload" and the per-request
// keys of RequestDetail that name a request's trace row or session turn.

// Kinds of a Workload.
const (
	// WorkloadTrace is a replayed trace: Workload.Trace says which.
	WorkloadTrace = "trace"
	// WorkloadSessions is multi-turn sessions: Workload.Sessions says
	// which (and Workload.Trace the trace they were read from, if any).
	WorkloadSessions = "sessions"
)

// Workload is "anvil_go.workload": where the measured requests came from
// when not from the synthetic plan. Absent for a synthetic run.
type Workload struct {
	Kind string // "kind": WorkloadTrace or WorkloadSessions
	// Trace is "trace": the trace replayed, or the trace recorded sessions
	// were read from; nil for synthetic sessions.
	Trace *TraceWorkload
	// Sessions is "sessions": nil for a replay.
	Sessions *SessionsWorkload
	// SendLagMS is "send_lag_ms": the schedule fidelity of a replay, each
	// sent request's send offset less its offset in the trace (after the
	// speed-up), over the run; nil for sessions and for a replay that sent
	// nothing.
	SendLagMS *SendLag

	shape shape
}

// TraceWorkload is "anvil_go.workload.trace": the trace file and the
// options it was replayed with (package capacity/trace's Description).
type TraceWorkload struct {
	File   string // "file": the file's base name
	Format string // "format": mooncake, azure or jsonl
	SHA256 string // "sha256": lowercase hex SHA-256 of every byte of the file
	Bytes  int    // "bytes": the file's size
	Rows   int    // "rows": the rows used
	// FirstLine and LastLine are "first_line" and "last_line": the lines
	// of the first and last row used (0 when none was).
	FirstLine int
	LastLine  int
	SpeedUp   float64 // "speed_up": recorded offsets were divided by it
	// WindowStartMS is "window_start_ms": the window's start on the
	// recorded time, 0 without a window.
	WindowStartMS float64
	// WindowEndMS is "window_end_ms": the window's end; nil for no end.
	WindowEndMS *float64
	// First is "first": at most this many rows were used; 0 for no limit.
	First int

	shape shape
}

// SessionsWorkload is "anvil_go.workload.sessions".
type SessionsWorkload struct {
	// Spec is "spec": the synthetic sessions' spec in its compact form
	// (package capacity/session); nil for recorded sessions.
	Spec *string
	// Sessions is "sessions": the sessions planned.
	Sessions int
	// Users is "users": the concurrent users of a closed loop; nil when
	// sessions start by an arrival schedule (open loop).
	Users *int

	shape shape
}

// SendLag is "anvil_go.workload.send_lag_ms": milliseconds by which the
// sent requests left after their trace offset, over Requests of them.
type SendLag struct {
	Requests int     // "requests": the sent requests measured
	P50      float64 // "p50"
	P99      float64 // "p99"
	Max      float64 // "max"

	shape shape
}

// MarshalJSON writes w as the artifact writes "anvil_go.workload": the keys
// it was read with, or the current shape for one built in Go. (A value
// receiver, so Workload and *Workload both marshal as the member.)
func (w Workload) MarshalJSON() ([]byte, error) {
	e := artEncoder{}
	workloadTable.encode(&e, &w)
	return e.buf, e.err
}
