package discovery

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestServerRoot(t *testing.T) {
	require.Equal(t, "http://h:11434", serverRoot("http://h:11434/v1"))
	require.Equal(t, "http://h:11434", serverRoot("http://h:11434/v1/"))
	require.Equal(t, "http://h/proxy", serverRoot("http://h/proxy/v1"))
	require.Equal(t, "http://h/api", serverRoot("http://h/api"))
}
