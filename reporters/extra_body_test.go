package reporters

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// TestWorkloadIdentityExtraBody: the fields a run merged into every
// request body are part of its workload identity, in key order, so
// benchstat never puts runs with and without llama.cpp's cache_prompt in
// one row; a run without them has no such part.
func TestWorkloadIdentityExtraBody(t *testing.T) {
	plain := loadReport(t, seedPath)
	withBody := func(body map[string]string) *artifact.Report {
		r := loadReport(t, seedPath)
		r.AnvilGo = &artifact.Extension{Version: 1, Run: &artifact.RunSummary{ExtraBody: body}}
		return r
	}
	off := withBody(map[string]string{"n_keep": "4", "cache_prompt": "false", "tag": `"a b"`})
	on := withBody(map[string]string{"cache_prompt": "true", "n_keep": "4", "tag": `"a b"`})

	require.NotContains(t, workloadIdentity(plain), "extra-body")
	require.Contains(t, workloadIdentity(off), ` extra-body={"cache_prompt":false,"n_keep":4,"tag":"a b"}`)
	require.NotEqual(t, workloadIdentity(off), workloadIdentity(on))
	require.NotEqual(t, workloadIdentity(plain), workloadIdentity(off))

	var buf bytes.Buffer
	require.NoError(t, writeBenchfmt(&buf, off, on))
	p := parseBench(t, buf.Bytes())
	require.Empty(t, p.errs)
	require.Len(t, p.results, 2)
	for i, r := range []*artifact.Report{off, on} {
		got := benchConfigMap(p.results[i])[configWorkload]
		require.Equal(t, workloadIdentity(r), got)
		require.True(t, strings.Contains(got, "extra-body="), got)
	}
}
