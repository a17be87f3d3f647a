// Package trace reads recorded LLM-serving traffic, one request a row, for
// a replay: each request is sent at its recorded offset from the trace's
// first timestamp, divided by a speed-up, with its recorded prompt and
// output lengths and, where the trace says which prompt blocks repeat, the
// same blocks byte for byte (package internal/blocktext writes them).
//
// A Reader streams a file in the style of golang.org/x/perf/benchfmt:
//
//	r := trace.NewReader(f, "conversation_trace.jsonl", trace.Format("mooncake"), trace.SpeedUp(10))
//	for r.Scan() {
//		rec := r.Record()
//		...
//	}
//	if err := r.Err(); err != nil {
//		// trace: conversation_trace.jsonl:17: input_length = "-3": must be an integer in [1, 10000000]
//	}
//	desc, _ := r.Description() // file, format, sha256, rows used, options
//
// The first malformed row ends the scan with a *capacity.FieldError
// naming the file, the line and the field. Rows must be in time order
// (equal timestamps allowed); a row earlier than the one before it is an
// error, never silently reordered. Blank lines of a JSONL file are
// skipped, and a UTF-8 byte order mark starting a file of either format.
// Every read is bounded: a JSONL line is at most 16 MiB, a CSV record at
// most 1 MiB, its fields and quoted newlines included; a longer one is an
// error at the line it starts on.
//
// # Formats
//
// The format is given to NewReader as an Option, or told from the file's name
// (see Format): a .csv file is Azure, a .jsonl file whose name holds
// "mooncake" is Mooncake, any other .jsonl file is JSONL.
//
// Mooncake (kvcache-ai/Mooncake, FAST25-release/traces): one JSON object a
// line with exactly these keys (any other key is an error):
//
//   - timestamp: arrival time in milliseconds, a number >= 0 (required);
//   - input_length: prompt tokens, an integer in [1, MaxTokens] (required);
//   - output_length: output tokens, an integer in [1, MaxTokens] (required);
//   - hash_ids: ids of the prompt's consecutive 512-token blocks, equal
//     ids meaning an identical block (optional; the last block holds the
//     rest of the prompt, so there are ceil(input_length/512) of them in
//     the published traces).
//
// Azure (Azure/AzurePublicDataset, the LLM inference traces): CSV with a
// header naming the columns TIMESTAMP (a date-time: "2023-11-16
// 18:15:46.6805900" without a zone is UTC, "2024-05-12
// 00:00:00.001163+00:00" and RFC 3339 are accepted), ContextTokens and
// GeneratedTokens (integers in [1, MaxTokens]), in any order; other
// columns are ignored.
//
// JSONL, anvil's format for users' own logs: one JSON object a line, with
// these keys (any other key is an error; null is the same as absent):
//
//   - offset_ms (required): the request's send time in milliseconds, a
//     number in [0, 3.6e12] (10^6 hours) from any origin (the first row's is the
//     trace's start).
//   - prompt_tokens (required): the prompt's length in tokens, an integer
//     in [1, MaxTokens]: the whole prompt as the server counted it, chat
//     history included.
//   - output_tokens (required): the output's length in tokens, an integer
//     in [1, MaxTokens]; a replay's max_tokens.
//   - blocks (optional): ids of the prompt's consecutive blocks of
//     block_tokens tokens from its start, integers in [0, 2^53];
//     equal ids mean identical blocks, so a prefix group (a shared system
//     prompt) is one id. Blocks may cover less than the prompt; the rest
//     is the request's own.
//   - block_tokens (optional): the size of a block in tokens, an integer
//     in [1, 2^20], 512 when absent; the same in every row that
//     gives it.
//   - session (optional): the conversation the request belongs to, a
//     string of 1 to 256 bytes.
//   - turn (required with session, absent without): the request's 1-based
//     turn in its session, up to 100000.
//   - user_tokens (optional, with session): the length of the turn's new
//     user message in tokens, in [1, prompt_tokens]. When absent it is
//     prompt_tokens on turn 1 and, later, prompt_tokens minus the previous
//     turn's prompt_tokens and output_tokens.
//   - think_ms (optional, with session, turns after the first): the
//     user's think time, from the end of the previous turn to this turn's
//     send, in milliseconds; 0 when absent.
//
// For example:
//
//	{"offset_ms": 0, "prompt_tokens": 1200, "output_tokens": 64, "blocks": [7, 8], "block_tokens": 600}
//	{"offset_ms": 250, "prompt_tokens": 900, "output_tokens": 32, "session": "u1", "turn": 1}
//	{"offset_ms": 4000, "prompt_tokens": 1100, "output_tokens": 16, "session": "u1", "turn": 2, "think_ms": 2000}
//
// # Options
//
// Options are plain values: SpeedUp(f) divides every offset by f;
// Window{Start, End} keeps the rows recorded in [Start, End) and starts
// the replay at Start; First(n) keeps the first n rows inside the window.
// A Record's TraceOffset is always as recorded, its Offset is the
// replay's: (TraceOffset - Start) / f.
//
// # Description
//
// Once the scan has ended, Description returns what a replay's artifact
// records of its workload: the file's base name, format, the SHA-256 of
// all its bytes (the Reader reads the rest of the file after the window
// or First rows, so the sum never depends on the options), its size, the
// rows used and the options. Two replays are the same workload only when
// their Descriptions are equal.
package trace
