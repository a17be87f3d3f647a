// Package jsonpick decodes chosen members of a JSON object exactly as
// encoding/json decodes them into structs, without a general decode and
// without allocating in steady state. It is the engine under the decoders
// of the streamed events of every API the client speaks (package chunk for
// chat completions, and responses, messages, completions and embeddings),
// which each describe the members they read as a Schema.
//
// # What is decoded
//
// A Schema lists the members of the payload object that are read, each
// one of:
//
//   - Str: a [Text], the text of a JSON string or the kind of any other
//     value;
//   - Count: an [Int], a JSON number (or a string holding one) classified as
//     json.Number and strconv.ParseInt read it;
//   - Raw: the JSON text of the value, whatever it is;
//   - Obj: an object (or null) whose own members are read;
//   - Objs: an array (or null) of objects (or nulls) whose members are read.
//
// A payload must be exactly one JSON object, with white space (as
// [bytes.TrimSpace] defines it) around it and nothing else. Every member
// that is not read is validated and skipped. A Decoder keeps a [Value] per
// member, reached by its [Slot].
//
// # Equivalence with encoding/json
//
// The values are those of decoding the same payload with encoding/json
// into structs holding these members, every leaf a json.RawMessage, then
// reading each leaf: every rule of encoding/json applies, including
// case-insensitive member names, the last of duplicate members (and the
// merging of duplicate objects and arrays), the replacement of invalid
// UTF-8 and lone surrogates by U+FFFD in strings that have escapes, and
// the errors of a malformed payload. The differential fuzz tests of this
// package and of each decoder built on it check this against
// encoding/json itself.
//
// # Fallback
//
// The decoder scans the payload once, validating all of it. It hands the
// payload to encoding/json instead, and returns what encoding/json
// decodes, when it meets any of:
//
//   - a syntax error or a truncated payload (encoding/json produces the
//     error, so that its message and offset are exactly encoding/json's);
//   - an Obj member that is not an object or null, an Objs member that is
//     not an array or null, or an element of one that is not an object or
//     null (encoding/json reports a type error);
//   - a member name of an object whose members are read that has an
//     escape sequence or a non-ASCII byte, or that has upper-case ASCII
//     letters and folds to one of the names read: encoding/json matches
//     names without regard to case, with Unicode simple folding;
//   - a member read present twice in the same object;
//   - the value of a member that is not read nesting arrays and objects
//     more than [MaxFastDepth] deep.
//
// None of these occurs in the repository's captures of real engines nor
// in the fake server's dialects, which the tests of each decoder check;
// the fallback costs a few microseconds and allocations per payload.
//
// Each payload is decoded on its own: nothing of one payload shows in the
// next.
//
// # Aliasing
//
// The values of a Decoder and every byte slice in them are valid until the
// next call of Decode on the same Decoder, and only while the caller does
// not modify the payload. A string without escapes is a sub-slice of the
// payload itself (no copy, no UTF-8 repair: the bytes are exactly those on
// the wire), and so is a Raw value; a string with escapes is unescaped
// into a buffer of the Decoder, reused from one call to the next.
//
// # The scanner
//
// The functions the decoders share (SkipSpace, NameEnd, StringEnd,
// NumberEnd, LiteralEnd, ValueEnd, AppendUnescaped, Classify, ParseInt)
// are the validating scanner under the fast path: each takes the index of
// the first byte of what it scans and returns the index after it, or Fail.
package jsonpick
