package session

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/arrival"
	"github.com/anvilbench/anvil/capacity/internal/field"
	"github.com/anvilbench/anvil/capacity/trace"
)

// pkg is the prefix of the package's messages.
const pkg = "session"

// errInvalid is the Kind of every error about a bad spec or session.
var errInvalid = errors.New("session: invalid input")

// Bounds of a Spec.
const (
	// maxTurns is the most turns of a synthetic session.
	maxTurns = 1000
	// maxMessageTokens is the longest user message or answer of a turn.
	maxMessageTokens = 1_000_000
	// maxThink is the longest think time (the mean, with ThinkExp).
	maxThink = time.Hour
)

// Spec is a synthetic session workload: every session has Turns turns;
// turn k's messages are the k-1 earlier user messages and the assistant's
// actual answers to them, then a new user message of UserTokens tokens;
// its max_tokens is OutputTokens; turn k+1 is sent ThinkTime(session, k+1)
// after turn k ended. The zero Spec is not valid: Turns, UserTokens and
// OutputTokens must be set.
type Spec struct {
	// Turns is the number of turns of a session, in [1, 1000].
	Turns int
	// UserTokens is the length of each new user message in tokens, in
	// [1, 1000000].
	UserTokens int
	// OutputTokens is each turn's max_tokens, in [1, 1000000].
	OutputTokens int
	// Think is the think time, or its mean with ThinkExp: in [0, 1h],
	// above 0 with ThinkExp.
	Think time.Duration
	// ThinkExp draws exponential think times of mean Think per session
	// and turn from Seed (see ThinkTime; think_dist=exp in the compact
	// form); false, every think time is Think (think_dist=fixed).
	ThinkExp bool
	// Seed selects the think-time draws of ThinkExp. Every value is valid.
	Seed uint64
}

// Validate returns the *capacity.FieldError of the first invalid field, or
// nil. The last turn's planned prompt (see PlannedPrompt) must be at most
// trace.MaxTokens.
func (s Spec) Validate() error {
	switch {
	case s.Turns < 1 || s.Turns > maxTurns:
		return &field.Error{Pkg: pkg, Kind: errInvalid, Field: "turns", Value: s.Turns, Rule: "must be " + fmt.Sprintf("in [1, %d]", maxTurns)}
	case s.UserTokens < 1 || s.UserTokens > maxMessageTokens:
		return &field.Error{Pkg: pkg, Kind: errInvalid, Field: "user", Value: s.UserTokens, Rule: "must be " + fmt.Sprintf("in [1, %d] tokens", maxMessageTokens)}
	case s.OutputTokens < 1 || s.OutputTokens > maxMessageTokens:
		return &field.Error{Pkg: pkg, Kind: errInvalid, Field: "output", Value: s.OutputTokens, Rule: "must be " + fmt.Sprintf("in [1, %d] tokens", maxMessageTokens)}
	case s.Think < 0 || s.Think > maxThink:
		return &field.Error{Pkg: pkg, Kind: errInvalid, Field: "think", Value: s.Think, Rule: "must be " + fmt.Sprintf("in [0s, %v]", maxThink)}
	case s.ThinkExp && s.Think == 0:
		return &field.Error{Pkg: pkg, Kind: errInvalid, Field: "think", Value: s.Think, Rule: "must be above 0s with think_dist=exp (it is the mean)"}
	}
	if p := s.PlannedPrompt(s.Turns); p > trace.MaxTokens {
		most := (trace.MaxTokens + s.OutputTokens) / (s.UserTokens + s.OutputTokens)
		return &field.Error{Pkg: pkg, Kind: errInvalid, Field: "turns", Value: s.Turns,
			Rule: "must be " + fmt.Sprintf("at most %d with user=%d and output=%d (the last turn's prompt would be %d tokens, over %d)",
				most, s.UserTokens, s.OutputTokens, p, trace.MaxTokens)}
	}
	return nil
}

// PlannedPrompt is the planned prompt of turn k (1-based) in tokens,
// when every earlier answer had OutputTokens tokens:
// k·UserTokens + (k-1)·OutputTokens. The chat template's own tokens are
// not counted.
func (s Spec) PlannedPrompt(k int) int {
	return k*s.UserTokens + (k-1)*s.OutputTokens
}

