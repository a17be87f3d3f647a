package capacity

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// The protocol reference is cited by anchor from doc comments, other
// Markdown files and itself; a renamed or removed section must not leave
// a citation pointing nowhere. These tests resolve every citation the way
// GitHub renders the file.

// protocolFile is the protocol reference, relative to the module root.
const protocolFile = "capacity/PROTOCOL.md"

var (
	// protocolCitation is a citation of the reference from any file: its
	// name, '#' and the anchor.
	protocolCitation = regexp.MustCompile(`PROTOCOL\.md#([A-Za-z0-9_-]+)`)
	// moreAnchors continues a citation with further anchors of the same
	// file: a citation of #server_metrics followed by " and #audit", or
	// ", #b", also across a Go comment's line break.
	moreAnchors = regexp.MustCompile(`^(?:\s|//|,|\band\b|\bor\b)*#([A-Za-z0-9_-]+)`)
	// localLink is a link within the reference itself: "](#anchor)".
	localLink = regexp.MustCompile(`\]\(#([^)\s]+)\)`)
	// explicitAnchor is an HTML anchor: <a id="x"></a> or <a name="x">.
	explicitAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	// atxHeading is a Markdown heading line: "## Text" (up to 3 spaces of
	// indent, an optional closing run of #).
	atxHeading = regexp.MustCompile(`^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$`)
	// markdownLink is [text](url) in a heading, which GitHub renders as
	// text.
	markdownLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// protocolAnchors returns every anchor a link into markdown can name as
// GitHub renders it: each heading's slug (lower case, punctuation other
// than '-' and '_' dropped, spaces to '-', a repeated slug suffixed -1,
// -2, ...) and each explicit <a id> or <a name>. Fenced code is skipped.
func protocolAnchors(markdown string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for line := range strings.Lines(markdown) {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		for _, m := range explicitAnchor.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
		m := atxHeading.FindStringSubmatch(strings.TrimRight(line, "\n"))
		if m == nil {
			continue
		}
		slug := headingSlug(m[1])
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// headingSlug is GitHub's anchor of a heading's text: the rendered text
// (links as their text, HTML tags and code spans' backticks gone) in lower
// case, every character that is not a letter, a digit, a space, '-' or '_'
// dropped, and each space a '-'.
func headingSlug(text string) string {
	text = markdownLink.ReplaceAllString(text, "$1")
	text = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(text, "")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// protocolCitations lists the anchors of the reference that src cites,
// each with its 1-based line: the citations of the file by name and the
// anchors that continue them, and in the reference itself (self) its
// "](#a)" links.
func protocolCitations(src string, self bool) []citation {
	var out []citation
	at := func(offset int, anchor string) {
		out = append(out, citation{line: strings.Count(src[:offset], "\n") + 1, anchor: anchor})
	}
	for _, m := range protocolCitation.FindAllStringSubmatchIndex(src, -1) {
		at(m[2], src[m[2]:m[3]])
		for end := m[1]; ; {
			more := moreAnchors.FindStringSubmatchIndex(src[end:])
			if more == nil {
				break
			}
			at(end+more[2], src[end+more[2]:end+more[3]])
			end += more[1]
		}
	}
	if self {
		for _, m := range localLink.FindAllStringSubmatchIndex(src, -1) {
			at(m[2], src[m[2]:m[3]])
		}
	}
	slices.SortStableFunc(out, func(a, b citation) int { return a.line - b.line })
	return out
}

// citation is one anchor cited at a line.
type citation struct {
	line   int
	anchor string
}

// brokenProtocolCitations walks the module rooted at root and returns
// every citation of an anchor the reference does not have, as
// "file:line: #anchor", in file order.
func brokenProtocolCitations(t *testing.T, root string) []string {
	t.Helper()
	ref, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(protocolFile)))
	require.NoError(t, err)
	anchors := protocolAnchors(string(ref))
	require.NotEmpty(t, anchors, "the reference has sections")
	var broken []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); ext != ".go" && ext != ".md" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		for _, c := range protocolCitations(string(data), rel == protocolFile) {
			if !anchors[c.anchor] {
				broken = append(broken, fmt.Sprintf("%s:%d: #%s", rel, c.line, c.anchor))
			}
		}
		return nil
	})
	require.NoError(t, err)
	return broken
}

