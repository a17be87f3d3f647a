package client

import (
	"fmt"
	"strings"
)

// CompletionTokensTolerance is how many completion tokens above max_tokens
// a response may report before its usage is impossible. Engines stop at
// max_tokens, but some count the end-of-sequence token on top of it, and a
// speculative-decoding step may accept several draft tokens at once before
// the limit is applied; a server further past the limit ignored it (or
// reports a count that is not the response's), and its timings are not a
// response to the request that was sent.
const CompletionTokensTolerance = 16

// Usage is input, not truth: a server's counts become row fields, run sums
// and rates only after checkUsage accepted them.
//
// The rules (capacity/PROTOCOL.md#stream_validation_failed):
//   - every count present (prompt_tokens, completion_tokens, total_tokens,
//     prompt_tokens_details.cached_tokens) is an integer >= 0 that fits an
//     int64 (null and absent are "not reported", never a failure);
//   - completion_tokens <= max_tokens + CompletionTokensTolerance;
//   - completion_tokens >= 1 when visible content streamed (a chunk of
//     content is at least one generated token);
//   - cached_tokens <= prompt_tokens when both are reported.
//
// total_tokens is only checked as a count: nothing is derived from it, and
// servers disagree about what it sums (reasoning or cached tokens counted
// apart), so a total that differs from prompt + completion is recorded as
// reported. The prompt-token bounds that reveal a truncated prompt are
// checked apart (checkPromptTokens), as a prompt_truncated failure.

// checkUsage checks u against the request's max_tokens and returns every
// problem, in field order, or "" when the usage is acceptable. Every field
// it refuses is cleared (reported as null), so that no refused value
// reaches a row, a sum or the failure's metadata; the message keeps it,
// scrubbed of the run's credentials (scrub) and then cut. contentChunks
// is the response's chunks of visible content.
func checkUsage(u *Usage, maxTokens, contentChunks int, scrub func(string) string) string {
	if !u.Present {
		return ""
	}
	var problems []string
	count := func(name string, n *Count) {
		switch {
		case n.bad != "":
			bad, cut := CutOnRune(scrub(n.bad), MaxBadUsageText)
			if cut || strings.HasSuffix(n.bad, "...") {
				bad = strings.TrimSuffix(bad, "...") + "..."
			}
			problems = append(problems, fmt.Sprintf("usage.%s is %s, want an integer >= 0", name, bad))
		case n.ok && n.v < 0:
			problems = append(problems, fmt.Sprintf("usage.%s is %d, want an integer >= 0", name, n.v))
		default:
			return
		}
		*n = Count{}
	}
	count("prompt_tokens", &u.Prompt)
	count("completion_tokens", &u.Completion)
	count("total_tokens", &u.Total)
	count("prompt_tokens_details.cached_tokens", &u.Cached)
	if limit := int64(maxTokens) + CompletionTokensTolerance; u.Completion.ok && u.Completion.v > limit {
		problems = append(problems, fmt.Sprintf("usage.completion_tokens is %d, above max_tokens %d + %d (CompletionTokensTolerance): the server did not stop at max_tokens or miscounts",
			u.Completion.v, maxTokens, CompletionTokensTolerance))
		u.Completion = Count{}
	}
	if u.Completion.ok && u.Completion.v == 0 && contentChunks > 0 {
		problems = append(problems, fmt.Sprintf("usage.completion_tokens is 0, but %d chunks of visible content streamed: each is at least one generated token", contentChunks))
		u.Completion = Count{}
	}
	if u.Cached.ok && u.Prompt.ok && u.Cached.v > u.Prompt.v {
		problems = append(problems, fmt.Sprintf("usage.prompt_tokens_details.cached_tokens is %d, above usage.prompt_tokens %d", u.Cached.v, u.Prompt.v))
		u.Cached = Count{}
	}
	if len(problems) == 0 {
		return ""
	}
	return "impossible usage: " + strings.Join(problems, "; ")
}
