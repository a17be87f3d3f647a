// Package blocktext writes the prompt text of a trace replay whose rows
// name their prompt blocks (Mooncake's hash_ids, the blocks of anvil's
// JSONL traces), so that a server's prefix cache sees the trace's reuse:
// blocks with equal ids are byte-identical, in order, and blocks with
// different ids differ from their first character.
//
// # Layout
//
// A run has one Layout: a block size in tokens and a Sizing that turns
// tokens into characters (CharsPerToken(3.0) for the reference's ratio),
// or the block length exact sizing found (Layout.BlockLen). Every block
// is L = Sizing.Chars(BlockTokens) (or BlockLen) characters:
//
//	{c}{di}\n                 ({c}{di} {salt}\n with Layout.Salt)
//	def block_line():\n    return compute(line)  # shared context\n
//	def block_line():\n    return compute(line)  # shared context\n
//	...
//
// cut to L-1 characters and closed by a newline, where c is the
// (id mod 62)-th of A-Z, a-z, 0-9, and di the 19 decimal digits of the
// id lowest first (id 42 is "2400000000000000000"). A block's
// text depends on its id and L only, never on the request or the block's
// position, and only its first line names the id, in as many characters
// for every id: blocks of any ids count alike on a tokenizer that counts
// digits by their number, so a count of one block tells the others' (a
// prefix cache keys a block by everything before it, so blocks whose
// first lines differ share nothing). The lines after the header are one
// line repeated, without digits, in blocks as in the own filler: any cut
// counts about its length's share, so what a text counts grows with its
// length alone.
//
// A prompt of budget B characters (Sizing.Chars of its planned tokens, or
// the budget exact sizing searched) with tail T is its blocks' texts in
// order, cut to B - len(T) characters, then, when the blocks are shorter
// than that, the request's unshared filler ("#" + its own text + "\n" and
// the line "def own_line():\n    return compute(line)  # request
// context\n" repeated, cut to fit), then T. It is exactly B characters; the
// last block cut short is a prefix of its full text, as the trace's last,
// partial block is a prefix of a full one.
//
// # What differs
//
// Equal ids give equal bytes. Different ids differ within their first
// line, which holds the id in full, from their lowest differing digit on
// (as many characters in as in their decimal forms); ids that differ
// modulo 62 (FirstChars)
// differ from their first character, so, with the newline before it that
// makes a pre-tokenizer start a token there, from their first token. No
// text can do better for every pair of ids: a tokenizer may start a token
// at a single byte, and there are fewer first bytes than ids. The
// unshared filler starts with "#", which no block does.
//
// All text is ASCII when the own text and the tail are; lengths are in
// bytes.
package blocktext
