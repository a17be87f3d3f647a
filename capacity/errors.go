package capacity

import (
	"errors"

	"github.com/anvilbench/anvil/capacity/internal/discovery"
)

// The sentinel errors of the package. Callers match the exported ones with
// errors.Is; a *FieldError (validate.go) carries the field, value and rule
// of a configuration mistake.

// ErrInvalidConfig is wrapped by every configuration error of Workload and
// Target, so callers can test errors.Is(err, ErrInvalidConfig).
var ErrInvalidConfig = errors.New("capacity: invalid configuration")

// ErrEndpointRefused is wrapped by the error Run returns when the endpoint
// answers the first requests with 401, 403 or 404: a wrong key, a
// forbidden model or a wrong URL, which no amount of retrying fixes.
var ErrEndpointRefused = discovery.ErrRefused

// errRunStopped is the cause given to in-flight requests when the run stops
// early because the endpoint refused it.
var errRunStopped = errors.New("capacity: run stopped: the endpoint refused the first requests")

// errRecompute wraps a failure of the report's own consistency check, which
// would be a defect of the runner.
var errRecompute = errors.New("capacity: the run's report does not recompute")
