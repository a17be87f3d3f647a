package perfbench

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadmeNamesTheseBenchmarks holds the README's Performance section to
// this package: every -bench pattern it names matches a benchmark here,
// and its command runs this package.
func TestReadmeNamesTheseBenchmarks(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## Performance\n")
	require.True(t, ok, "README.md has a Performance section")
	section, _, _ = strings.Cut(section, "\n## ")

	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	var benchmarks []string
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range regexp.MustCompile(`(?m)^func (Benchmark\w+)\(b \*testing\.B\)`).FindAllStringSubmatch(string(src), -1) {
			benchmarks = append(benchmarks, m[1])
		}
	}
	require.NotEmpty(t, benchmarks)

	named := regexp.MustCompile("`-bench ([^` ]+)`").FindAllStringSubmatch(section, -1)
	require.NotEmpty(t, named, "the section names the benchmark of each figure")
	for _, m := range named {
		re, err := regexp.Compile(m[1])
		require.NoError(t, err, "README.md: -bench %s", m[1])
		matched := false
		for _, name := range benchmarks {
			matched = matched || re.MatchString(name)
		}
		require.True(t, matched, "README.md: -bench %s matches no benchmark of perfbench (%v)", m[1], benchmarks)
	}
	require.Contains(t, section, "go test -run '^$' -bench . ", "the command that runs them all")
	require.Contains(t, section, " ./capacity/internal/perfbench`")
}
