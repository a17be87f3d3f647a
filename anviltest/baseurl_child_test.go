package anviltest

import (
	"net/url"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// TestBaseURLWithoutV1Child: the first hour's commonest slip, a base URL
// without its /v1, in a real go test -bench run (this test binary run
// again with the user's variables): the run fails before it measures,
// asking "did you mean .../v1" and naming the variable to change, not a
// Go field alone; the hint to declare the model and window, which would
// only lead to the next 404, is not given.
func TestBaseURLWithoutV1Child(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child benchmark")
	}
	srv := fakeserver.New(fakeserver.Fast())
	defer srv.Close()
	u, err := url.Parse(srv.BaseURL())
	require.NoError(t, err)
	root := u.Scheme + "://" + u.Host
	cmd := childCommand(t, []string{envBaseURL + "=" + root, envModel + "=", envOut + "=" + filepath.Join(t.TempDir(), "out"), envProgress + "=0"},
		"-test.run=^$", "-test.bench=^BenchmarkCapacityContext$/^ctx=4096/", "-test.benchtime=2x")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	require.Regexp(t, regexp.QuoteMeta("model probe GET "+root+"/models: HTTP 404")+`.*`+
		regexp.QuoteMeta("; did you mean "+root+"/v1? Its /models lists \"fake-fast\": Target.BaseURL (ANVIL_BASE_URL) is the API root"), string(out))
	require.NotContains(t, string(out), "declare the model", "%s", out)
}
