package trace

import "time"

// Description says which trace a replay used and how, for the run's
// artifact: two replays compare only when their Descriptions are equal.
// Reader.Description returns it once the Reader is done. The artifact
// records it as the workload's description.
type Description struct {
	// File is the base name of the trace file.
	File string
	// Format is the format the file was read as.
	Format Format
	// SHA256 is the lowercase hex SHA-256 of the file's bytes, all of
	// them, including rows outside the window or after First.
	SHA256 string
	// Bytes is the file's size in bytes.
	Bytes int64
	// Rows is the number of rows used (the Records the Reader yielded).
	Rows int
	// FirstLine and LastLine are the lines of the first and last row used;
	// 0 when none was.
	FirstLine int
	LastLine  int
	// SpeedUp is the speed-up factor (1 when not given).
	SpeedUp float64
	// WindowStart and WindowEnd are the Window option (0 and 0 when not
	// given; WindowEnd 0 means no end).
	WindowStart time.Duration
	WindowEnd   time.Duration
	// First is the First option; 0 when not given.
	First int
}
