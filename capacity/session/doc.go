// Package session describes multi-turn conversations for a capacity run:
// a synthetic workload (Spec: turns, tokens per user message, output
// tokens per turn, think time) and sessions recorded in a trace
// (Read, from the session and turn keys of anvil's JSONL format, package
// trace).
//
// A session is a conversation of turns. Turn k+1's messages are all
// earlier user messages plus the assistant's actual answers so far, plus
// a new user message of planned length; it is sent a think time after
// turn k ended. A failed turn ends its session: the turns after it are
// never sent.
//
// # Compact form
//
// ParseSpec reads a Spec from one string, for an environment variable:
//
//	turns=3,user=200,output=128,think=2s,think_dist=exp,seed=7
//
// turns, user and output are required; think defaults to 0s, think_dist
// to fixed, seed to 0. Spec.String writes every key, in this order, and
// ParseSpec reads it back to the same Spec.
//
// # Think times
//
// A fixed think time is Spec.Think before every turn after the first. An
// exponential one (Spec.ThinkExp) is Spec.Think times an exponential draw of mean 1 from a
// generator seeded with (Spec.Seed, session, turn): the same spec gives
// the same think times on every platform and whatever order the sessions
// run in. For recorded sessions the think time is the row's think_ms.
package session
