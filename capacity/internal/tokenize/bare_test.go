package tokenize

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBareShapes: a bare prompt (Config.Bare) is counted as bare text,
// special tokens included (llama.cpp's add_special, the BOS its
// completions add), and never through the chat template.
func TestBareShapes(t *testing.T) {
	assert.Equal(t, tokenizeShapes[:], shapesOf(Config{}))
	assert.Equal(t, []tokenizeShape{shapePrompt, shapeContent}, shapesOf(Config{Bare: true}))
	tk, err := newTokenizer(nil, "http://x.invalid/tokenize", shapeContent, Config{Bare: true})
	require.NoError(t, err)
	assert.Equal(t, `,"add_special":true}`, string(tk.tail))
	tk, err = newTokenizer(nil, "http://x.invalid/tokenize", shapeContent, Config{})
	require.NoError(t, err)
	assert.Equal(t, `}`, string(tk.tail))
}
