package anviltest

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/anvilbench/anvil/capacity"

	"github.com/stretchr/testify/require"
)

// clearEnv unsets, for the test, every ANVIL_* variable: the ones
// anviltest reads and any other the developer's shell holds. Every test
// that runs Capacity, Sweep, Main or Conformance on the process
// environment calls it first, so a developer's ANVIL_RATE=5 never turns a
// closed-loop test into an open loop.
func clearEnv(t testing.TB) {
	t.Helper()
	names := envNames()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "ANVIL_") && !slices.Contains(names, k) {
			names = append(names, k)
		}
	}
	for _, k := range names {
		t.Setenv(k, "") // restored after the test
		require.NoError(t, os.Unsetenv(k))
	}
}

// TestEveryVariableIsInTheTable: every ANVIL_* name in the package's code
// and in the README is a row of envVars, the one place that parses them.
func TestEveryVariableIsInTheTable(t *testing.T) {
	names := envNames()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err == nil && regexp.MustCompile(`^ANVIL_[A-Z0-9_]+$`).MatchString(v) {
				require.Contains(t, names, v, "%s: %s is read outside the envVars table", fset.Position(lit.Pos()), v)
			}
			return true
		})
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	for _, m := range regexp.MustCompile(`ANVIL_[A-Z0-9_]+[A-Z0-9]`).FindAllString(string(readme), -1) {
		require.Contains(t, names, m, "README.md names %s, which anviltest does not read", m)
	}
}

// TestEnvironmentBadValues: a bad value of any variable is an *envError
// naming the variable, the value and what is allowed, whatever else is
// configured.
func TestEnvironmentBadValues(t *testing.T) {
	for _, v := range envVars {
		for _, bad := range []string{"junk", "-1", "1e309"} {
			e, err := readEnvironment(env{v.name: bad}.get)
			if err == nil {
				// A free-form variable (a URL, a name, a label) takes any
				// text; Target validation judges it.
				require.Contains(t, []string{envBaseURL, envModel, envAPIKeyEnv, envEngine, envGPU, envClockDomainID, envConfigurationFingerprint, envOut, envTrace}, v.name,
					"%s=%q accepted: %+v", v.name, bad, e)
				continue
			}
			var ee *capacity.FieldError
			require.True(t, errors.As(err, &ee), "%s=%q: %v", v.name, bad, err)
			require.Equal(t, v.name, ee.Field)
			require.Contains(t, err.Error(), v.name)
			require.Contains(t, err.Error(), strconv.Quote(bad))
			require.Contains(t, err.Error(), v.allowed)
		}
	}
}

// TestEnvironmentUnsetIsZero: no variable set is the zero environment, and
// an empty value is unset.
func TestEnvironmentUnsetIsZero(t *testing.T) {
	e, err := readEnvironment(env{}.get)
	require.NoError(t, err)
	require.Equal(t, environment{}, e)
	empty := env{}
	for _, n := range envNames() {
		empty[n] = ""
	}
	e, err = readEnvironment(empty.get)
	require.NoError(t, err)
	require.Equal(t, environment{}, e)
}

// TestWithEnvironmentNilReadsNothing: WithEnvironment(nil) ignores the
// process environment, even a bad value in it.
func TestWithEnvironmentNilReadsNothing(t *testing.T) {
	clearEnv(t)
	t.Setenv(envRate, "junk")
	t.Setenv(envBaseURL, "http://127.0.0.1:1/v1")
	s := newSettings([]Option{WithEnvironment(nil)})
	tgt, err := s.resolveTarget()
	require.NoError(t, err)
	require.Empty(t, tgt.BaseURL)
	_, err = newSettings(nil).resolveTarget()
	require.ErrorContains(t, err, envRate)
}
