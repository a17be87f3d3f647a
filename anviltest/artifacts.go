package anviltest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/reporters"
)

// defaultOutDir is the artifact directory, relative to the package
// directory the test binary runs in, when neither -artifacts nor ANVIL_OUT
// is set.
const defaultOutDir = "anvil-out"

// artifactStampLayout names each run's files by its start time to the
// nanosecond, so repeated runs (-count, reruns) of one benchmark never share
// a name; run_id alone has one-second resolution.
const artifactStampLayout = "20060102T150405.000000000Z"

// maxNameSuffix bounds the "-2", "-3", ... suffixes tried when a name is
// already taken (two runs starting in the same nanosecond).
const maxNameSuffix = 1000

// artifactDir returns the directory the run's artifacts go to, created if
// needed: withOutDir, else b.ArtifactDir() when -artifacts is set (without
// the flag that directory is temporary and deleted, so it is not used),
// else $ANVIL_OUT, else defaultOutDir.
func (s *settings) artifactDir(b testing.TB) (string, error) {
	e, err := s.env()
	if err != nil {
		return "", err
	}
	var dir string
	switch {
	case s.outDir != "":
		dir = s.outDir
	case artifactsFlagSet():
		return b.ArtifactDir(), nil
	case e.out != "":
		dir = e.out
	default:
		dir = defaultOutDir
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("anviltest: artifact directory %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("anviltest: artifact directory %q: %w", abs, err)
	}
	return abs, nil
}

// artifactPaths are the two files written for one run.
type artifactPaths struct {
	json, bench string
}

// artifactStem is the file name without extension for a run of the
// benchmark named name: "/" becomes "__", "=" becomes "-" (benchstat reads
// an argument with "=" as label=path), other characters unsafe in file
// names are dropped; then the run's start time.
func artifactStem(name string, r *artifact.Report) string {
	name = strings.ReplaceAll(name, "/", "__")
	name = strings.Map(func(c rune) rune {
		switch {
		case c == '=':
			return '-'
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			strings.ContainsRune("-_.,+", c):
			return c
		}
		return -1
	}, name)
	start := time.Unix(0, r.StartedAtUnixNS).UTC()
	if r.StartedAtUnixNS == 0 {
		start = time.Now().UTC()
	}
	return name + "." + start.Format(artifactStampLayout)
}

// writeArtifacts writes r as <stem>.json (the v1 artifact) and <stem>.bench
// (one benchfmt result named benchName) into dir; the stem comes from the
// benchmark's name and the run's start. Each file is written atomically
// (artifact.CreateFile: a synced temporary file that appears under its
// name complete, in one step), so a failure, a full disk among them,
// leaves no file, empty or partial, beside the error. The .json name is
// claimed without replacing anything, so concurrent or repeated runs
// never overwrite each other; when the name is taken the next suffix is
// tried. If the .bench file then fails, the complete .json stays and the
// error says so.
func writeArtifacts(dir, name, benchName string, r *artifact.Report) (artifactPaths, error) {
	var bench bytes.Buffer
	if err := reporters.NewBenchWriter(&bench).Write(r, benchName); err != nil {
		return artifactPaths{}, err
	}
	stem := artifactStem(name, r)
	for i := 1; i <= maxNameSuffix; i++ {
		s := stem
		if i > 1 {
			s = fmt.Sprintf("%s-%d", stem, i)
		}
		p := artifactPaths{
			json:  filepath.Join(dir, s+".json"),
			bench: filepath.Join(dir, s+".bench"),
		}
		err := artifact.CreateFile(p.json, func(w io.Writer) error { _, err := r.WriteTo(w); return err })
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return artifactPaths{}, fmt.Errorf("anviltest: %w", err)
		}
		err = artifact.CreateFile(p.bench, func(w io.Writer) error { _, err := w.Write(bench.Bytes()); return err })
		if err != nil {
			return artifactPaths{}, fmt.Errorf("anviltest: %w (the artifact %s is written)", err, p.json)
		}
		return p, nil
	}
	return artifactPaths{}, fmt.Errorf("anviltest: no free artifact name for %q in %s", stem, dir)
}
