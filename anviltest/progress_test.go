package anviltest

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity"
)

func TestProgressLineDrawsAfterTheNameAndClears(t *testing.T) {
	var buf bytes.Buffer
	p := newProgressLine(&buf)
	p.clear()
	require.Empty(t, buf.String(), "nothing drawn, nothing to clear")

	p.update(capacity.Progress{Succeeded: 3, Failed: 1, InFlight: 4, Elapsed: 1500 * time.Millisecond})
	require.Equal(t, "\x1b7\x1b[?7l\x1b[K[3 ok 1 failed 4 in flight 1.5s]\x1b[?7h\x1b8", buf.String(),
		"saved cursor, no autowrap (a wrap could scroll the saved position away), cleared line, text, restored")

	buf.Reset()
	p.update(capacity.Progress{Succeeded: 4, Elapsed: 1600 * time.Millisecond})
	require.Empty(t, buf.String(), "redrawn at most every progressInterval")

	p.update(capacity.Progress{Warmup: true, InFlight: 1, Elapsed: 1750 * time.Millisecond})
	require.Equal(t, "\x1b7\x1b[?7l\x1b[K[warm-up 0 ok 0 failed 1 in flight 1.8s]\x1b[?7h\x1b8", buf.String())

	buf.Reset()
	p.clear()
	require.Equal(t, "\x1b[K", buf.String())

	var nilLine *progressLine
	nilLine.update(capacity.Progress{Elapsed: time.Hour})
	nilLine.clear()
}
