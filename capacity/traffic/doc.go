// Package traffic plugs recorded and conversational traffic into a
// capacity run through its seams (capacity.Source, capacity.Schedule,
// capacity.Observer):
//
//   - Replay sends the requests of a trace (package trace) each at its
//     recorded offset divided by the speed-up, under the run's in-flight
//     cap like an open loop, with its recorded prompt length, its blocks
//     shared byte for byte as the trace's block ids say (package
//     capacity/internal/blocktext) and max_tokens its recorded output length;
//   - Sessions runs multi-turn conversations (package session): turn k+1
//     carries the earlier user messages and the answers the server
//     actually gave, and is sent a think time after turn k ended; a
//     failed turn ends its session. Synthetic makes them from a
//     session.Spec, Recorded from the sessions of a trace
//     (session.Read), both started as SessionOptions says.
//
// The Workload method of either returns the capacity.Workload that runs
// it: the given Workload with it as the Source and Schedule.
//
//	replay := traffic.Replay{Records: recs, Salt: nonce}
//	rep, err := capacity.Run(ctx, target, replay.Workload(capacity.Workload{Concurrency: 64}))
//
// Prompts are sized at CharsPerToken characters per token: the
// reference's 3.0 unless one is given. Replay and Sessions are
// capacity.SizedSource values: with Workload.PromptSizing "exact" the run
// gives them, before the warm-up, a capacity.Sizer of the server's counts,
// and SizedBy sizes every prompt on the text it sends (sizing.go): each
// block the length that counts its block tokens, each distinct block
// counted once, each prompt's budget searched until its blocks and the
// rest count its plan, the chat template's fixed tokens included.
//
// The imports run one way: traffic imports capacity, trace, session,
// capacity/internal/blocktext and capacity/internal/budget; none of them imports traffic (package
// anviltest does). trace, session and blocktext import nothing of
// capacity but its internal packages (session uses internal/arrival for
// its exponential draws), and capacity writes a Source's PrefixBlocks
// with blocktext too, so there is one block text.
package traffic
