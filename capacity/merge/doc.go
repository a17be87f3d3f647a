// Package merge makes one artifact of a workload from the artifacts of its
// shards: the load generators that each sent their share of one global
// plan, all starting at one instant of a shared clock
// (capacity/PROTOCOL.md#shards). [Shards] reads the shards' artifacts as
// they were written, refuses any set that is not every shard of one
// workload exactly once (wrapping [ErrNotMergeable]), and returns the
// artifact one process would have written of the whole run: the rows under
// their global indexes, every v1 metric recomputed, the chunk timing
// recomputed from the shards' stored gap distributions, the offsets
// re-based onto the common start, and anvil_go.shards naming each shard
// (capacity/PROTOCOL.md#merging-shards).
//
// The package is what `anvilreport merge` runs; package artifact, which it
// builds on, stays a schema.
package merge
