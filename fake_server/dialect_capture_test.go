package fakeserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// transcripts is the repository's folder of real-engine captures.
var transcripts = filepath.Join("..", "testdata", "transcripts")

// shape is the JSON keys of one kind of chunk, sorted, a key whose value is
// null written as "key=null": the chunk's own keys, its choice's, and its
// delta's and usage's with nested objects as "parent.key".
type shape struct {
	Top, Choice, Delta, Usage []string
}

// wireShape is the structure of a stream that a client depends on and that
// does not depend on the generated text.
type wireShape struct {
	ContentType string // "" when the capture has no headers file
	Objects     []string
	// Kinds maps "first", "content", "finish" and "usage" to the union of
	// the shapes of the chunks of that kind.
	Kinds map[string]shape
	// Role is "every-delta", "first-delta" or "none".
	Role string
	// FirstChunk is "role-only" when the first delta has no text, "text"
	// otherwise.
	FirstChunk string
	// Finish is where finish_reason sits: "last-text-chunk" or
	// "empty-delta-chunk".
	Finish string
	// UsageChunk is "choices-empty" for a separate usage chunk with
	// "choices": [], "none" without one.
	UsageChunk string
	Done       bool
}

// jsonKeys returns the sorted keys of m, prefixed with prefix, descending into
// nested objects when deep.
func jsonKeys(prefix string, m map[string]any, deep bool) []string {
	var out []string
	for k, v := range m {
		switch v := v.(type) {
		case nil:
			out = append(out, prefix+k+"=null")
		case map[string]any:
			out = append(out, prefix+k)
			if deep {
				out = append(out, jsonKeys(prefix+k+".", v, deep)...)
			}
		default:
			out = append(out, prefix+k)
		}
	}
	sort.Strings(out)
	return out
}

// union merges b into the sorted set a.
func union(a, b []string) []string {
	set := map[string]bool{}
	for _, s := range append(append([]string(nil), a...), b...) {
		set[s] = true
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// fingerprint reads an SSE body line by line (some captures lost their
// blank separator lines; every event of these dialects is one data line)
// and returns its wire shape.
func fingerprint(t *testing.T, contentType string, body []byte) wireShape {
	t.Helper()
	w := wireShape{ContentType: contentType, Kinds: map[string]shape{}, UsageChunk: "none"}
	objects := map[string]bool{}
	roles, texts, n := 0, 0, 0
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(strings.TrimRight(sc.Text(), "\r"), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			w.Done = true
			continue
		}
		var c map[string]any
		require.NoError(t, json.Unmarshal([]byte(data), &c), "chunk %q", data)
		n++
		if o, ok := c["object"].(string); ok {
			objects[o] = true
		}
		var s shape
		s.Top = jsonKeys("", c, false)
		if u, ok := c["usage"].(map[string]any); ok {
			s.Usage = jsonKeys("", u, true)
		}
		choices, _ := c["choices"].([]any)
		kind := "content"
		if len(choices) == 0 {
			kind = "usage"
			w.UsageChunk = "choices-empty"
		} else {
			require.Len(t, choices, 1, "chunk %q", data)
			ch := choices[0].(map[string]any)
			dl, _ := ch["delta"].(map[string]any)
			s.Choice, s.Delta = jsonKeys("", ch, false), jsonKeys("", dl, true)
			text, _ := dl["content"].(string)
			if _, ok := dl["role"].(string); ok {
				roles++
			}
			if text != "" {
				texts++
			}
			switch {
			case n == 1:
				kind = "first"
				w.FirstChunk = "text"
				if text == "" {
					w.FirstChunk = "role-only"
				}
			case ch["finish_reason"] != nil:
				kind = "finish"
				w.Finish = "last-text-chunk"
				if text == "" {
					w.Finish = "empty-delta-chunk"
				}
			}
		}
		old := w.Kinds[kind]
		w.Kinds[kind] = shape{union(old.Top, s.Top), union(old.Choice, s.Choice),
			union(old.Delta, s.Delta), union(old.Usage, s.Usage)}
	}
	require.NoError(t, sc.Err())
	for o := range objects {
		w.Objects = append(w.Objects, o)
	}
	sort.Strings(w.Objects)
	switch {
	case roles == 0:
		w.Role = "none"
	case roles == 1:
		w.Role = "first-delta"
	default:
		w.Role = "every-delta"
	}
	require.Positive(t, texts, "a stream without text says nothing of its shape")
	return w
}

// readCapture returns a capture's body and the Content-Type of its
// .headers file ("" when it has none).
func readCapture(t *testing.T, name string) (string, []byte) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(transcripts, name))
	require.NoError(t, err)
	hdr, err := os.ReadFile(filepath.Join(transcripts, strings.TrimSuffix(name, ".sse")+".headers"))
	if os.IsNotExist(err) {
		return "", body
	}
	require.NoError(t, err)
	for _, line := range strings.Split(string(hdr), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "Content-Type: "); ok {
			return v, body
		}
	}
	t.Fatalf("%s.headers has no Content-Type", name)
	return "", nil
}

