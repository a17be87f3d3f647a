// Command anvilreport converts and summarizes anvil-serving.benchmark/v1
// capacity artifacts.
//
// Usage:
//
//	anvilreport bench FILE...    write the artifacts as Go benchmark format
//	anvilreport summary FILE...  print a console summary of each artifact, then
//	                             for runs of one workload the 95% t-interval of
//	                             each headline metric across them
//	anvilreport html [-o FILE] ARTIFACT...
//	                             write one self-contained HTML report of the artifacts
//	anvilreport compare [-across-api] OLD... -- NEW...
//	                             compare runs of one workload (also: compare OLD NEW)
//	anvilreport merge -o MERGED SHARD...
//	                             merge the shard artifacts of one workload into one
//	anvilreport -version         print the module version and VCS revision
//
// bench reads artifacts of every generation (legacy ones carry fewer
// metrics and yield fewer units) and writes benchfmt to standard output, one
// result per artifact, for benchstat:
//
//	anvilreport bench old/*.json > old.txt
//	anvilreport bench new/*.json > new.txt
//	benchstat old.txt new.txt
//
// compare fails closed: when the two sides (or two runs of one side) did not
// send the same workload, it names every differing identity key with both
// values and exits with status 1; 0 means comparable, 2 bad usage or an
// unreadable artifact. With -across-api the two sides may have sent the
// workload over two APIs (anvil_go.run.api: chat and Responses, say, against
// one server), and the comparison says what differs between them by
// definition (capacity/PROTOCOL.md#comparing-apis):
//
//	anvilreport compare -across-api chat.json -- responses.json
//
// html -o never writes over one of its input files or over anything that
// is not a regular file (a FIFO, a symbolic link, a device such as
// /dev/null): it refuses them with exit status 1 and leaves them as they
// were; without -o (or with -o -) the page goes to standard output.
//
// merge makes one artifact of a workload run as several shards (one per
// machine, or per process) from all their artifacts, exactly
// (capacity/PROTOCOL.md#merging-shards), and writes it atomically to
// MERGED; it refuses, naming the problem, artifacts that are not every shard
// of one workload exactly once on one declared clock domain, and an output
// that is one of the inputs or not a regular file:
//
//	anvilreport merge -o merged.json shard-*.json
//	anvilreport html -o merged.html merged.json
//
// bench, summary, html and compare skip, with one line on standard error
// each, the files that are not capacity artifacts (another JSON document,
// such as a conformance verdict written beside the artifacts), so that
// anvil-out/*.json works; they fail only when no artifact is left. A file
// that cannot be read, or a broken artifact, is reported on standard
// error too: bench and summary go on with the others and exit with status
// 1, html writes no page and exits with status 1. Bad usage (no
// command, an unknown command or flag, no FILE) exits with status 2; -h
// prints the usage and exits with status 0.
package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/reporters"
)

