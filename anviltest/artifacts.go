package anviltest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/reporters"
)

// DefaultOutDir is the artifact directory, relative to the package
// directory the test binary runs in, when neither -artifacts nor ANVIL_OUT
// is set.
const DefaultOutDir = "anvil-out"

// artifactStampLayout names each run's files by its start time to the
// nanosecond, so repeated runs (-count, reruns) of one benchmark never share
// a name; run_id alone has one-second resolution.
const artifactStampLayout = "20060102T150405.000000000Z"

// maxNameSuffix bounds the "-2", "-3", ... suffixes tried when a name is
// already taken (two runs starting in the same nanosecond).
const maxNameSuffix = 1000

// artifactDir returns the directory the run's artifacts go to, created if
// needed: WithOutDir, else b.ArtifactDir() when -artifacts is set (without
// the flag that directory is temporary and deleted, so it is not used),
// else $ANVIL_OUT, else DefaultOutDir.
func (s *settings) artifactDir(b testing.TB) (string, error) {
	var dir string
	switch {
	case s.outDir != "":
		dir = s.outDir
	case artifactsFlagSet():
		return b.ArtifactDir(), nil
	case s.getenv(EnvOut) != "":
		dir = s.getenv(EnvOut)
	default:
		dir = DefaultOutDir
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
// benchmark's name and the run's start. Names are claimed with O_EXCL, so
// concurrent or repeated runs never overwrite each other, and each file is
// written to a temporary name and renamed into place (the JSON by
// artifact.WriteFile).
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
		f, err := os.OpenFile(p.json, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return artifactPaths{}, fmt.Errorf("anviltest: %w", err)
		}
		f.Close()
		if err := artifact.WriteFile(p.json, r); err != nil {
			return artifactPaths{}, err
		}
		if err := replaceFile(p.bench, bench.Bytes()); err != nil {
			return artifactPaths{}, err
		}
		return p, nil
	}
	return artifactPaths{}, fmt.Errorf("anviltest: no free artifact name for %q in %s", stem, dir)
}

// replaceFile writes data to path through a temporary file in the same
// directory and a rename, so a reader never sees a partial file.
func replaceFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("anviltest: %w", err)
	}
	_, werr := tmp.Write(data)
	merr := tmp.Chmod(0o644)
	cerr := tmp.Close()
	if err := errors.Join(werr, merr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("anviltest: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("anviltest: %w", err)
	}
	return nil
}
