package anviltest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/anvilbench/anvil/capacity"
)

// envPrefix begins the name of every variable anviltest reads. A variable
// of the process environment with this prefix (in any case) that is no
// row of envVars is a typo until proven otherwise: ANVIL_BASE_ULR set
// instead of ANVIL_BASE_URL would otherwise benchmark the embedded fake
// server and pass.
const envPrefix = "ANVIL_"

// unknownVariables returns an error naming each variable of environ (the
// "NAME=value" pairs of os.Environ) that begins with envPrefix but is not
// one anviltest reads, with the closest name it does read; nil when there
// is none. The names in except are the user's own (the variable that
// Target.APIKeyEnv or ANVIL_API_KEY_ENV names, which may well begin with
// ANVIL_). Values are never shown: an unknown variable may hold a key.
func unknownVariables(environ, except []string) error {
	known := envNames()
	var errs []error
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(strings.ToUpper(name), envPrefix) || slices.Contains(known, name) || slices.Contains(except, name) {
			continue
		}
		rule := "is no variable anviltest reads"
		if near, ok := closestName(name, known); ok {
			rule += "; did you mean " + near + "?"
		}
		rule += " (every variable: go doc github.com/anvilbench/anvil/anviltest)"
		errs = append(errs, &capacity.FieldError{Pkg: "anviltest", Field: name, Rule: rule})
	}
	return errors.Join(errs...)
}

// closestName is the name of names nearest to name by edit distance
// (insertions, deletions, substitutions and swaps of two neighbours, case
// ignored), when it is near enough to be the name meant: at most a third
// of the letters after the prefix differ.
func closestName(name string, names []string) (string, bool) {
	best, bestD := "", -1
	u := strings.ToUpper(name)
	for _, n := range names {
		if d := editDistance(u, n); bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	return best, bestD >= 0 && bestD*3 <= max(len(u)-len(envPrefix), 3)
}

// editDistance is the optimal string alignment distance of a and b
// (Levenshtein's, with a swap of two adjacent bytes as one edit, the
// commonest typo: ANVIL_MODLE).
func editDistance(a, b string) int {
	// d[i][j] is the distance of a[:i] and b[:j]; three rows suffice.
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// fakeIdentityVars are the variables that label a run with a real setup.
var fakeIdentityVars = [...]string{envModel, envEngine, envGPU}

// fakeLabelled refuses a run against the embedded fake server (no base
// URL anywhere) while the environment labels it with a real setup's model,
// engine or GPU: its artifacts and .bench file would carry the fake's
// numbers under a real engine's name. A label set in code (WithTarget) is
// deliberate and stays.
func (s *settings) fakeLabelled(t capacity.Target) error {
	if t.BaseURL != "" {
		return nil
	}
	var set []string
	for _, name := range fakeIdentityVars {
		code := map[string]string{envModel: s.target.Model, envEngine: s.target.Engine, envGPU: s.target.GPU}[name]
		if v := s.getenv(name); v != "" && code == "" {
			set = append(set, fmt.Sprintf("%s=%q", name, v))
		}
	}
	if len(set) == 0 {
		return nil
	}
	return fmt.Errorf("anviltest: %s set without %s: the run would measure the embedded fake server and record its numbers under that label; set %s to the endpoint, or unset %s to run against the fake",
		strings.Join(set, " and "), envBaseURL, envBaseURL, map[bool]string{true: "it", false: "them"}[len(set) == 1])
}

// duplicateKey returns the first key that occurs twice in one object of
// the JSON text v, at any depth, and whether there is one: encoding/json
// keeps the last of two and would send what the user did not write
// ({"a":1,"a":2} is {"a":2}). v must be valid JSON (Decode checked it).
func duplicateKey(v string) (string, bool) {
	d := json.NewDecoder(strings.NewReader(v))
	d.UseNumber()
	// One entry per open container: an object's keys so far and whether
	// its next token is a key; keys is nil for an array.
	type open struct {
		keys    map[string]bool
		wantKey bool
	}
	var stack []open
	for {
		tok, err := d.Token()
		if err != nil {
			return "", false // io.EOF, or invalid JSON that Decode reported
		}
		if n := len(stack); n > 0 && stack[n-1].keys != nil {
			top := &stack[n-1]
			if key, ok := tok.(string); ok && top.wantKey {
				if top.keys[key] {
					return key, true
				}
				top.keys[key], top.wantKey = true, false
				continue
			}
			if tok != json.Delim('}') {
				top.wantKey = true // tok is the value (or opens it)
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, open{keys: map[string]bool{}, wantKey: true})
		case json.Delim('['):
			stack = append(stack, open{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}
