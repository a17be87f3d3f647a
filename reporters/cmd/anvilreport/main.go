// Command anvilreport converts and summarizes anvil-serving.benchmark/v1
// capacity artifacts.
//
// Usage:
//
//	anvilreport bench FILE...    write the artifacts as Go benchmark format
//	anvilreport summary FILE...  print a console summary of each artifact
//
// bench reads artifacts of every generation (legacy ones carry fewer
// metrics and yield fewer units) and writes benchfmt to standard output, one
// result per artifact, for benchstat:
//
//	anvilreport bench old/*.json > old.txt
//	anvilreport bench new/*.json > new.txt
//	benchstat old.txt new.txt
//
// A file that is not a capacity artifact is reported on standard error and
// skipped; the exit status is then 1.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/anvilbench/anvil/capacity"
	"github.com/anvilbench/anvil/reporters"
)

const usage = `usage:
  anvilreport bench FILE...    convert capacity artifacts to Go benchmark format (stdout)
  anvilreport summary FILE...  print a console summary of each artifact
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command with its streams; it returns the exit status: 0 on
// success, 1 if any file failed, 2 on bad usage.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var each func(r *capacity.Report, path string) error
	switch args[0] {
	case "bench":
		bw := reporters.NewBenchWriter(stdout)
		each = func(r *capacity.Report, _ string) error { return bw.Write(r, "") }
	case "summary":
		first := true
		each = func(r *capacity.Report, path string) error {
			if !first {
				fmt.Fprintln(stdout)
			}
			first = false
			fmt.Fprintf(stdout, "== %s\n", path)
			return reporters.WriteSummary(stdout, r)
		}
	default:
		fmt.Fprintf(stderr, "anvilreport: unknown command %q\n%s", args[0], usage)
		return 2
	}
	status := 0
	for _, path := range args[1:] {
		r, err := readReport(path)
		if err == nil {
			err = each(r, path)
		}
		if err != nil {
			fmt.Fprintf(stderr, "anvilreport: %s: %v\n", path, err)
			status = 1
		}
	}
	return status
}

// readReport reads one capacity artifact.
func readReport(path string) (*capacity.Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return reporters.ReadJSON(bytes.NewReader(data))
}
