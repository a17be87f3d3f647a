// Package blocktext writes the prompt text of a trace replay whose rows
// name their prompt blocks (Mooncake's hash_ids, the blocks of anvil's
// JSONL traces), so that a server's prefix cache sees the trace's reuse:
// blocks with equal ids are byte-identical, in order, and blocks with
// different ids differ from their first character.
//
// # Layout
//
// A run has one Layout: a block size in tokens and a Sizing that turns
// tokens into characters (the engine's prompt sizing supplies it:
// CharsPerToken(3.0) for the reference's ratio, a SizingFunc over a
// calibrated curve for exact sizing). Every block is
// L = Sizing.Chars(BlockTokens) characters:
//
//	{c}{id}\n                  ({c}{id} {salt}\n with Layout.Salt)
//	def block_{id}_0():\n    return compute(0)  # shared context\n
//	def block_{id}_1():\n    return compute(1)  # shared context\n
//	...
//
// cut to L-1 characters and closed by a newline, where c is the
// (id mod 62)-th of A-Z, a-z, 0-9. A block's text depends on its id and L
// only, never on the request or the block's position.
//
// A prompt of budget B characters (Sizing.Chars of its planned tokens, or
// the budget exact sizing searched) with tail T is its blocks' texts in
// order, cut to B - len(T) characters, then, when the blocks are shorter
// than that, the request's unshared filler ("#" + its own text + "\n" and
// numbered lines, cut to fit), then T. It is exactly B characters; the
// last block cut short is a prefix of its full text, as the trace's last,
// partial block is a prefix of a full one.
//
// # What differs
//
// Equal ids give equal bytes. Different ids differ within their first
// line, which holds the id in full; ids that differ modulo 62 (FirstChars)
// differ from their first character, so, with the newline before it that
// makes a pre-tokenizer start a token there, from their first token. No
// text can do better for every pair of ids: a tokenizer may start a token
// at a single byte, and there are fewer first bytes than ids. The
// unshared filler starts with "#", which no block does.
//
// All text is ASCII when the own text and the tail are; lengths are in
// bytes.
package blocktext