// ThinkTime is the think time before turn (2-based: turn 1 has none, and
// gets 0) of session i: Think; with ThinkExp, Think times an
// exponential draw of mean 1 (arrival.PoissonProcess, the same on every
// platform) from a PCG generator seeded with Seed and (i, turn), so each
// draw depends on nothing but the spec, the session and the turn, not on
// the order the sessions run in. The result is rounded to the
// nanosecond.
func (s Spec) ThinkTime(i, turn int) time.Duration {
	if turn < 2 {
		return 0
	}
	if !s.ThinkExp {
		return s.Think
	}
	r := rand.New(rand.NewPCG(s.Seed, uint64(i)<<32^uint64(turn)^thinkStream))
	x := arrival.PoissonProcess{}.Interval(r)
	return time.Duration(math.Round(float64(s.Think) * x))
}

// thinkStream keeps the think-time draws apart from other generators
// seeded with the same seed: the ASCII bytes of "thinking".
const thinkStream = 0x7468696e6b696e67

// String returns the spec's compact form, every key in ParseSpec's
// order: "turns=3,user=200,output=128,think=2s,think_dist=exp,seed=0".
// ParseSpec reads it back to the same Spec.
func (s Spec) String() string {
	dist := "fixed"
	if s.ThinkExp {
		dist = "exp"
	}
	return fmt.Sprintf("turns=%d,user=%d,output=%d,think=%v,think_dist=%s,seed=%d",
		s.Turns, s.UserTokens, s.OutputTokens, s.Think, dist, s.Seed)
}

// specKeys are the keys of the compact form, in String's order.
var specKeys = []string{"turns", "user", "output", "think", "think_dist", "seed"}

// ParseSpec reads a spec's compact form, comma-separated key=value pairs
// in any order (the value of a variable such as ANVIL_SESSIONS):
//
//   - turns: the number of turns, an integer (required);
//   - user: tokens of each new user message, an integer (required);
//   - output: each turn's max_tokens, an integer (required);
//   - think: the think time, or its mean, a Go duration such as "2s" or
//     "1m30s" (default 0s);
//   - think_dist: "fixed" (the default) or "exp";
//   - seed: the seed of exp's draws, an unsigned integer (default 0).
//
// For example "turns=3,user=200,output=128,think=2s,think_dist=exp". A
// missing, repeated or unknown key, a value that does not parse, or a
// spec that fails Validate, is a *capacity.FieldError naming the key.
func ParseSpec(str string) (Spec, error) {
	var s Spec
	seen := map[string]bool{}
	for part := range strings.SplitSeq(str, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok {
			return Spec{}, &field.Error{Pkg: pkg, Kind: errInvalid, Field: "spec", Value: part,
				Rule: "must be comma-separated key=value pairs with the keys " + strings.Join(specKeys, ", ")}
		}
		if seen[key] {
			return Spec{}, &field.Error{Pkg: pkg, Kind: errInvalid, Field: key, Value: value, Rule: "must be given once"}
		}
		seen[key] = true
		var err error
		switch key {
		case "turns":
			s.Turns, err = strconv.Atoi(value)
		case "user":
			s.UserTokens, err = strconv.Atoi(value)
		case "output":
			s.OutputTokens, err = strconv.Atoi(value)
		case "think":
			s.Think, err = time.ParseDuration(value)
		case "think_dist":
			switch value {
			case "fixed":
				s.ThinkExp = false
			case "exp":
				s.ThinkExp = true
			default:
				return Spec{}, &field.Error{Pkg: pkg, Kind: errInvalid, Field: key, Value: value, Rule: "must be " + `"fixed" or "exp"`}
			}
		case "seed":
			s.Seed, err = strconv.ParseUint(value, 10, 64)
		default:
			return Spec{}, &field.Error{Pkg: pkg, Kind: errInvalid, Field: "key", Value: key, Rule: "must be one of " + strings.Join(specKeys, ", ")}
		}
		if err != nil {
			want := "an integer"
			switch key {
			case "think":
				want = `a duration such as "2s"`
			case "seed":
				want = "an unsigned integer"
			}
			return Spec{}, &field.Error{Pkg: pkg, Kind: errInvalid, Field: key, Value: value, Rule: "must be " + want}
		}
	}
	for _, key := range specKeys[:3] {
		if !seen[key] {
			return Spec{}, &field.Error{Pkg: pkg, Kind: errInvalid, Field: key, Rule: "must be given"}
		}
	}
	if err := s.Validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}
