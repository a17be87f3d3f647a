package anviltest

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/anvilbench/anvil/capacity"
)

// progressInterval is the shortest time between two redraws of the live
// progress line.
const progressInterval = 250 * time.Millisecond

// heartbeatInterval is the time between two heartbeat lines, the progress
// of a run whose standard error is not a terminal (a CI log, a file): the
// first comes when the run has been going that long, so a short run
// prints none, and a run that waits (a server that does not answer, a
// shard's start an hour ahead) says what it waits for within seconds.
const heartbeatInterval = 10 * time.Second

// Terminal control sequences of the progress line. The first run of a
// benchmark happens before the testing package prints its name; later runs
// (-count, -cpu) happen after the name, with the cursor mid-line. Either
// way the line is drawn as save cursor, autowrap off, draw, autowrap on,
// restore, and erased from the saved position to the end of the line when
// the run ends, so the numbers follow the name with no progress text
// between them. Autowrap is off while drawing so that a long name plus the
// progress text is cut at the right margin instead of wrapping: a wrap on
// the bottom line would scroll the screen and move the saved position.
const (
	escSaveCursor    = "\x1b7"
	escRestoreCursor = "\x1b8"
	escClearToEOL    = "\x1b[K"
	escAutowrapOff   = "\x1b[?7l"
	escAutowrapOn    = "\x1b[?7h"
)

// progressView is what the text of a Progress needs besides it: where the
// run points, how big it is and when a shard starts.
type progressView struct {
	target string // the base URL without credentials, or "the embedded fake server"
	// campaign is the length of a closed-loop campaign sized by time (a
	// time-based -benchtime, Workload.Duration), 0 when the request count
	// sizes it (then Progress.Planned is the total).
	campaign time.Duration
	startAt  time.Time // a shard's common start; zero for none
}

// viewOf is the progressView of a run of w against t.
func viewOf(t capacity.Target, w capacity.Workload) progressView {
	v := progressView{target: redactedURL(t.BaseURL), startAt: w.Shard.StartAt}
	if !w.OpenLoop() {
		v.campaign = w.Duration
	}
	return v
}

// text is the progress of p in one short line, at now:
//
//	discovery 12s: asking http://gpu-box:8000/v1 for the model and its window, no answer yet
//	warm-up 2s: 1 in flight (oldest 1.2s)
//	12 of 60 sent, 10 ok, 0 failed, 2 in flight (oldest 3.2s), 14.1s, about 56s to go
func (v progressView) text(p capacity.Progress, now time.Time) string {
	el := round(p.Elapsed)
	switch p.Phase {
	case "discovery":
		return fmt.Sprintf("discovery %s: asking %s for the model and its window, no answer yet", el, v.target)
	case "calibration":
		return fmt.Sprintf("calibration %s: sizing the prompts with the server's counts", el)
	case "connections":
		return fmt.Sprintf("connections %s: opening a connection per request in flight", el)
	case "start":
		if v.startAt.IsZero() {
			return fmt.Sprintf("start %s: waiting for the common start", el)
		}
		return fmt.Sprintf("start: waiting %s for the common start %s (%s)", round(v.startAt.Sub(now)), v.startAt.UTC().Format(time.RFC3339), envStartAt)
	}
	var b strings.Builder
	if p.Warmup {
		// Warm-up requests are counted apart from the measured ones.
		fmt.Fprintf(&b, "warm-up %s: %d in flight", el, p.InFlight)
		if p.Oldest > 0 {
			fmt.Fprintf(&b, " (oldest %s)", round(p.Oldest))
		}
		return b.String()
	}
	if v.campaign > 0 {
		fmt.Fprintf(&b, "%d sent", p.Dispatched)
	} else {
		fmt.Fprintf(&b, "%d of %d sent", p.Dispatched, p.Planned)
	}
	fmt.Fprintf(&b, ", %d ok, %d failed, %d in flight", p.Succeeded, p.Failed, p.InFlight)
	if p.Oldest > 0 {
		fmt.Fprintf(&b, " (oldest %s)", round(p.Oldest))
	}
	fmt.Fprintf(&b, ", %s", el)
	switch done := p.Succeeded + p.Failed; {
	case v.campaign > 0 && p.Elapsed < v.campaign:
		fmt.Fprintf(&b, " of %s", round(v.campaign))
	case v.campaign > 0:
		b.WriteString(", finishing the requests in flight")
	case done > 0 && done < p.Planned:
		left := time.Duration(float64(p.Elapsed) * float64(p.Planned-done) / float64(done))
		fmt.Fprintf(&b, ", about %s to go", round(left))
	}
	return b.String()
}

