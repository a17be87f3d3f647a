package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/merge"
)

// runMerge is "anvilreport merge -o MERGED SHARD...": one artifact of a
// whole workload from the artifacts of all its shards (merge.Shards),
// written atomically to MERGED. It never writes over one of its inputs,
// nor over anything that is not a regular file. Exit status: 0 written, 1
// the shards do not merge (the reason is named) or a file could not be
// read or written, 2 bad usage.
func runMerge(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("merge", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	out := fset.String("o", "", "write the merged artifact to `FILE`")
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return 0
		}
		fmt.Fprintf(stderr, "anvilreport merge: %v\n%s", err, usage)
		return 2
	}
	switch {
	case *out == "" || *out == "-":
		fmt.Fprintf(stderr, "anvilreport merge: -o FILE is required (the merged artifact is written atomically to a file)\n%s", usage)
		return 2
	case fset.NArg() == 0:
		fmt.Fprintf(stderr, "anvilreport merge: no SHARD artifact given\n%s", usage)
		return 2
	}
	if err := checkMergeOutput(*out, fset.Args()); err != nil {
		fmt.Fprintf(stderr, "anvilreport merge: %v\n", err)
		return 1
	}
	shards := make([]merge.Artifact, 0, fset.NArg())
	for _, path := range fset.Args() {
		data, err := readBounded(path)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the line names the path already
			}
			fmt.Fprintf(stderr, "anvilreport merge: %s: %v\n", path, err)
			return 1
		}
		shards = append(shards, merge.Artifact{Name: path, Data: data})
	}
	merged, err := merge.Shards(shards...)
	if err != nil {
		fmt.Fprintf(stderr, "anvilreport merge: %v\n", err)
		return 1
	}
	if err := merged.WriteFile(*out); err != nil {
		fmt.Fprintf(stderr, "anvilreport merge: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "merged %d shards (%d requests, %d succeeded, %d failed) into %s\n",
		len(shards), merged.Requests, merged.Completed, merged.Failed, *out)
	return 0
}

// checkMergeOutput refuses an output that is one of the inputs (by name or
// as the same file) or that exists and is not a regular file (a directory,
// a device, a symbolic link: an atomic rename would replace the link, not
// write through it).
func checkMergeOutput(out string, inputs []string) error {
	absOut, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	info, err := os.Lstat(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		info = nil
	case err != nil:
		return err
	case !info.Mode().IsRegular():
		return fmt.Errorf("-o %s: refusing to write over something that is not a regular file (%v)", out, info.Mode().Type())
	}
	for _, in := range inputs {
		absIn, err := filepath.Abs(in)
		if err == nil && absIn == absOut {
			return fmt.Errorf("-o %s: refusing to write over the input %s", out, in)
		}
		if info == nil {
			continue
		}
		if inInfo, err := os.Stat(in); err == nil && os.SameFile(info, inInfo) {
			return fmt.Errorf("-o %s: refusing to write over the input %s (the same file)", out, in)
		}
	}
	return nil
}

// readBounded reads a file of at most artifact.MaxBytes (one byte more,
// so that artifact.Read refuses a larger one with its own message).
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, artifact.MaxBytes+1))
}
