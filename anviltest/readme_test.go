package anviltest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// docSnippet is one Go example of the documentation, as a user pastes it.
type docSnippet struct {
	where, code string
}

// readmeGoBlocks returns the ```go blocks of the README.
func readmeGoBlocks(t *testing.T, path string) []docSnippet {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []docSnippet
	var cur []string
	in, start := false, 0
	for i, line := range strings.Split(string(data), "\n") {
		switch {
		case !in && strings.TrimSpace(line) == "```go":
			in, start, cur = true, i+1, nil
		case in && strings.TrimSpace(line) == "```":
			in = false
			out = append(out, docSnippet{fmt.Sprintf("%s:%d", filepath.Base(path), start), withoutFileHeader(strings.Join(cur, "\n"))})
		case in:
			cur = append(cur, line)
		}
	}
	return out
}

// withoutFileHeader is code without the package clause and the imports
// of a whole file: its declarations, which share one file with the
// others' (whose imports cover theirs).
func withoutFileHeader(code string) string {
	if !strings.HasPrefix(code, "package ") {
		return code
	}
	_, rest, _ := strings.Cut(code, "\n")
	rest = strings.TrimLeft(rest, "\n")
	if strings.HasPrefix(rest, "import (") {
		_, rest, _ = strings.Cut(rest, "\n)\n")
	} else if strings.HasPrefix(rest, "import ") {
		_, rest, _ = strings.Cut(rest, "\n")
	}
	return strings.TrimLeft(rest, "\n")
}

// godocBenchmarks returns the code blocks of the doc comments in path
// that define a function: the examples a user copies from go doc.
func godocBenchmarks(t *testing.T, path string) []docSnippet {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []docSnippet
	var cur []string
	start := 0
	flush := func() {
		if len(cur) > 0 && strings.HasPrefix(cur[0], "func ") {
			out = append(out, docSnippet{fmt.Sprintf("%s:%d", filepath.Base(path), start), strings.Join(cur, "\n")})
		}
		cur = nil
	}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "//\t"):
			if cur == nil {
				start = n
			}
			cur = append(cur, strings.TrimPrefix(line, "//\t"))
		case line == "//" && cur != nil:
			cur = append(cur, "")
		default:
			flush()
		}
	}
	flush()
	require.NoError(t, sc.Err())
	return out
}

var funcName = regexp.MustCompile(`(?m)^func (Benchmark|Test)(\w*)\(`)

// TestDocumentationExamplesRun builds the Go examples of the README and of
// the package documentation, exactly as written (only each function is
// renamed so they share one package), in a module of their own that
// requires this one, and runs them as go test -bench runs them, against
// the embedded fake server with its defaults: every benchmark must pass.
func TestDocumentationExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the documentation's examples")
	}
	// Its go test builds a binary of its own, never with -race: under
	// the race detector this test would only run the same again.
	skipUnderRace(t, "its go test -bench builds and runs a binary of its own, without -race")
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	snippets := readmeGoBlocks(t, filepath.Join(root, "README.md"))
	require.NotEmpty(t, snippets, "the README has Go examples")
	for _, f := range []string{"doc.go", "capacity.go"} {
		snippets = append(snippets, godocBenchmarks(t, filepath.Join(root, "anviltest", f))...)
	}

	var src strings.Builder
	src.WriteString("package docexamples\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n\t\"time\"\n\n" +
		"\t\"github.com/anvilbench/anvil/anviltest\"\n\t\"github.com/anvilbench/anvil/capacity\"\n)\n\n" +
		"var (\n\t_ = fmt.Sprint\n\t_ = time.Second\n)\n")
	benchmarks, mains := 0, 0
	for i, s := range snippets {
		code := funcName.ReplaceAllStringFunc(s.code, func(m string) string {
			if strings.HasPrefix(m, "func TestMain(") {
				mains++
				if mains > 1 { // one TestMain per package: the others as plain functions
					return fmt.Sprintf("func testMain%d(", i)
				}
				return m
			}
			benchmarks++
			return fmt.Sprintf("func BenchmarkDoc%d_%s(", i, strings.TrimSuffix(strings.TrimPrefix(m, "func "), "("))
		})
		fmt.Fprintf(&src, "\n// %s\n%s\n", s.where, code)
	}
	require.GreaterOrEqual(t, benchmarks, 3, "README, doc.go and the Capacity doc each have a benchmark:\n%s", src.String())
	require.Positive(t, mains, "the README shows TestMain")

	dir := t.TempDir()
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	gomod, err := docModule(filepath.Join(root, "go.mod"), root)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), gomod, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), gosum, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "doc_test.go"), []byte(src.String()), 0o644))

	cmd := exec.CommandContext(t.Context(), goTool, "test", "-run", "^$", "-bench", ".", "-benchtime", "2x")
	cmd.Dir, cmd.Env = dir, docEnv(dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the documentation's examples fail:\n%s\n%s", src.String(), out)
	require.NotContains(t, string(out), "FAIL")
	require.Contains(t, string(out), "target: embedded-fake", "TestMain printed the identity")
	require.Regexp(t, `(?m)^BenchmarkDoc\d+_BenchmarkCapacity/ctx=32768/conc=16\S*\s+2\s`, string(out))
}

// docModule returns the go.mod of the examples' module: this module's own
// requirements, exactly (so its module graph is this module's, and every
// module it needs is one this module's own tests already needed: no
// `go mod tidy`, which would look up the test dependencies of dependencies
// that no build here needs and a fresh module cache does not have), plus
// the requirement of this module replaced by its directory root.
func docModule(path, root string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	mod := string(data)
	first, rest, ok := strings.Cut(mod, "\n")
	if !ok || !strings.HasPrefix(first, "module ") {
		return nil, fmt.Errorf("%s: first line %q is no module directive", path, first)
	}
	return []byte("module docexamples\n" + rest +
		"\nrequire github.com/anvilbench/anvil v0.0.0\n\nreplace github.com/anvilbench/anvil => " + root + "\n"), nil
}

// docEnv is the environment of the examples' go commands: no ANVIL_*
// variable of the developer's, artifacts under dir, no network for
// modules (the module cache has them).
func docEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANVIL_") && !strings.HasPrefix(kv, "GOFLAGS=") {
			env = append(env, kv)
		}
	}
	return append(env, envOut+"="+filepath.Join(dir, "out"), envProgress+"=0",
		"GOPROXY=off", "GOWORK=off", "GOFLAGS=-mod=mod")
}
