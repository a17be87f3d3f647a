package fakeserver

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"
)

// Fault is a misbehaviour the server applies to one request. The names are
// also the values of the FaultHeader request header and the -fault flags of
// the binary. Every failure class of the protocol reference
// (capacity/PROTOCOL.md, section "Failure classes") has one.
type Fault string

// The faults. HTTP faults answer at once without running the model; stream
// faults happen after FaultPlan.After output chunks; the disobedience faults
// change the answer's text and keep the stream well formed.
const (
	// FaultNone is no fault.
	FaultNone Fault = ""
	// FaultHTTP429 answers 429 with Retry-After and a rate-limit JSON body.
	FaultHTTP429 Fault = "http_429"
	// FaultHTTP500 answers 500 with a JSON error body.
	FaultHTTP500 Fault = "http_500"
	// FaultHTTP503 answers 503 with a JSON error body.
	FaultHTTP503 Fault = "http_503"
	// FaultHTTP400 answers 400 with a JSON error body.
	FaultHTTP400 Fault = "http_400"
	// FaultDrop aborts the connection mid-stream (the client reads an
	// unexpected EOF: the chunked body never terminates).
	FaultDrop Fault = "drop"
	// FaultStall stops sending for FaultPlan.Stall mid-stream, then goes on.
	FaultStall Fault = "stall"
	// FaultSlowHeaders waits FaultPlan.SlowHeaders before the response
	// headers.
	FaultSlowHeaders Fault = "slow_headers"
	// FaultMalformedJSON sends one data event whose JSON is cut short, then
	// goes on.
	FaultMalformedJSON Fault = "malformed_json"
	// FaultStreamError sends an in-stream {"error": ...} object and ends the
	// stream (with [DONE] unless the dialect omits it), as vLLM does.
	FaultStreamError Fault = "stream_error"
	// FaultOversized sends one content event of FaultPlan.OversizeBytes
	// characters, then goes on.
	FaultOversized Fault = "oversized_event"
	// FaultEndless keeps decoding past max_tokens (content " more") and never
	// ends the response until the client goes away or the Server closes.
	FaultEndless Fault = "endless"
	// FaultIgnoreMaxTokens decodes past the request's max_tokens: exactly
	// twice max_tokens tokens (the answer padded with " more"), capped by
	// the context window, then ends normally with finish_reason "stop"
	// (FaultEndless never ends). Without max_tokens it changes nothing.
	FaultIgnoreMaxTokens Fault = "ignore_max_tokens"
	// FaultUsageTotal reports usage whose total_tokens is prompt_tokens
	// alone, not prompt_tokens + completion_tokens.
	FaultUsageTotal Fault = "usage_total_mismatch"
	// FaultReasoningOnly answers with reasoning and no content at all.
	FaultReasoningOnly Fault = "reasoning_only"
	// FaultWrongContentType streams a normal body labelled
	// "application/json" (a non-streamed body: "text/plain").
	FaultWrongContentType Fault = "wrong_content_type"
	// FaultEmptyBody answers 200 text/event-stream with an empty body.
	FaultEmptyBody Fault = "empty_body"
	// FaultOmitMarker leaves the requested ANVIL_REQ_ marker out.
	FaultOmitMarker Fault = "omit_marker"
	// FaultForeignMarker begins the answer with another request's marker
	// (same seed, index + 1).
	FaultForeignMarker Fault = "foreign_marker"
	// FaultLateMarker puts LateMarkerPrefix before the requested marker, so
	// the marker is present but not at the start.
	FaultLateMarker Fault = "late_marker"
	// FaultExtraWords appends ExtraWords to the answer (to a controlled
	// "exactly N" answer: words that are not "code").
	FaultExtraWords Fault = "extra_words"
)

// FaultHeader is the request header naming the fault to apply to that
// request (one Fault value); it wins over FaultPlan.ByIndex and
// FaultPlan.Probability.
const FaultHeader = "X-Fake-Fault"

// RequestIDHeader is recorded in each request's Trace (Trace.RequestID) and
// echoed in the response, so a client can correlate its observations with
// the server's ground truth.
const RequestIDHeader = "X-Request-Id"

// ExtraWords is what FaultExtraWords appends to an answer.
const ExtraWords = " and more"

// LateMarkerPrefix is what FaultLateMarker writes before the marker.
const LateMarkerPrefix = "Answer:"

// Faults lists every Fault except FaultNone, sorted.
func Faults() []Fault {
	fs := make([]Fault, 0, len(faultSet))
	for f := range faultSet {
		fs = append(fs, f)
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i] < fs[j] })
	return fs
}

var faultSet = map[Fault]bool{
	FaultHTTP429: true, FaultHTTP500: true, FaultHTTP503: true, FaultHTTP400: true,
	FaultDrop: true, FaultStall: true, FaultSlowHeaders: true, FaultMalformedJSON: true,
	FaultStreamError: true, FaultOversized: true, FaultEndless: true,
	FaultIgnoreMaxTokens: true, FaultUsageTotal: true,
	FaultReasoningOnly: true, FaultWrongContentType: true, FaultEmptyBody: true,
	FaultOmitMarker: true, FaultForeignMarker: true, FaultLateMarker: true, FaultExtraWords: true,
}

// ParseFault checks a fault name.
func ParseFault(s string) (Fault, error) {
	f := Fault(strings.TrimSpace(s))
	if f == FaultNone || faultSet[f] {
		return f, nil
	}
	return "", &ConfigError{Field: "Fault", Value: s, Want: fmt.Sprintf("one of %v", Faults())}
}

