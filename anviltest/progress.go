package anviltest

import (
	"fmt"
	"io"
	"time"

	"github.com/anvilbench/anvil/capacity"
)

// progressInterval is the shortest time between two redraws of the live
// progress line.
const progressInterval = 250 * time.Millisecond

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

// progressLine draws a one-line live status of a campaign on a terminal.
// The runner calls update from one goroutine at a time; a nil
// *progressLine draws nothing.
type progressLine struct {
	w     io.Writer
	last  time.Duration
	drawn bool
}

func newProgressLine(w io.Writer) *progressLine {
	return &progressLine{w: w, last: -progressInterval}
}

// update redraws the line at most every progressInterval.
func (p *progressLine) update(pr capacity.Progress) {
	if p == nil || pr.Elapsed-p.last < progressInterval {
		return
	}
	p.last = pr.Elapsed
	fmt.Fprint(p.w, escSaveCursor+escAutowrapOff+escClearToEOL+formatProgress(pr)+escAutowrapOn+escRestoreCursor)
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

// formatProgress is the text of the progress line, short enough to fit an
// 80-column terminal after a benchmark name.
func formatProgress(pr capacity.Progress) string {
	phase := ""
	if pr.Warmup {
		phase = "warm-up "
	}
	return fmt.Sprintf("[%s%d ok %d failed %d in flight %.1fs]",
		phase, pr.Succeeded, pr.Failed, pr.InFlight, pr.Elapsed.Seconds())
}
