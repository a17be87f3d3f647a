package anviltest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
