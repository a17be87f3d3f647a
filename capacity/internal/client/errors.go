package client

import "errors"

// Causes recorded on a request's context when one of its limits ends it.
var (
	errTotalTimeout = errors.New("capacity: request exceeded Workload.Timeout")
	errStallTimeout = errors.New("capacity: stream idle longer than Workload.StallTimeout")
)

// Malformed stream chunks.
var (
	errNotObject    = errors.New("payload is not a JSON object")
	errTrailingData = errors.New("data after the JSON object")
)

// errBodyEndGrace is the cause given to a request whose body stayed open
// longer than BodyEndGrace after its outcome was known.
var errBodyEndGrace = errors.New("capacity: response body still open after the outcome was known")