// round is d to a tenth of a second below a minute, else to the second.
func round(d time.Duration) time.Duration {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// progressLine draws a one-line live status of a campaign on a terminal.
// Progress calls update from one goroutine at a time; a nil *progressLine
// draws nothing.
type progressLine struct {
	w     io.Writer
	view  progressView
	now   func() time.Time
	last  time.Time
	drawn bool
}

func newProgressLine(w io.Writer, view progressView, now func() time.Time) *progressLine {
	return &progressLine{w: w, view: view, now: now}
}

// update redraws the line at most every progressInterval.
func (p *progressLine) update(pr capacity.Progress) {
	if p == nil {
		return
	}
	now := p.now()
	if p.drawn && now.Sub(p.last) < progressInterval {
		return
	}
	p.last = now
	fmt.Fprint(p.w, escSaveCursor+escAutowrapOff+escClearToEOL+"["+p.view.text(pr, now)+"]"+escAutowrapOn+escRestoreCursor)
	p.drawn = true
}

// clear erases the line, leaving the cursor where the testing package left
// it.
func (p *progressLine) clear() {
	if p == nil || !p.drawn {
		return
	}
	fmt.Fprint(p.w, escClearToEOL)
	p.drawn = false
}

// heartbeat writes a line of a run's progress every heartbeatInterval,
// for a standard error that is not a terminal. Each line begins with
// "[anvil]", so that no benchfmt reader takes it for a result or for
// configuration (a line "key: value" would be). A nil *heartbeat writes
// nothing.
type heartbeat struct {
	w     io.Writer
	name  string // the benchmark's
	view  progressView
	now   func() time.Time
	since time.Time // the last line, or the run's start
	phase string    // the phase of the last update
}

func newHeartbeat(w io.Writer, name string, view progressView, now func() time.Time) *heartbeat {
	return &heartbeat{w: w, name: name, view: view, now: now, since: now()}
}

// update writes a line when heartbeatInterval has passed since the last,
// and at once when a shard starts waiting for a common start further
// ahead than that: the line says until when, so that a start an hour
// ahead is not an hour of silence after a line about something else.
func (h *heartbeat) update(pr capacity.Progress) {
	if h == nil {
		return
	}
	now := h.now()
	waits := pr.Phase == "start" && h.phase != pr.Phase && h.view.startAt.Sub(now) >= heartbeatInterval
	h.phase = pr.Phase
	if !waits && now.Sub(h.since) < heartbeatInterval {
		return
	}
	h.since = now
	fmt.Fprintf(h.w, "[anvil] %s: %s\n", h.name, h.view.text(pr, now))
}

// namePending reports whether the testing package may have printed a
// benchmark's name and be waiting for its numbers on the same line while
// the run goes on, so that a line written now would split the result:
// the runs after the first of a benchmark under -count or several -cpu,
// unless -v prints names on lines of their own. Heartbeats are then off
// (the terminal's progress line is drawn and erased in place, and stays).
func namePending() bool {
	if f := flag.Lookup("test.v"); f != nil && f.Value.String() != "false" {
		return false
	}
	if f := flag.Lookup("test.count"); f != nil && f.Value.String() != "1" {
		return true
	}
	f := flag.Lookup("test.cpu")
	return f != nil && strings.Contains(f.Value.String(), ",")
}
