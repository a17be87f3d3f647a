package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/reporters"
)

// runHTML is "anvilreport html [-o FILE] ARTIFACT...": one page for all
// artifacts, to FILE or standard output. Exit status: 0 written, 1 an
// artifact could not be read or the page not written, 2 bad usage.
func runHTML(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("html", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("o", "", "write the page to `FILE` (default: standard output)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return 0
		}
		fmt.Fprintf(stderr, "anvilreport html: %v\n%s", err, usage)
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintf(stderr, "anvilreport html: no ARTIFACT given\n%s", usage)
		return 2
	}
	reps, status := readAll("html", fs.Args(), stderr)
	if status != 0 {
		return status
	}
	var page bytes.Buffer
	if err := reporters.WriteHTML(&page, reps...); err != nil {
		fmt.Fprintf(stderr, "anvilreport html: %v\n", err)
		return 1
	}
	if *out == "" || *out == "-" {
		if _, err := stdout.Write(page.Bytes()); err != nil {
			fmt.Fprintf(stderr, "anvilreport html: %v\n", err)
			return 1
		}
		return 0
	}
	// Atomic: a failed write leaves no partial page under the name; never
	// over an input or what is not a regular file.
	if err := writeOutput(*out, fs.Args(), page.Bytes()); err != nil {
		fmt.Fprintf(stderr, "anvilreport html: %v\n", err)
		return 1
	}
	return 0
}

// runCompare is "anvilreport compare [-across-api] OLD... -- NEW..." (or
// "compare OLD NEW"). Exit status: 0 comparable (the comparison is
// printed), 1 not comparable (every differing identity key is named), 2
// bad usage or an artifact that cannot be read.
func runCompare(args []string, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fmt.Fprint(stdout, usage)
			return 0
		}
	}
	compare := reporters.Compare
	if len(args) > 0 && (args[0] == "-across-api" || args[0] == "--across-api") {
		compare, args = reporters.CompareAcrossAPIs, args[1:]
	}
	var old, new []string
	switch i := slices.Index(args, "--"); {
	case i >= 0:
		old, new = args[:i], args[i+1:]
	case len(args) == 2:
		old, new = args[:1], args[1:]
	default:
		fmt.Fprintf(stderr, "anvilreport compare: want OLD... -- NEW... (or exactly OLD NEW), got %d arguments without --\n%s", len(args), usage)
		return 2
	}
	if len(old) == 0 || len(new) == 0 {
		fmt.Fprintf(stderr, "anvilreport compare: each side needs at least one artifact (old %d, new %d)\n%s", len(old), len(new), usage)
		return 2
	}
	for _, a := range append(slices.Clone(old), new...) {
		if strings.HasPrefix(a, "-") {
			fmt.Fprintf(stderr, "anvilreport compare: unknown flag %s (name a file beginning with - as ./%s)\n%s", a, a, usage)
			return 2
		}
	}
	oldIn, st1 := readInputs("compare", old, stderr)
	newIn, st2 := readInputs("compare", new, stderr)
	if st1 != 0 || st2 != 0 {
		return 2
	}
	sides := [2][]input{oldIn, newIn}
	c, err := compare(reportsOf(oldIn), reportsOf(newIn))
	var nc *reporters.NotComparableError
	switch {
	case errors.As(err, &nc):
		// The runs by their files too, not "old run 1 and old run 7" alone.
		for k, r := range nc.Runs {
			nc.Files[k] = sides[r[0]][r[1]].path
		}
		fmt.Fprintf(stderr, "anvilreport compare: %v\n", nc)
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "anvilreport compare: %v\n", err)
		return 2
	}
	if err := reporters.WriteComparison(stdout, c); err != nil {
		fmt.Fprintf(stderr, "anvilreport compare: %v\n", err)
		return 2
	}
	return 0
}

// readAll reads the artifacts of paths as readInputs does (the files
// that are no capacity artifact skipped with a line each): the reports,
// and the status readInputs gives.
func readAll(cmd string, paths []string, stderr io.Writer) ([]*artifact.Report, int) {
	in, status := readInputs(cmd, paths, stderr)
	return reportsOf(in), status
}

// reportsOf is the reports of in.
func reportsOf(in []input) []*artifact.Report {
	reps := make([]*artifact.Report, len(in))
	for i, f := range in {
		reps[i] = f.rep
	}
	return reps
}
