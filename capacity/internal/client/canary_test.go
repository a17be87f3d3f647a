package client

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCanaryCheckPeer: a response that begins with its own marker passes;
// one that also carries a peer's marker fails and counts it.
func TestCanaryCheckPeer(t *testing.T) {
	marker := CanaryMarker(1717, 3)
	ok := checkCanary(marker, marker+" The file defines helpers.", true)
	peer := checkCanary(marker, marker+" see ANVIL_REQ_1717_00004", true)
	require.Equal(t, "ANVIL_REQ_1717_00003", ok.Marker)
	require.True(t, ok.Passed)
	require.False(t, peer.Passed)
	require.Equal(t, 1, peer.ForeignMarkerCount)
}