// TestProtocolCitationsResolve: every anchor of capacity/PROTOCOL.md that
// a .go or .md file of the module cites, and every link of the reference
// to itself, names a section the reference has.
func TestProtocolCitationsResolve(t *testing.T) {
	broken := brokenProtocolCitations(t, "..")
	require.Empty(t, broken, "citations of %s naming no anchor of it (a heading's GitHub anchor or an <a id>)", protocolFile)
}

// TestProtocolCitationsFindBroken: on a tree written for it, the check
// finds exactly the broken citations: in Go comments (a continued one
// across a line break too), in Markdown, and in the reference's own
// links; heading slugs follow GitHub (code spans, punctuation, a repeated
// heading), explicit anchors count, and a heading inside fenced code does
// not.
func TestProtocolCitationsFindBroken(t *testing.T) {
	root := t.TempDir()
	// cite is the file's name as citations spell it, kept out of this
	// file's own text (which the real check reads).
	cite := strings.NewReplacer("@", "PROTOCOL"+".md#")
	files := map[string]string{
		protocolFile: "# Reference\n\nSee [bounds](#bounds), [gone](#gone).\n\n" +
			"<a id=\"server_metrics\"></a>\n#### `server_metrics`\n\n## Bounds\n\n## Merging shards: the rules!\n\n" +
			"## Bounds\n\n```\n## In a fence\n```\n",
		"a/a.go": cite.Replace("// Package a cites capacity/@bounds and\n// #server_metrics, @bounds-1,\n" +
			"// @merging-shards-the-rules and #server-metrics.\n//\n// # Heading\npackage a\n"),
		"b.md":      cite.Replace("[x](capacity/@in-a-fence) and [y](capacity/@reference)\n"),
		".git/x.md": cite.Replace("@hidden\n"),
	}
	for name, src := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	}
	require.Equal(t, []string{
		"a/a.go:3: #server-metrics",
		"b.md:1: #in-a-fence",
		"capacity/PROTOCOL.md:3: #gone",
	}, brokenProtocolCitations(t, root))
}

// TestProtocolContentsListsEverySection: the contents line at the top of
// the reference links every top-level (##) section, in order.
func TestProtocolContentsListsEverySection(t *testing.T) {
	ref, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(protocolFile)))
	require.NoError(t, err)
	var sections, listed []string
	sc := bufio.NewScanner(strings.NewReader(string(ref)))
	contents := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Contents:"):
			contents = true
		case contents && strings.TrimSpace(line) == "":
			contents = false
		case strings.HasPrefix(line, "## "):
			sections = append(sections, headingSlug(strings.TrimPrefix(line, "## ")))
		}
		if contents {
			for _, m := range localLink.FindAllStringSubmatch(line, -1) {
				listed = append(listed, m[1])
			}
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, listed, "the reference has a contents line")
	anchors := protocolAnchors(string(ref))
	for _, l := range listed {
		require.True(t, anchors[l], "contents links #%s, which is no anchor", l)
	}
	// A section is listed by its heading's slug or by the <a id> just
	// above it; the sections are listed in the file's order.
	var missing []string
	last := -1
	for _, s := range sections {
		at := slices.IndexFunc(listed, func(l string) bool { return l == s || sameSection(string(ref), l, s) })
		switch {
		case at < 0:
			missing = append(missing, s)
		case at < last:
			t.Errorf("the contents line lists #%s before the section above it", listed[at])
		default:
			last = at
		}
	}
	require.Empty(t, missing, "top-level sections the contents line does not link")
}

// sameSection reports whether the explicit anchor id is the one set just
// above the heading whose slug is slug.
func sameSection(ref, id, slug string) bool {
	lines := strings.Split(ref, "\n")
	for i := 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "## ") && headingSlug(strings.TrimPrefix(lines[i], "## ")) == slug {
			return strings.Contains(lines[i-1], `<a id="`+id+`"`)
		}
	}
	return false
}
