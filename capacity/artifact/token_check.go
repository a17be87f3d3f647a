package artifact

import (
	"fmt"
	"math"
)

// tokensShard is the generation-token verdict of one shard of a sharded
// run (PROTOCOL.md#server_metrics): the server's counter counts every
// shard's tokens, the shard's responses only its own, so their difference
// says nothing; the merged artifact checks all shards' tokens against it.
const tokensShard = "shard"

// Allow sets c's Difference and Allowance from its ServerIncrease and
// ClientTokens (capacity/PROTOCOL.md#server_metrics), for Judge: firstMS
// is the offset of the counter's first sample, durationMS the phase's wall
// time, unreported the measured requests whose completion tokens the
// client never learned, maxTokens one request's cap.
//
// Difference D = ServerIncrease - ClientTokens. The window edges and the
// client's blind spots explain some difference, one way each: when D < 0
// (the server counted fewer), tokens generated before the first sample
// landed belong to the phase but not to the increase, at most the run's
// mean rate over that time, ceil(ClientTokens x firstMS / durationMS);
// when D > 0, each unreported request may have generated up to maxTokens
// tokens.
func (c *TokenCheck) Allow(firstMS, durationMS float64, unreported, maxTokens int) {
	d := c.ServerIncrease - float64(c.ClientTokens)
	c.Difference, c.Allowance = d, 0
	switch {
	case d < 0 && durationMS > 0:
		c.Allowance = math.Ceil(float64(c.ClientTokens) * max(firstMS, 0) / durationMS)
	case d > 0:
		c.Allowance = float64(unreported) * float64(max(maxTokens, 0))
	}
}

// ForShard marks c, judged, as the check of shard index of count (count >
// 1): the verdict "shard" and a reason saying why its difference is no
// verdict, whatever Judge found. The difference and the allowance are kept
// as computed.
func (c *TokenCheck) ForShard(index, count int) {
	c.Verdict = tokensShard
	c.Reason = new(fmt.Sprintf("shard %d of %d: the server's counter counts every shard's tokens, this shard's responses only its own; the merge of all %d shards checks them together", index, count, count))
}
