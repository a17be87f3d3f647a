// Package client sends the requests of a capacity run and turns each
// answer into a timing row or a failure row of the
// anvil-serving.benchmark/v1 artifact: one request, from its body to its
// row. Package capacity drives it; a user never names it.
//
// A Client is made from a Config, its own small configuration: the base
// URL, the HTTP client (under the ConnectionRule of
// capacity/PROTOCOL.md#connection-rule), the headers and the credential,
// the Secrets to scrub from every message, the request and stall
// timeouts, the Checks (the response contracts) and the Dialect. It knows
// nothing of a Workload or a Target.
//
// # Dialects
//
// A Dialect is what a request speaks: its route below the base URL, its
// headers (the media type asked for, the credential in the API's own
// header), the body it writes from a Request (the model, max tokens,
// sampling, thinking control and extra fields, in no API's words, around
// a prompt the caller streams), whether its answer streams, and a Decoder
// of the answer's events. Every event, whatever its wire form (an SSE
// event's name and data, or one JSON body), becomes an Event: visible
// content, reasoning, finish reasons, usage, the server's timings, an
// error, the end; each stamped with its arrival. The client does the rest
// the same way for every dialect: the clock, the limits, the framing, the
// bounded capture, the chunk gaps, the usage check, the failure classes.
// ChatCompletions is the dialect of OpenAI's streamed chat completions,
// decoded without allocating (package chunk). DialectOf gives the dialect
// of each API a Target names, WrittenFields the body fields it writes
// from a Request (which a Request's extra fields may not set).
//
// One request goes:
//
//	ex := client.Exchange{Index: i, Planned: planned}
//	timer.Begin(&ex, origin)          // optional: the chunk gaps (ChunkTimer)
//	cl.Send(ctx, body, &ex)           // t0, the request, the stream
//	row, failure := cl.Evaluate(&ex)  // exactly one of them is not nil
//	timer.Finish(row != nil, ex.CompletionTokens())
//
// Send takes t0 immediately before the request is issued and keeps it
// when the connection rule sends the request again; it stamps every
// stream event with the monotonic time of the read that completed it,
// before decoding it with the dialect's Decoder; it bounds the request by
// Config.Timeout and the stream's silences by Config.StallTimeout,
// decodes a compressed body as it arrives, and records the connection's
// phases (Exchange.Phases). A body is any Body: the engine streams its
// prompts from shared pieces, a Buffer holds one in memory, an Encoder
// writes the fixed fields of a run's bodies once, in a dialect, around
// each JSON-quoted prompt.
//
// Evaluate applies the protocol's derivations and contracts
// (capacity/PROTOCOL.md#timings): usage is checked before anything is
// derived from it, the timing row from the monotonic stamps, the
// prompt-token floor and the truncation window, the request canary and
// the controlled output on the bounded capture of the visible content
// (VisibleCaptureLimit). Every failure has a class and one of the
// ErrorType words; its message is scrubbed of the run's Secrets as a
// whole before anything cuts it.
//
// The rest serves the requests around the measured ones: Prewarm opens
// the connections before the clock, NewRequest and Do send the unmeasured
// requests of discovery and sizing with the same headers, DecodeBody,
// Excerpt, TransportHint and AnswerReason shape what their failures say,
// DisplayURL shows a URL in an error without what may be a credential,
// and EnsureFileLimit makes room for the connections of a concurrency.
// TimingMethodology and TimestampPrecision are the artifact's sentences
// saying how all of this measures.
package client
