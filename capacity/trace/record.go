package trace

import "time"

// Bounds of a row's values. Values outside them are a
// *capacity.FieldError naming the row's line and field.
const (
	// MaxTokens is the largest prompt or output length of a row, ten
	// million tokens: far above any model's context window, low enough
	// that a prompt's character budget cannot overflow an int.
	MaxTokens = 10_000_000
	// maxBlockTokens is the largest block size of the JSONL format's
	// block_tokens (Mooncake's is fixed at mooncakeBlockTokens).
	maxBlockTokens = 1 << 20
	// maxBlockID is the largest block id, 2^53: every integer up to it is
	// exact in the float64 that JSON tools write numbers with.
	maxBlockID = 1 << 53
	// maxOffset is the latest a row may come after the trace's first
	// timestamp: 10^6 hours, far beyond any recorded trace, inside
	// time.Duration.
	maxOffset = 1_000_000 * time.Hour
	// maxLineBytes is the longest line of a JSONL trace, 16 MiB.
	maxLineBytes = 16 << 20
	// maxRecordBytes is the longest record of an Azure CSV, its fields
	// and quoted newlines included, 1 MiB: a row holds a date-time, two
	// integers and whatever other columns, about 60 bytes in the
	// published traces.
	maxRecordBytes = 1 << 20
	// mooncakeBlockTokens is the size of the blocks that Mooncake's
	// hash_ids name (FAST25-release/README.md: "The block size is 512
	// tokens").
	mooncakeBlockTokens = 512
)

// utf8BOM is the byte order mark an editor may write at a file's start;
// neither the CSV nor the JSONL reader takes it for data.
const utf8BOM = "\ufeff"

// Record is one request of a trace, in the trace's order. A Record owns
// its Blocks slice; the Reader never reuses it.
type Record struct {
	// Line is the 1-based line of the row in the trace file (the header
	// of a CSV is line 1).
	Line int
	// TraceOffset is the row's time after the trace's first timestamp (the
	// first row's), as recorded.
	TraceOffset time.Duration
	// Offset is when a replay sends the request, from the replay's start:
	// (TraceOffset - the window's Start) / the speed-up.
	Offset time.Duration
	// PromptTokens is the recorded prompt length in tokens.
	PromptTokens int
	// OutputTokens is the recorded output length in tokens, the request's
	// max_tokens in a replay.
	OutputTokens int
	// Blocks are the ids of the prompt's consecutive blocks of BlockTokens
	// tokens from its start; equal ids mean identical blocks. Nil when
	// the row has none.
	Blocks []int64
	// BlockTokens is the size of one block in tokens; 0 when Blocks is
	// nil.
	BlockTokens int
	// Session is the row's session id (JSONL format only); empty when the
	// row belongs to no session.
	Session string
	// Turn is the 1-based turn of the row in its session; 0 without one.
	Turn int
	// UserTokens is the length of the turn's new user message in tokens
	// when the row says it (JSONL user_tokens); 0 otherwise.
	UserTokens int
	// Think is the time between the end of the session's previous turn
	// and this turn's send (JSONL think_ms); 0 otherwise.
	Think time.Duration
}
