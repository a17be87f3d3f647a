package merge_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/merge"
)

// TestMergeKeepsACommonBuild: the merged anvil_go.run has the shards'
// build when they agree, and none of a key on which two shards differ.
func TestMergeKeepsACommonBuild(t *testing.T) {
	single := runSingle(t)
	shards := splitShards(t, single, 3)
	for _, s := range shards {
		s.AnvilGo.Run.ModuleVersion, s.AnvilGo.Run.VCSRevision = new("v0.4.0"), new("e02e9a91af51")
	}
	merged, err := merge.Shards(shardFiles(t, shards)...)
	require.NoError(t, err)
	require.Equal(t, "v0.4.0", *merged.AnvilGo.Run.ModuleVersion)
	require.Equal(t, "e02e9a91af51", *merged.AnvilGo.Run.VCSRevision)

	shards[2].AnvilGo.Run.ModuleVersion = new("v0.4.1")
	merged, err = merge.Shards(shardFiles(t, shards)...)
	require.NoError(t, err)
	require.Nil(t, merged.AnvilGo.Run.ModuleVersion, "no one version")
	require.Equal(t, "e02e9a91af51", *merged.AnvilGo.Run.VCSRevision)
}
