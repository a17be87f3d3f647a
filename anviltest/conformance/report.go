package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// schema names the format of the JSON verdict file.
const schema = "anvil-go.conformance/v1"

// Report is the verdicts of one run of the suite, as written to
// conformance.<start>.json:
//
//	{"schema": "anvil-go.conformance/v1", "base_url": ..., "model": ...,
//	 "started_at": RFC 3339, "counts": {"pass": n, "fail": n, "skip": n},
//	 "verdicts": [{"check", "outcome", "reason", "notes"}, ...]}
//
// Suite.NewReport fills BaseURL (without userinfo, query or fragment) and
// Model scrubbed of the target's credentials; Suite.Check gives verdicts
// scrubbed the same way, so nothing the files print carries a credential.
type Report struct {
	// BaseURL is the target's base URL as recorded.
	BaseURL string
	// Model is the model id the suite sent.
	Model string
	// StartedAt is when the run started; it names the files.
	StartedAt time.Time
	// Verdicts are those of the checks that ran, in suite order.
	Verdicts []Verdict
}

// Counts is the number of verdicts of each outcome.
func (r *Report) Counts() map[Outcome]int {
	c := map[Outcome]int{Pass: 0, Fail: 0, Skip: 0}
	for _, v := range r.Verdicts {
		c[v.Outcome]++
	}
	return c
}

// Verdict returns the verdict of the named check, false when it did not
// run.
func (r *Report) Verdict(check string) (Verdict, bool) {
	for _, v := range r.Verdicts {
		if v.Check == check {
			return v, true
		}
	}
	return Verdict{}, false
}

// MarshalJSON writes the schema above.
func (r *Report) MarshalJSON() ([]byte, error) {
	vs := r.Verdicts
	if vs == nil {
		vs = []Verdict{}
	}
	return json.Marshal(struct {
		Schema    string          `json:"schema"`
		BaseURL   string          `json:"base_url"`
		Model     string          `json:"model"`
		StartedAt string          `json:"started_at"`
		Counts    map[Outcome]int `json:"counts"`
		Verdicts  []Verdict       `json:"verdicts"`
	}{schema, r.BaseURL, r.Model, r.StartedAt.UTC().Format(time.RFC3339), r.Counts(), vs})
}

// WriteMarkdown writes the verdicts as a Markdown table, one row per check
// (reasons only; the notes are in the JSON file and the test log).
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b bytes.Buffer
	c := r.Counts()
	fmt.Fprintf(&b, "# Conformance of %s at %s\n\n", mdCell(r.Model), mdCell(r.BaseURL))
	fmt.Fprintf(&b, "%s: %d pass, %d fail, %d skip.\n\n", r.StartedAt.UTC().Format(time.RFC3339), c[Pass], c[Fail], c[Skip])
	b.WriteString("| check | verdict | reason |\n|---|---|---|\n")
	for _, v := range r.Verdicts {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", mdCell(v.Check), strings.ToUpper(string(v.Outcome)), mdCell(v.Reason))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// mdCell makes text safe in a Markdown table cell: terminal-safe (see
// safeText), pipes and backslashes escaped, and the characters that could
// open a link, an image, inline HTML or code ([ ] < > `) escaped.
func mdCell(s string) string {
	s = safeText(s, maxNoteRunes)
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\|<>[]`+"`", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// stampLayout names a run's files by its start time to the nanosecond, as
// anviltest names its artifacts.
const stampLayout = "20060102T150405.000000000Z"

// maxNameSuffix bounds the "-2", "-3", ... suffixes tried when a name is
// already taken (two runs starting in the same nanosecond).
const maxNameSuffix = 1000

// WriteFiles writes conformance.<start>.json and .md into dir through the
// module's one atomic writer (artifact.WriteFile): the JSON file appears
// complete under a new name (a "-2", "-3", ... suffix when taken), then the
// Markdown file beside it, and their paths are returned. A failure leaves
// neither file behind, never an empty or partial one.
func (r *Report) WriteFiles(dir string) (jsonPath, markdownPath string, err error) {
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", "", err
	}
	js = append(js, '\n')
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		return "", "", err
	}
	bytesOf := func(b []byte) func(io.Writer) error {
		return func(w io.Writer) error { _, err := w.Write(b); return err }
	}
	stem := "conformance." + r.StartedAt.UTC().Format(stampLayout)
	for i := 1; i <= maxNameSuffix; i++ {
		s := stem
		if i > 1 {
			s = fmt.Sprintf("%s-%d", stem, i)
		}
		pj, pm := filepath.Join(dir, s+".json"), filepath.Join(dir, s+".md")
		err := artifact.CreateFile(pj, bytesOf(js))
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", "", fmt.Errorf("conformance: %w", err)
		}
		if err := artifact.WriteFile(pm, bytesOf(md.Bytes())); err != nil {
			os.Remove(pj)
			return "", "", fmt.Errorf("conformance: %w", err)
		}
		return pj, pm, nil
	}
	return "", "", fmt.Errorf("conformance: no free name for %q in %s", stem, dir)
}
