// Package chunk decodes the data of one server-sent event of an
// OpenAI-compatible chat-completions stream (an object of type
// chat.completion.chunk) into the few values the measurement protocol reads,
// without a general encoding/json decode and without allocating in steady
// state.
//
// # What is decoded
//
// A payload must be exactly one JSON object, with white space (as
// [bytes.TrimSpace] defines it) around it and nothing else. Of that object
// the decoder keeps:
//
//   - "choices": every element, in array order (the "index" member is not
//     read). Of each, delta.content, delta.role and finish_reason as [Text];
//     whether delta.reasoning_content and delta.reasoning are non-empty
//     strings (their text is not kept).
//   - "usage": whether it is a non-null object, and prompt_tokens,
//     completion_tokens, total_tokens and prompt_tokens_details.cached_tokens
//     as [Int].
//   - "error": the raw bytes of a non-null value (an in-stream error object).
//   - "object" and "message" as [Text] (an error object of vLLM or SGLang is
//     {"object":"error","message":...}).
//   - "timings": the raw bytes of a non-null value (llama.cpp's server-side
//     timings).
//
// Every other member is validated and skipped.
//
// # Equivalence with encoding/json
//
// The results are those of decoding the same payload with encoding/json into
// structs holding these fields (a JSON string where text is expected is its
// text; any other value is no text; an integer is read as a json.Number and
// accepted when it parses as an int64), one payload at a time: every rule of
// encoding/json applies, including case-insensitive member names, the last
// of duplicate members (and the merging of duplicate objects and arrays),
// the replacement of invalid UTF-8 and lone surrogates by U+FFFD in strings
// that have escapes, and the errors of a malformed payload. The differential
// fuzz test of the package checks this against encoding/json itself.
//
// # Fallback
//
// The decoder scans the payload once, validating all of it. It hands the
// payload to encoding/json instead, and returns what encoding/json decodes,
// when it meets any of:
//
//   - a syntax error or a truncated payload (encoding/json produces the
//     error, so that its message and offset are exactly those of
//     encoding/json);
//   - a member of the wrong JSON type where encoding/json reports a type
//     error: choices not an array or null, an element of choices, delta,
//     usage or prompt_tokens_details not an object or null;
//   - a member name of an object whose members are decoded (the payload,
//     a choice, a delta, usage, prompt_tokens_details) that has an escape
//     sequence or a non-ASCII byte, or that has upper-case ASCII letters and
//     folds to one of the decoded names: encoding/json matches names without
//     regard to case, with Unicode simple folding;
//   - a decoded name present twice in the same object;
//   - the value of a member that is not decoded nesting arrays and objects
//     more than [jsonpick.MaxFastDepth] deep.
//
// None of these occurs in the repository's captures (ollama, mock-llm, the
// fake server's dialects) nor in the benchmark payloads shaped like vLLM,
// SGLang, llama.cpp and ollama chunks, which the tests check; the fallback
// costs a few microseconds and allocations per payload.
//
// Each payload is decoded on its own: nothing of one payload shows in the
// next (the stream client's reuse of one struct for every event let a
// choice of an earlier event reappear when an event repeated "choices"
// with a shorter array; the decoder does not reproduce that).
//
// # Aliasing
//
// The [Chunk] returned by [Decoder.Decode] and every byte slice in it are
// valid until the next call of Decode on the same Decoder, and only while
// the caller does not modify the payload. A string without escapes is a
// sub-slice of the payload itself (no copy, no UTF-8 repair: the bytes are
// exactly those on the wire); a string with escapes is unescaped into a
// buffer of the Decoder, reused from one call to the next.
package chunk