const usage = `usage:
  anvilreport bench FILE...    convert capacity artifacts to Go benchmark format (stdout)
  anvilreport summary FILE...  print a console summary of each artifact; for two or
                               more runs of one workload, then the mean and 95%
                               t-interval of each headline metric across them
  anvilreport html [-o FILE] ARTIFACT...
                               write one self-contained HTML page (inline SVG, no
                               script, nothing fetched) for all artifacts, runs
                               overlaid; to FILE, or stdout without -o
  anvilreport compare [-across-api] OLD... -- NEW...
  anvilreport compare OLD NEW  compare the runs of OLD with those of NEW (one or more
                               artifacts a side). Refuses runs that did not send one
                               workload, naming every differing identity key; shows
                               setup differences (engine, gpu, model...) as provenance;
                               per metric prints old, new, delta and, with >= 2 runs a
                               side, a Mann-Whitney U test at alpha 0.05.
                               -across-api: the sides may have sent the workload over
                               two APIs (chat, responses, messages, completions); says
                               what differs between them by definition.
                               exit status: 0 comparable, 1 not comparable, 2 usage
                               or read error
  anvilreport merge -o MERGED SHARD...
                               merge the artifacts of every shard of one workload into
                               one artifact of the whole, written atomically to MERGED
                               (never over an input); refuses, naming the problem, a
                               missing or duplicate shard, two workloads, a null or
                               differing clock_domain_id, a shard that started late.
                               exit status: 0 written, 1 not mergeable or a file
                               error, 2 usage
  anvilreport -version         print this build's module version, VCS revision
                               and Go release (those its artifacts' readers see
                               in anvil_go.run of the runs it measured are the
                               benchmark binary's)
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command with its streams; it returns the exit status: 0 on
// success, 1 if any file failed, 2 on bad usage.
func run(args []string, stdout, stderr io.Writer) int {
	// Messages quote paths, arguments and text read from the files.
	stderr = printableWriter{stderr}
	if len(args) > 0 {
		switch args[0] {
		case "html":
			return runHTML(args[1:], stdout, stderr)
		case "compare":
			return runCompare(args[1:], stdout, stderr)
		case "merge":
			return runMerge(args[1:], stdout, stderr)
		}
	}
	for _, a := range args {
		switch {
		case a == "-h" || a == "-help" || a == "--help" || a == "help":
			fmt.Fprint(stdout, usage)
			return 0
		case a == "-version" || a == "--version" || a == "version":
			fmt.Fprintln(stdout, versionLine())
			return 0
		case strings.HasPrefix(a, "-"):
			fmt.Fprintf(stderr, "anvilreport: unknown flag %s (name a file beginning with - as ./%s)\n%s", a, a, usage)
			return 2
		}
	}
	if len(args) == 0 {
		fmt.Fprintf(stderr, "anvilreport: no command\n%s", usage)
		return 2
	}
	var each func(r *artifact.Report, path string) error
	switch args[0] {
	case "bench":
		bw := reporters.NewBenchWriter(stdout)
		each = func(r *artifact.Report, _ string) error { return bw.Write(r, "") }
	case "summary":
		first := true
		each = func(r *artifact.Report, path string) error {
			if !first {
				fmt.Fprintln(stdout)
			}
			first = false
			fmt.Fprintf(stdout, "== %s\n", reporters.Printable(path))
			return reporters.WriteSummary(stdout, r)
		}
	default:
		fmt.Fprintf(stderr, "anvilreport: unknown command %q: want bench, summary, html, compare or merge\n%s", args[0], usage)
		return 2
	}
	if len(args) < 2 {
		fmt.Fprintf(stderr, "anvilreport: %s: no FILE given\n%s", args[0], usage)
		return 2
	}
	in, status := readInputs(args[0], args[1:], stderr)
	var reps []*artifact.Report // the runs summarized, for the intervals across them
	var names []string
	for _, f := range in {
		if err := each(f.rep, f.path); err != nil {
			fmt.Fprintf(stderr, "anvilreport: %s: %v\n", f.path, err)
			status = 1
			continue
		}
		reps, names = append(reps, f.rep), append(names, f.path)
	}
	if args[0] == "summary" && len(reps) > 1 {
		var across strings.Builder
		if err := writeAcross(&across, reps, names); err != nil {
			fmt.Fprintf(stderr, "anvilreport: summary: %v\n", err)
			return 1
		}
		if across.Len() > 0 {
			fmt.Fprintf(stdout, "\n%s", across.String())
		}
	}
	return status
}

// input is one capacity artifact a command read, and its path.
type input struct {
	path string
	rep  *artifact.Report
}

// readInputs reads the capacity artifacts of paths for command cmd, with
// one line on stderr for each file it cannot use. A file that is not a
// capacity artifact at all (artifact.ErrNotArtifact: another JSON
// document, such as the conformance verdict that -run Conformance writes
// beside the artifacts, so that anvil-out/*.json still works) is skipped
// and changes nothing else; a file that cannot be read, or an artifact
// that is broken, makes the status 1. So does a list with no artifact
// left: there is nothing to report.
func readInputs(cmd string, paths []string, stderr io.Writer) ([]input, int) {
	var in []input
	status, skipped := 0, 0
	for _, path := range paths {
		r, err := readReport(path)
		switch {
		case errors.Is(err, artifact.ErrNotArtifact):
			fmt.Fprintf(stderr, "anvilreport: %s: skipped: %v\n", path, notArtifactReason(err))
			skipped++
		case err != nil:
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the line names the path already
			}
			fmt.Fprintf(stderr, "anvilreport: %s: %v\n", path, err)
			status = 1
		default:
			in = append(in, input{path, r})
		}
	}
	if len(in) == 0 && status == 0 {
		fmt.Fprintf(stderr, "anvilreport %s: none of the %s is a capacity artifact\n", cmd, files(len(paths)))
		status = 1
	}
	return in, status
}

// notArtifactReason is the reason a document is not a capacity artifact,
// without the reader's "artifact: read: " prefix.
func notArtifactReason(err error) string {
	return strings.TrimPrefix(err.Error(), "artifact: read: ")
}

// files is "1 file" or "n files".
func files(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}

// versionLine is what -version prints: the build of this module that
// the binary holds (artifact.RunSummary.RecordBuild, the keys every
// artifact's anvil_go.run records), what it cannot say named as unknown:
//
//	anvilreport v0.4.0, revision e02e9a91af51, go1.26.0
//	anvilreport (devel), revision unknown (go build stamps it from a git checkout), go1.26.0
func versionLine() string {
	var b artifact.RunSummary
	b.RecordBuild()
	version, revision := b.BuildLabels()
	if version == "" {
		version = "version unknown"
	}
	if revision == "" {
		revision = "unknown (go build stamps it from a git checkout)"
	}
	goVersion := "Go release unknown"
	if b.GoVersion != nil {
		goVersion = *b.GoVersion
	}
	return fmt.Sprintf("anvilreport %s, revision %s, %s", version, revision, goVersion)
}

// readReport reads one capacity artifact; artifact.Read bounds how much of the
// file it reads. An artifact whose stored metrics its own rows contradict
// is refused (Report.CheckMetrics, as merge refuses it), so that no report
// prints numbers the rows do not give.
func readReport(path string) (*artifact.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := artifact.Read(f)
	if err != nil {
		return nil, err
	}
	if err := r.CheckMetrics(); err != nil {
		return nil, err
	}
	return r, nil
}

// printableWriter passes every Write through reporters.PrintableLines, so
// nothing a message quotes (a file name, an argument, text from a file)
// reaches the terminal as a control sequence. Each message is one Write.
type printableWriter struct{ w io.Writer }

func (p printableWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, reporters.PrintableLines(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}
