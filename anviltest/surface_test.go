package anviltest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// maxExportedNames is the most exported top-level names the module may
// have (issue 17 item 2): half of what it had before the surface was cut.
// A new name is welcome only in place of one that goes.
const maxExportedNames = 230

// exportedName is one exported top-level name of a package folder.
type exportedName struct {
	folder, name, kind string
	documented         bool
}

// exportedNames lists the exported top-level names of the module rooted at
// root: functions without a receiver, types, vars and consts declared in
// non-test files, outside internal/, cmd/ and testdata/ folders. A name
// declared in several files of one folder (per-OS files) counts once.
func exportedNames(t *testing.T, root string) []exportedName {
	t.Helper()
	seen := map[string]bool{}
	var out []exportedName
	add := func(folder, name, kind string, doc ...*ast.CommentGroup) {
		if !ast.IsExported(name) || seen[folder+"."+name] {
			return
		}
		seen[folder+"."+name] = true
		documented := false
		for _, d := range doc {
			documented = documented || strings.TrimSpace(d.Text()) != ""
		}
		out = append(out, exportedName{folder, name, kind, documented})
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		base := d.Name()
		if d.IsDir() {
			if path != root && (base == "internal" || base == "cmd" || base == "testdata" ||
				strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(base, ".go") || strings.HasSuffix(base, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		folder := filepath.ToSlash(rel)
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil {
					add(folder, decl.Name.Name, "func", decl.Doc)
				}
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						add(folder, spec.Name.Name, "type", decl.Doc, spec.Doc, spec.Comment)
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							add(folder, n.Name, decl.Tok.String(), decl.Doc, spec.Doc, spec.Comment)
						}
					}
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// TestSurfaceSize fails when the module exports more than maxExportedNames
// top-level names, listing the count of every folder, so that the surface
// cannot grow back unnoticed.
func TestSurfaceSize(t *testing.T) {
	names := exportedNames(t, "..")
	require.NotEmpty(t, names, "no exported names found: is the module root ..?")
	perFolder := map[string]int{}
	for _, n := range names {
		perFolder[n.folder]++
	}
	var b strings.Builder
	for _, folder := range slices.Sorted(maps.Keys(perFolder)) {
		fmt.Fprintf(&b, "%4d %s\n", perFolder[folder], folder)
	}
	fmt.Fprintf(&b, "%4d total", len(names))
	if len(names) > maxExportedNames {
		t.Fatalf("the module exports %d top-level names, more than %d; unexport or remove %d (a name stays exported only if a user must name it):\n%s",
			len(names), maxExportedNames, len(names)-maxExportedNames, b.String())
	}
	t.Logf("exported top-level names:\n%s", b.String())
}

// TestSurfaceDocumented: every exported top-level name has a doc comment,
// its own or its declaration group's.
func TestSurfaceDocumented(t *testing.T) {
	var missing []string
	for _, n := range exportedNames(t, "..") {
		if !n.documented {
			missing = append(missing, fmt.Sprintf("%s: %s %s", n.folder, n.kind, n.name))
		}
	}
	require.Empty(t, missing, "exported names without a doc comment")
}

// TestExportedNamesCountsAsIssue17: the counter takes exactly the names
// issue 17 counts, on a tree written for it: methods, test files,
// internal/, cmd/, testdata/ and main packages are left out, a name
// declared for two systems counts once, and an undocumented name is seen.
func TestExportedNamesCountsAsIssue17(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"a/a.go": "package a\n\n// F is counted.\nfunc F() {}\n\n// T is counted.\ntype T int\n\n" +
			"// M is a method: not counted.\nfunc (T) M() {}\n\n// Consts.\nconst (\n\tC1 = 1\n\tc2 = 2\n)\n\nvar V, W = 1, 2 // V and W.\n\nfunc Undocumented() {}\n",
		"a/a_linux.go":       "package a\n\n// Sys is declared per system.\nconst Sys = 1\n",
		"a/a_other.go":       "package a\n\n// Sys is declared per system.\nconst Sys = 2\n",
		"a/a_test.go":        "package a\n\n// InTest is a test file's.\nfunc InTest() {}\n",
		"a/internal/i/i.go":  "package i\n\n// I is internal.\nfunc I() {}\n",
		"a/cmd/tool/main.go": "package main\n\n// Cmd is a command's.\nfunc Cmd() {}\n",
		"a/testdata/x.go":    "package x\n\n// X is test data.\nfunc X() {}\n",
		"b/main.go":          "package main\n\n// Main is a main package's.\nfunc Main() {}\n",
	}
	for name, src := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	}
	got := exportedNames(t, root)
	slices.SortFunc(got, func(x, y exportedName) int { return strings.Compare(x.name, y.name) })
	want := []exportedName{
		{"a", "C1", "const", true}, {"a", "F", "func", true}, {"a", "Sys", "const", true},
		{"a", "T", "type", true}, {"a", "Undocumented", "func", false},
		{"a", "V", "var", true}, {"a", "W", "var", true},
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(exportedName{})); d != "" {
		t.Fatalf("exported names (-want +got):\n%s", d)
	}
}

// TestTopLevelIsFixed: the module's top level holds exactly what the
// layout table in README.md describes, so a new package finds its place
// inside one of the six folders (capacity/internal/ for the engine's
// implementation) instead of growing a seventh.
func TestTopLevelIsFixed(t *testing.T) {
	allowed := map[string]bool{
		"go.mod": true, "go.sum": true, "README.md": true, "LICENSE": true, "CHANGELOG.md": true,
		"anviltest": true, "capacity": true, "stats": true, "reporters": true,
		"fake_server": true, "testdata": true,
	}
	entries, err := os.ReadDir("..")
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	var extra []string
	for _, e := range entries {
		if !allowed[e.Name()] && !strings.HasPrefix(e.Name(), ".") { // .ci, .git, an editor's own
			extra = append(extra, e.Name())
		}
	}
	require.Empty(t, extra, "the top level is fixed (README.md#layout); move these inside one of its folders")
}

// TestLayoutTableNamesEveryPackage: every folder of the module holding Go
// files is a row of the README's layout table ("`capacity/sse/`"), and
// every folder a row names exists, so the table stays true as packages
// come and go.
func TestLayoutTableNamesEveryPackage(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(readme), "\n## Layout\n")
	require.True(t, ok, "README.md has a Layout section")
	table, _, _ = strings.Cut(table, "\n## ")
	var rows []string
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "| `") {
			cell, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " | ")
			rows = append(rows, cell)
		}
	}
	cells := strings.Join(rows, "\n")
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != ".." || d.Name() == "testdata" || d.Name() == "anvil-out") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		dir, err := filepath.Rel("..", filepath.Dir(path))
		if err != nil {
			return err
		}
		if dir != "." {
			require.Contains(t, cells, "`"+filepath.ToSlash(dir)+"/`", "README.md's layout table has no row for %s", dir)
		}
		return nil
	})
	require.NoError(t, err)
	for _, m := range regexp.MustCompile("`([a-z_/]+)/`").FindAllStringSubmatch(cells, -1) {
		_, err := os.Stat(filepath.Join("..", m[1]))
		require.NoError(t, err, "README.md's layout table names %s", m[1])
	}
}