// FaultPlan chooses the fault of each request: the FaultHeader request
// header first, then ByIndex (0-based arrival order), then one seeded draw
// against Probability (the probabilities are tried in sorted fault order and
// must sum to at most 1).
type FaultPlan struct {
	// ByIndex maps a request's 0-based arrival index to its fault.
	ByIndex map[int]Fault
	// Probability is each fault's chance per request, drawn with the
	// request's seeded generator.
	Probability map[Fault]float64

	// After is the number of output chunks written before a mid-stream fault
	// (drop, stall, malformed_json, stream_error, oversized_event). Zero
	// means 2.
	After int
	// RetryAfter is the 429's Retry-After in whole seconds; zero means 1.
	RetryAfter int
	// Stall is how long FaultStall pauses; SlowHeaders how long
	// FaultSlowHeaders waits. Zero means 30 s each (simulated, so scaled by
	// TimeScale).
	Stall       time.Duration
	SlowHeaders time.Duration
	// OversizeBytes is the size of FaultOversized's content; zero means
	// 1 MiB.
	OversizeBytes int
}

// defaultFaults holds the values FaultPlan's zero knobs take: a fault after
// 2 output chunks, Retry-After 1 s, 30 s stalls and header delays, 1 MiB
// oversized events.
func defaultFaults() FaultPlan {
	return FaultPlan{After: 2, RetryAfter: 1, Stall: 30 * time.Second, SlowHeaders: 30 * time.Second, OversizeBytes: 1 << 20}
}

func (p FaultPlan) withDefaults() FaultPlan {
	d := defaultFaults()
	p.After = cmp.Or(p.After, d.After)
	p.RetryAfter = cmp.Or(p.RetryAfter, d.RetryAfter)
	p.Stall = cmp.Or(p.Stall, d.Stall)
	p.SlowHeaders = cmp.Or(p.SlowHeaders, d.SlowHeaders)
	p.OversizeBytes = cmp.Or(p.OversizeBytes, d.OversizeBytes)
	return p
}

// validate checks the plan's entries in sorted key order, so the error
// reported for several bad entries is always the same.
func (p FaultPlan) validate() error {
	known := func(f Fault) bool { return f == FaultNone || faultSet[f] }
	want := fmt.Sprintf("one of %v", Faults())
	for _, i := range slices.Sorted(maps.Keys(p.ByIndex)) {
		f := p.ByIndex[i]
		if err := firstInvalid(check{fmt.Sprintf("Faults.ByIndex[%d]", i), string(f), known(f), want}); err != nil {
			return err
		}
	}
	sum := 0.0
	for _, f := range slices.Sorted(maps.Keys(p.Probability)) {
		pr := p.Probability[f]
		err := firstInvalid(
			check{"Faults.Probability", string(f), f != FaultNone && faultSet[f], "keys " + want},
			check{fmt.Sprintf("Faults.Probability[%s]", f), pr, pr >= 0 && pr <= 1, "0..1"}, // NaN fails too
		)
		if err != nil {
			return err
		}
		sum += pr
	}
	return firstInvalid(
		check{"Faults.Probability", p.Probability, sum <= 1+1e-9, fmt.Sprintf("probabilities summing to <= 1 (sum %v)", sum)},
		check{"Faults.After", p.After, p.After >= 0, ">= 0"},
		check{"Faults.RetryAfter", p.RetryAfter, p.RetryAfter >= 0, ">= 0"},
		check{"Faults.Stall", p.Stall, p.Stall >= 0, ">= 0"},
		check{"Faults.SlowHeaders", p.SlowHeaders, p.SlowHeaders >= 0, ">= 0"},
		check{"Faults.OversizeBytes", p.OversizeBytes, p.OversizeBytes >= 0, ">= 0"},
	)
}

// choose picks the fault of request index; rng is the request's own
// generator for fault draws.
func (p *FaultPlan) choose(r *http.Request, index int, rng *rand.Rand) (Fault, error) {
	if h := r.Header.Get(FaultHeader); h != "" {
		return ParseFault(h)
	}
	if f, ok := p.ByIndex[index]; ok {
		return f, nil
	}
	if len(p.Probability) == 0 {
		return FaultNone, nil
	}
	keys := make([]Fault, 0, len(p.Probability))
	for f := range p.Probability {
		keys = append(keys, f)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	x := rng.Float64()
	for _, f := range keys {
		x -= p.Probability[f]
		if x < 0 {
			return f, nil
		}
	}
	return FaultNone, nil
}

// httpFault is the status, extra headers and error of an HTTP fault.
type httpFault struct {
	status  int
	message string
	typ     string
	code    string
}

var httpFaults = map[Fault]httpFault{
	FaultHTTP429: {http.StatusTooManyRequests, "Rate limit reached for requests. Please retry after the time given in Retry-After.", "rate_limit_error", "rate_limit_exceeded"},
	FaultHTTP500: {http.StatusInternalServerError, "The server had an error while processing your request.", "server_error", ""},
	FaultHTTP503: {http.StatusServiceUnavailable, "The server is overloaded or not ready yet.", "server_error", ""},
	FaultHTTP400: {http.StatusBadRequest, "Simulated bad request: the fake server rejected this request.", "invalid_request_error", ""},
}

// midStream reports whether f fires after FaultPlan.After chunks.
func (f Fault) midStream() bool {
	switch f {
	case FaultDrop, FaultStall, FaultMalformedJSON, FaultStreamError, FaultOversized:
		return true
	}
	return false
}
