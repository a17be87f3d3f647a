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

// Judge sets c's Difference, Allowance, Verdict and Reason from its
// ServerIncrease and ClientTokens by the rule of
// capacity/PROTOCOL.md#server_metrics. resets is the counter's falls
// during the phase, firstMS the offset of its first sample, durationMS the
// phase's wall time, unreported the measured requests whose completion
// tokens the client never learned, maxTokens one request's cap.
//
// Difference D = ServerIncrease - ClientTokens. D = 0 is exact. The window
// edges and the client's blind spots explain some difference, one way
// each: when D < 0 (the server counted fewer), tokens generated before the
// first sample landed belong to the phase but not to the increase, at most
// the run's mean rate over that time, ceil(ClientTokens x firstMS /
// durationMS); when D > 0, each unreported request may have generated up
// to maxTokens tokens. Within that allowance it agrees; beyond, it is a
// mismatch with the likely cause named. A counter reset during the phase
// is a mismatch whatever D.
func (c *TokenCheck) Judge(resets int, firstMS, durationMS float64, unreported, maxTokens int) {
	d := c.ServerIncrease - float64(c.ClientTokens)
	c.Difference, c.Allowance, c.Reason = d, 0, nil
	switch {
	case d < 0 && durationMS > 0:
		c.Allowance = math.Ceil(float64(c.ClientTokens) * max(firstMS, 0) / durationMS)
	case d > 0:
		c.Allowance = float64(unreported) * float64(max(maxTokens, 0))
	}
	switch {
	case resets > 0:
		c.Verdict = TokensMismatch
		c.Reason = new(fmt.Sprintf("%s was reset %d times during the run (the server restarted): its increase does not cover the run", c.Counter, resets))
	case d == 0:
		c.Verdict = TokensExact
	case math.Abs(d) <= c.Allowance:
		c.Verdict = TokensAgree
	case d > 0:
		c.Verdict = TokensMismatch
		c.Reason = new(fmt.Sprintf("the server generated %g tokens more than the run's responses reported (allowance %g): another client was using the server, or requests the run gave up on kept decoding", d, c.Allowance))
	default:
		c.Verdict = TokensMismatch
		c.Reason = new(fmt.Sprintf("the server counted %g tokens fewer than the run's responses reported (allowance %g): the endpoint is not (only) the server that answered, e.g. one replica behind a load balancer", -d, c.Allowance))
	}
}

// ForShard marks c as the check of shard index of count (count > 1): the
// verdict "shard" and a reason saying why its difference is no verdict,
// whatever Judge found. The difference and the allowance are kept as
// computed.
func (c *TokenCheck) ForShard(index, count int) {
	c.Verdict = tokensShard
	c.Reason = new(fmt.Sprintf("shard %d of %d: the server's counter counts every shard's tokens, this shard's responses only its own; the merge of all %d shards checks them together", index, count, count))
}
