package anviltest

import (
	"context"

	"github.com/anvilbench/anvil/capacity"
)

// defaultRun is the campaign runner Capacity uses unless WithRunFunc
// replaces it.
func defaultRun(ctx context.Context, t capacity.Target, w capacity.Workload) (*capacity.Report, error) {
	return capacity.Run(ctx, t, w)
}
