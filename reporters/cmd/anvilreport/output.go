package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// errOutputIsInput is the error of an output file that names one of the
// command's inputs.
var errOutputIsInput = errors.New("is one of the input files")

// writeOutput is the one way an anvilreport command writes a file: the
// bytes go to path atomically (artifact.WriteFile), never over one of
// inputs (the same file by any name: a hard link, a symbolic link, a
// relative path), and never over anything that is not a regular file (a
// FIFO, a symbolic link, a device such as /dev/null), which is refused as
// an error ("not a regular file") and left alone. Write to standard output
// ("-o -", or no -o) to pipe a page somewhere else.
func writeOutput(path string, inputs []string, data []byte) error {
	if err := notAnInput(path, inputs); err != nil {
		return err
	}
	return artifact.WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// notAnInput refuses an output path that is one of inputs. An output that
// does not exist yet is none of them (every input was read).
func notAnInput(path string, inputs []string) error {
	out, err := os.Stat(path)
	if err != nil {
		return nil
	}
	for _, in := range inputs {
		if fi, err := os.Stat(in); err == nil && os.SameFile(out, fi) {
			return fmt.Errorf("-o %s: %w (%s): refusing to overwrite it", path, errOutputIsInput, filepath.Clean(in))
		}
	}
	return nil
}
