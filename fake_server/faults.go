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

// Fault is a misbehaviour the server applies to one request, named by its
// string. The same names are the values of the X-Fake-Fault request header
// and of the binary's -fault-at and -fault-prob flags; ParseFault checks
// one and Faults lists them all. Config.Validate rejects an unknown name in
// a FaultPlan. Every failure class of the protocol reference
// (capacity/PROTOCOL.md, section "Failure classes") has one. The empty Fault
// is no fault.
//
// HTTP faults answer at once without running the model:
//
//	http_429            429 with Retry-After (FaultPlan.RetryAfter) and a rate-limit JSON body
//	http_500            500 with a JSON error body
//	http_503            503 with a JSON error body
//	http_400            400 with a JSON error body
//
// Stream faults happen after FaultPlan.After output chunks (drop, stall,
// malformed_json, stream_error, oversized_event) or change the stream:
//
//	drop                aborts the connection mid-stream (the client reads an
//	                    unexpected EOF: the chunked body never terminates)
//	stall               stops sending for FaultPlan.Stall, then goes on; silent,
//	                    even with Dialect.KeepAlive
//	slow_headers        waits FaultPlan.SlowHeaders before the response headers
//	malformed_json      sends one data event whose JSON is cut short, then goes on
//	stream_error        sends an in-stream {"error": ...} object and ends the
//	                    stream (with [DONE] unless the dialect omits it), as vLLM does
//	oversized_event     sends one content event of FaultPlan.OversizeBytes
//	                    characters, then goes on
//	endless             keeps decoding past max_tokens (content " more") and never
//	                    ends until the client goes away or the Server closes
//	ignore_max_tokens   decodes exactly twice the request's max_tokens (the answer
//	                    padded with " more"), capped by the context window, then
//	                    ends with finish_reason "stop"; without max_tokens it
//	                    changes nothing
//	usage_total_mismatch  reports usage whose total_tokens is prompt_tokens alone
//	reasoning_only      answers with reasoning and no content at all
//	wrong_content_type  streams a normal body labelled "application/json" (a
//	                    non-streamed body: "text/plain")
//	empty_body          answers 200 text/event-stream with an empty body
//
// Disobedience faults change the answer's text and keep the stream well
// formed:
//
//	omit_marker         leaves the requested ANVIL_REQ_ marker out
//	foreign_marker      begins the answer with another request's marker (same
//	                    seed, index + 1)
//	late_marker         writes "Answer:" before the requested marker, so the
//	                    marker is present but not at the start
//	extra_words         appends " and more" to the answer (to a controlled
//	                    "exactly N" answer: words that are not "code")
//
// Embeddings faults change the vectors of a /v1/embeddings answer:
//
//	vector_count        answers one vector fewer than the inputs
//	vector_nan          makes a value of the first vector a NaN (JSON null,
//	                    the NaN's bits in base64)
//	vector_dimension    drops the last value of the last vector
//
// Every fault applies to every API where it makes sense: the HTTP faults,
// drop, slow_headers, wrong_content_type and empty_body to all five; the
// stream faults to a streamed answer of chat, Responses, Messages and
// completions, each in that API's own form (stream_error: chat's and
// completions' in-stream {"error": ...}, Responses' response.failed,
// Messages' error event); usage_total_mismatch to every total_tokens
// (Messages has none; an embeddings answer's total becomes 0); the
// disobedience faults to every generating API; the embeddings faults to
// /v1/embeddings alone. A fault that does not apply changes nothing.
type Fault string

// The faults, as documented on Fault.
const (
	faultNone             Fault = ""
	faultHTTP429          Fault = "http_429"
	faultHTTP500          Fault = "http_500"
	faultHTTP503          Fault = "http_503"
	faultHTTP400          Fault = "http_400"
	faultDrop             Fault = "drop"
	faultStall            Fault = "stall"
	faultSlowHeaders      Fault = "slow_headers"
	faultMalformedJSON    Fault = "malformed_json"
	faultStreamError      Fault = "stream_error"
	faultOversized        Fault = "oversized_event"
	faultEndless          Fault = "endless"
	faultIgnoreMaxTokens  Fault = "ignore_max_tokens"
	faultUsageTotal       Fault = "usage_total_mismatch"
	faultReasoningOnly    Fault = "reasoning_only"
	faultWrongContentType Fault = "wrong_content_type"
	faultEmptyBody        Fault = "empty_body"
	faultOmitMarker       Fault = "omit_marker"
	faultForeignMarker    Fault = "foreign_marker"
	faultLateMarker       Fault = "late_marker"
	faultExtraWords       Fault = "extra_words"
	faultVectorCount      Fault = "vector_count"
	faultVectorNaN        Fault = "vector_nan"
	faultVectorDimension  Fault = "vector_dimension"
)

