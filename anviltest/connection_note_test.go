package anviltest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

func TestConnectionNote(t *testing.T) {
	require.Empty(t, connectionNote(&artifact.Report{}))
	require.Empty(t, connectionNote(&artifact.Report{AnvilGo: &artifact.Extension{Connections: &artifact.Connections{Prewarmed: 4}}}))
	r := &artifact.Report{AnvilGo: &artifact.Extension{Connections: &artifact.Connections{KeptAliveClosed: 2, ReuseDisabled: true}}}
	require.Equal(t, "the server closed kept-alive connections right after answering on them (2 seen; llama.cpp's llama-server does after every streamed answer): the rest of the run reused no connection, so each request's dial is inside its timings", connectionNote(r))
}
