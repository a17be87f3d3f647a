package client

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBodyBufferReuse: the body storage is reused only once the transport
// closed every reader it was handed.
func TestBodyBufferReuse(t *testing.T) {
	var b Buffer
	b.Set(append(b.Reset(), "first"...))
	r := b.NewReader()
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, "first", string(got))
	held := b.Bytes()
	b.Set(append(b.Reset(), "second"...))
	require.Equal(t, "first", string(held), "an open reader keeps its bytes")
	require.NoError(t, r.Close())
	require.NoError(t, r.Close(), "Close is idempotent")

	r2 := b.NewReader()
	require.NoError(t, r2.Close())
	prev := &b.Bytes()[0]
	b.Set(append(b.Reset(), "third"...))
	require.Same(t, prev, &b.Bytes()[0], "closed readers free the storage for reuse")
}
