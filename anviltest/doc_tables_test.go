package anviltest

import (
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

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// docTable returns the first column of the indented table in section
// heading of the package doc (doc.go): each line "//\t<name>  <text>"
// whose name matches entry, in order.
func docTable(t *testing.T, heading string, entry *regexp.Regexp) []string {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(src), "\n// # "+heading+"\n")
	require.True(t, ok, "doc.go has no section %q", heading)
	section, _, _ = strings.Cut(section, "\n// # ")
	var names []string
	for line := range strings.Lines(section) {
		row, ok := strings.CutPrefix(line, "//\t")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(row, "  ")
		if entry.MatchString(name) {
			names = append(names, name)
		}
	}
	return names
}

// tableDiff is the difference of a table in the doc and the code's, in
// both directions: "" when each holds every entry of the other once.
func tableDiff(doc, code []string) string {
	count := map[string]int{}
	for _, n := range doc {
		count[n]++
	}
	var dup []string
	for n, c := range count {
		if c > 1 {
			dup = append(dup, n)
		}
	}
	slices.Sort(dup)
	d, c := slices.Sorted(slices.Values(slices.Compact(slices.Sorted(slices.Values(doc))))), slices.Sorted(slices.Values(code))
	if diff := cmp.Diff(c, d); diff != "" || len(dup) > 0 {
		return "(-code +doc):\n" + diff + strings.Join(append([]string{""}, dup...), "\ntwice in the doc: ")
	}
	return ""
}

// TestDocVariableTable: the table of variables in the package doc's
// Configuration section is envVars, the variables anviltest reads, in
// both directions.
func TestDocVariableTable(t *testing.T) {
	doc := docTable(t, "Configuration", regexp.MustCompile(`^ANVIL_[A-Z0-9_]+$`))
	require.NotEmpty(t, doc)
	if d := tableDiff(doc, envNames()); d != "" {
		t.Errorf("doc.go's variable table and envVars differ %s", d)
	}
}

// benchUnits are the benchmark units package reporters writes: the
// string constants named unit* of its source.
func benchUnits(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "reporters", "*.go"))
	require.NoError(t, err)
	fset := token.NewFileSet()
	var units []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "unit") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					require.True(t, ok && lit.Kind == token.STRING, "%s: %s is not a string literal", fset.Position(name.Pos()), name.Name)
					u, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					units = append(units, u)
				}
			}
		}
	}
	return units
}

// TestDocMetricUnits: the table of units in the package doc's Metrics
// section is every unit package reporters writes on a benchmark line,
// in both directions (reporters.BenchResult says they are listed here).
func TestDocMetricUnits(t *testing.T) {
	doc := docTable(t, "Metrics", regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9/%-]*$`))
	require.NotEmpty(t, doc)
	code := benchUnits(t)
	require.Contains(t, code, "ttft-p50-ms", "the units are read from package reporters")
	if d := tableDiff(doc, code); d != "" {
		t.Errorf("doc.go's metric table and package reporters' units differ %s", d)
	}
}

// TestDocTablesFailOnAMissingEntry: each table test fails when one entry
// is removed from either side, or one is listed twice.
func TestDocTablesFailOnAMissingEntry(t *testing.T) {
	for _, tt := range []struct {
		name      string
		doc, code []string
	}{
		{"variables", docTable(t, "Configuration", regexp.MustCompile(`^ANVIL_[A-Z0-9_]+$`)), envNames()},
		{"units", docTable(t, "Metrics", regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9/%-]*$`)), benchUnits(t)},
	} {
		require.Empty(t, tableDiff(tt.doc, tt.code), tt.name)
		for i := range tt.doc {
			less := slices.Delete(slices.Clone(tt.doc), i, i+1)
			require.NotEmpty(t, tableDiff(less, tt.code), "%s: the doc without %s", tt.name, tt.doc[i])
			twice := append(slices.Clone(tt.doc), tt.doc[i])
			require.NotEmpty(t, tableDiff(twice, tt.code), "%s: the doc with %s twice", tt.name, tt.doc[i])
		}
		for i := range tt.code {
			less := slices.Delete(slices.Clone(tt.code), i, i+1)
			require.NotEmpty(t, tableDiff(tt.doc, less), "%s: the code without %s", tt.name, tt.code[i])
		}
	}
}