// exception is a deliberate difference between a preset and its capture:
// apply rewrites the capture's shape into what the fake sends. The test
// fails when an exception changes nothing, so none outlives its reason.
type exception struct {
	name  string
	apply func(*wireShape)
}

// TestDialectPresetsMatchCaptures streams one response from the fake with
// each preset that has a real capture in testdata/transcripts and compares
// the two wire shapes. The fake has no SGLang, TGI or llama.cpp preset, so
// their captures are not in this table.
func TestDialectPresetsMatchCaptures(t *testing.T) {
	for _, tc := range []struct {
		name       string
		dialect    func() Dialect
		capture    string
		exceptions []exception
	}{
		{
			name:    "vllm",
			dialect: dialectVLLM,
			// The complete vLLM stream (role chunk to [DONE]) with
			// include_usage and without continuous_usage_stats, which the
			// fake does not implement.
			capture: "vllm-unknown-stream-usage-vision-from-sgl-project-genai-bench.sse",
			exceptions: []exception{{
				// The capture's vLLM predates usage.prompt_tokens_details
				// (vLLM sends it only with --enable-prompt-tokens-details);
				// the fake always sends cached_tokens so that clients'
				// prefix-cache accounting is exercised.
				name: "cached-tokens-details",
				apply: func(w *wireShape) {
					u := w.Kinds["usage"]
					u.Usage = union(u.Usage, []string{"prompt_tokens_details", "prompt_tokens_details.cached_tokens"})
					w.Kinds["usage"] = u
				},
			}, {
				// The capture has no headers; vLLM's StreamingResponse
				// sends "text/event-stream; charset=utf-8", the fake's
				// default.
				name:  "content-type-not-captured",
				apply: func(w *wireShape) { w.ContentType = defaultContentType },
			}},
		},
		{name: "ollama", dialect: dialectOllama, capture: "ollama-0.17.4-stream-usage.sse"},
		{name: "mock-llm", dialect: dialectMockLLM, capture: "mock-llm-0.1.29-stream.sse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct, body := readCapture(t, tc.capture)
			want := fingerprint(t, ct, body)
			for _, e := range tc.exceptions {
				before := fingerprint(t, ct, body)
				for _, prev := range tc.exceptions {
					if prev.name == e.name {
						break
					}
					prev.apply(&before)
				}
				after := before
				after.Kinds = map[string]shape{}
				for k, v := range before.Kinds {
					after.Kinds[k] = v
				}
				e.apply(&after)
				require.NotEmpty(t, cmp.Diff(before, after), "exception %s changes nothing: remove it", e.name)
				e.apply(&want)
			}
			synctest.Test(t, func(t *testing.T) {
				cfg := small()
				cfg.ReasoningTokens = Range{} // the captures have no reasoning
				cfg.Dialect = tc.dialect()
				srv := NewInMemory(cfg)
				defer srv.Close()
				resp, data, err := post(t, srv, streamBody(goldenPrompt, 64), nil)
				require.NoError(t, err)
				got := fingerprint(t, resp.Header.Get("Content-Type"), data)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("preset %s differs from %s (-capture +fake):\n%s", tc.name, tc.capture, diff)
				}
			})
		})
	}
}
