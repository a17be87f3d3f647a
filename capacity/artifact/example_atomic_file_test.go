package artifact_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// Create claims a new name with the complete file; Write replaces it.
func ExampleCreateFile() {
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
	fmt.Println(artifact.CreateFile(path, text("first\n")))
	err = artifact.CreateFile(path, text("second\n"))
	fmt.Println("taken:", err != nil)
	fmt.Println(artifact.WriteFile(path, text("replaced\n")))
	b, _ := os.ReadFile(path)
	fmt.Print(string(b))
	// Output:
	// <nil>
	// taken: true
	// <nil>
	// replaced
}