// faultHeader is the request header naming the fault to apply to that
// request (one Fault name); it wins over FaultPlan.ByIndex and
// FaultPlan.Probability. An unknown name is a bad request.
const faultHeader = "X-Fake-Fault"

// requestIDHeader is recorded in each request's Trace (Trace.RequestID)
// and echoed in the response, so a client can correlate its observations with
// the server's ground truth (Server.TraceByRequestID).
const requestIDHeader = "X-Request-Id"

// extraWords is what the extra_words fault appends to an answer.
const extraWords = " and more"

// lateMarkerPrefix is what the late_marker fault writes before the marker.
const lateMarkerPrefix = "Answer:"

// Faults lists every fault name, sorted (the empty Fault, no fault, is not
// listed).
func Faults() []Fault {
	fs := make([]Fault, 0, len(faultSet))
	for f := range faultSet {
		fs = append(fs, f)
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i] < fs[j] })
	return fs
}

var faultSet = map[Fault]bool{
	faultHTTP429: true, faultHTTP500: true, faultHTTP503: true, faultHTTP400: true,
	faultDrop: true, faultStall: true, faultSlowHeaders: true, faultMalformedJSON: true,
	faultStreamError: true, faultOversized: true, faultEndless: true,
	faultIgnoreMaxTokens: true, faultUsageTotal: true,
	faultReasoningOnly: true, faultWrongContentType: true, faultEmptyBody: true,
	faultOmitMarker: true, faultForeignMarker: true, faultLateMarker: true, faultExtraWords: true,
	faultVectorCount: true, faultVectorNaN: true, faultVectorDimension: true,
}

// ParseFault returns the Fault named s (surrounding space removed): one of
// Faults, or "" for no fault. Any other name is a *ConfigError with Field
// "Fault" whose Want lists the names.
func ParseFault(s string) (Fault, error) {
	f := Fault(strings.TrimSpace(s))
	if f == faultNone || faultSet[f] {
		return f, nil
	}
	return "", &ConfigError{Field: "Fault", Value: s, Want: fmt.Sprintf("one of %v", Faults())}
}

// FaultPlan chooses the fault of each request: the X-Fake-Fault request
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
	// Stall is how long the stall fault pauses; SlowHeaders how long
	// slow_headers waits. Zero means 30 s each (simulated, so scaled by
	// TimeScale).
	Stall       time.Duration
	SlowHeaders time.Duration
	// OversizeBytes is the size of oversized_event's content; zero means
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
	known := func(f Fault) bool { return f == faultNone || faultSet[f] }
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
			check{"Faults.Probability", string(f), f != faultNone && faultSet[f], "keys " + want},
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
	if h := r.Header.Get(faultHeader); h != "" {
		return ParseFault(h)
	}
	if f, ok := p.ByIndex[index]; ok {
		return f, nil
	}
	if len(p.Probability) == 0 {
		return faultNone, nil
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
	return faultNone, nil
}

// httpFault is the status, extra headers and error of an HTTP fault.
type httpFault struct {
	status  int
	message string
	typ     string
	code    string
}

var httpFaults = map[Fault]httpFault{
	faultHTTP429: {http.StatusTooManyRequests, "Rate limit reached for requests. Please retry after the time given in Retry-After.", "rate_limit_error", "rate_limit_exceeded"},
	faultHTTP500: {http.StatusInternalServerError, "The server had an error while processing your request.", "server_error", ""},
	faultHTTP503: {http.StatusServiceUnavailable, "The server is overloaded or not ready yet.", "server_error", ""},
	faultHTTP400: {http.StatusBadRequest, "Simulated bad request: the fake server rejected this request.", "invalid_request_error", ""},
}

// midStream reports whether f fires after FaultPlan.After chunks.
func (f Fault) midStream() bool {
	switch f {
	case faultDrop, faultStall, faultMalformedJSON, faultStreamError, faultOversized:
		return true
	}
	return false
}
