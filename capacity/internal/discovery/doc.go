// Package discovery learns, before a run plans, the model a server serves
// and the context window it serves it with, and where each came from
// (capacity/PROTOCOL.md#context-window). Package capacity's Run and
// Discover use it; its Result is capacity's Discovery, field for field.
//
// Discover takes a Config (the client.Client that sends every request,
// the base URL, what the Target declares, the timeout of GET /models) and
// asks, in order:
//
//   - GET {BaseURL}/models: the model (the declared one's entry, else the
//     first) and the window its entry carries (max_model_len,
//     max_context_length, context_length, llama.cpp's meta.n_ctx);
//   - llama.cpp's /props (its window and total_slots) and, when that
//     names no slots, /slots;
//   - while no window is known, Ollama's /api/ps (the window of the loaded
//     model) and /api/show (the model's trained maximum).
//
// Each native step is bounded on its own, so a server that never answers
// one costs the discovery seconds, not a request timeout; every step's
// answer is a line of Result.Asked. With the model and the window both
// declared the answers are only compared with them (Result.Note names a
// disagreement), and no failure is an error.
//
// The Result says the window the run plans for (Window), the one the
// truncation checks use (TruncationWindow, TruncationWindowFrom: the
// served window when the server advertises one), and the slots a
// llama.cpp server runs at once (NoteSlots names a concurrency above
// them); Record is its anvil_go.context_window.
package discovery
