package atomicfile_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/anvilbench/anvil/internal/atomicfile"
)

// Create claims a new name with the complete file; Write replaces it.
func Example() {
	dir, err := os.MkdirTemp("", "atomicfile-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.bench")
	text := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	fmt.Println(atomicfile.Create(path, text("first\n")))
	err = atomicfile.Create(path, text("second\n"))
	fmt.Println("taken:", err != nil)
	fmt.Println(atomicfile.Write(path, text("replaced\n")))
	b, _ := os.ReadFile(path)
	fmt.Print(string(b))
	// Output:
	// <nil>
	// taken: true
	// <nil>
	// replaced
}
