package anviltest

import (
	"context"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/capacity/artifact"
)

// defaultRun is the campaign runner Capacity uses unless WithRunFunc
// replaces it.
func defaultRun(ctx context.Context, t capacity.Target, w capacity.Workload) (*artifact.Report, error) {
	return capacity.Run(ctx, t, w)
}
