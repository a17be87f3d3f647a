// Package tinyllama counts prompts as llama.cpp b10573 counts them for
// the tiny model of make_tiny_gguf.py (the model of the llama.cpp
// captures in testdata/transcripts): its SentencePiece vocabulary of 420
// pieces and the ChatML template llama.cpp falls back to for a model
// without one, token for token (the tests pin it to every count the
// captures hold). Stand-ins of that server count with it.
package tinyllama

import (
	"fmt"
	"strings"
)

// BOS is the id of the beginning-of-sequence token <s>, which llama.cpp
// puts before every chat prompt.
const BOS = 1

// templateTokens is what the template adds to one user message whose
// text does not start with a space: BOS, the opening "▁" and the 33
// characters of "<|im_start|>user\n" and "<|im_end|>\n<|im_start|>assistant\n",
// a token each (none of them is a piece but "▁", and they hold no space).
const templateTokens = 52

// vocab is the model's vocabulary, as make_tiny_gguf.py's vocab() writes
// it: <unk>, <s>, </s>, the 256 byte-fallback tokens <0x00>..<0xFF>, then
// the pieces "▁", the ASCII letters, digits and punctuation, "▁" + 39
// common words and "▁" + each lowercase letter, each once, in that order.
var vocab = func() map[string]int {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	const punctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
	words := strings.Fields("the of and to in is for on that with as it be by this are from at or " +
		"an was not but have all can will one more def return compute helper " +
		"request summarize above line routine specialist context")
	pieces := []string{"▁"}
	for _, c := range letters + "0123456789" + punctuation {
		pieces = append(pieces, string(c))
	}
	for _, w := range words {
		pieces = append(pieces, "▁"+w)
	}
	for _, c := range letters[:26] {
		pieces = append(pieces, "▁"+string(c))
	}
	v := map[string]int{}
	next := 3 + 256
	for _, p := range pieces {
		if _, ok := v[p]; !ok {
			v[p] = next
			next++
		}
	}
	return v
}()

// Tokenize returns the token ids of text as llama.cpp's SentencePiece
// tokenizer gives them for the model, without BOS (POST /tokenize with
// add_special false): spaces become "▁", one "▁" opens the text (the
// vocabulary's add_space_prefix), and adjacent symbols merge, best score
// first, while their concatenation is a piece. Every piece longer than one
// character starts with "▁" and extends a shorter piece by one character,
// so each "▁" merges on to the right as far as the vocabulary allows,
// whatever the order. A character that is no piece ("\n", anything
// outside ASCII) is one byte-fallback token per UTF-8 byte.
func Tokenize(text string) []int {
	t := []rune("▁" + strings.ReplaceAll(text, " ", "▁"))
	var ids []int
	for i := 0; i < len(t); {
		if t[i] == '▁' {
			piece, j := "▁", i+1
			for j < len(t) {
				if _, ok := vocab[piece+string(t[j])]; !ok {
					break
				}
				piece += string(t[j])
				j++
			}
			ids = append(ids, vocab[piece])
			i = j
			continue
		}
		if id, ok := vocab[string(t[i])]; ok {
			ids = append(ids, id)
		} else {
			for _, b := range []byte(string(t[i])) {
				ids = append(ids, 3+int(b))
			}
		}
		i++
	}
	return ids
}

// Message is a chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Template is the prompt llama.cpp renders for msgs with the ChatML
// fallback template (/props' chat_template) and the generation prompt.
func Template(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "<|im_start|>%s\n%s<|im_end|>\n", m.Role, m.Content)
	}
	b.WriteString("<|im_start|>assistant\n")
	return b.String()
}

// ChatTokens is what the server counts for a chat request of msgs
// (usage.prompt_tokens): BOS and the tokens of Template(msgs).
func ChatTokens(msgs []Message) int { return 1 + len(Tokenize(Template(msgs))) }
