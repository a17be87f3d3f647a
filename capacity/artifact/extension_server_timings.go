package artifact

// ServerTimings is "anvil_go.requests[i].server_timings": the timings the
// server reported for the request (llama.cpp's "timings" object, of the
// last chunk that carried one), as reported; a member it did not send, or
// sent as something else than a number, is nil.
type ServerTimings struct {
	CacheN      *int     // "cache_n": prompt tokens reused from the server's cache
	PromptN     *int     // "prompt_n": prompt tokens the server processed
	PromptMS    *float64 // "prompt_ms": the server's prompt processing time
	PredictedN  *int     // "predicted_n": tokens the server generated
	PredictedMS *float64 // "predicted_ms": the server's generation time

	shape shape
}
