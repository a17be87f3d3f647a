package main

import (
	"cmp"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// scalar is a flag.Value (and flag.Getter) bound to one Config field of
// type T: arg names the value in the help, parse and format convert it.
type scalar[T any] struct {
	p      *T
	arg    string
	parse  func(string) (T, error)
	format func(T) string
	isBool bool
}

var _ flag.Getter = scalar[int]{}

func (v scalar[T]) String() string {
	if v.p == nil {
		return ""
	}
	return v.format(*v.p)
}

func (v scalar[T]) Set(s string) error {
	x, err := v.parse(s)
	if err != nil {
		return err
	}
	*v.p = x
	return nil
}

// Get implements flag.Getter.
func (v scalar[T]) Get() any { return *v.p }

// IsBoolFlag lets a boolean flag be given without a value.
func (v scalar[T]) IsBoolFlag() bool { return v.isBool }

// argName is what the help shows after the flag name.
func (v scalar[T]) argName() string { return v.arg }

// binder returns the flag.Value of a field of c.
type binder func(c *fakeserver.Config) flagValue

// flagValue is a flag.Getter with a help name for its argument.
type flagValue interface {
	String() string
	Set(string) error
	Get() any
	argName() string
}

func intField(field func(*fakeserver.Config) *int) binder {
	return func(c *fakeserver.Config) flagValue {
		return scalar[int]{p: field(c), arg: "int", parse: strconv.Atoi, format: strconv.Itoa}
	}
}

func uintField(field func(*fakeserver.Config) *uint64) binder {
	return func(c *fakeserver.Config) flagValue {
		return scalar[uint64]{p: field(c), arg: "uint",
			parse:  func(s string) (uint64, error) { return strconv.ParseUint(s, 10, 64) },
			format: func(x uint64) string { return strconv.FormatUint(x, 10) }}
	}
}

func floatField(field func(*fakeserver.Config) *float64) binder {
	return func(c *fakeserver.Config) flagValue {
		return scalar[float64]{p: field(c), arg: "float",
			parse:  func(s string) (float64, error) { return strconv.ParseFloat(s, 64) },
			format: func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }}
	}
}

func durationField(field func(*fakeserver.Config) *time.Duration) binder {
	return func(c *fakeserver.Config) flagValue {
		return scalar[time.Duration]{p: field(c), arg: "duration", parse: time.ParseDuration, format: time.Duration.String}
	}
}

func boolField(field func(*fakeserver.Config) *bool) binder {
	return func(c *fakeserver.Config) flagValue {
		return scalar[bool]{p: field(c), arg: "", parse: strconv.ParseBool, format: strconv.FormatBool, isBool: true}
	}
}

func stringField(field func(*fakeserver.Config) *string) binder {
	return func(c *fakeserver.Config) flagValue {
		return scalar[string]{p: field(c), arg: "string",
			parse:  func(s string) (string, error) { return s, nil },
			format: func(s string) string { return s }}
	}
}

// rangeField parses "MIN,MAX" or "N".
func rangeField(field func(*fakeserver.Config) *fakeserver.Range) binder {
	return func(c *fakeserver.Config) flagValue {
		return scalar[fakeserver.Range]{p: field(c), arg: "MIN,MAX",
			parse: func(s string) (fakeserver.Range, error) {
				lo, hi, ok := strings.Cut(s, ",")
				if !ok {
					hi = lo
				}
				a, err1 := strconv.Atoi(lo)
				b, err2 := strconv.Atoi(hi)
				if err1 != nil || err2 != nil {
					return fakeserver.Range{}, fmt.Errorf("%q: want MIN,MAX or N", s)
				}
				return fakeserver.Range{Min: a, Max: b}, nil
			},
			format: func(r fakeserver.Range) string { return fmt.Sprintf("%d,%d", r.Min, r.Max) }}
	}
}

// enumName is the value of an enumerated flag: a string of its own type, so
// the help shows its default unquoted, as a name.
type enumName string

// enumField parses one of the names a string field of Config accepts
// (the names its documentation lists); the empty string, the field's
// default, shows as the first name.
func enumField(field func(*fakeserver.Config) *string, names ...string) binder {
	keys := slices.Sorted(slices.Values(names))
	want := strings.Join(keys, ", ")
	return func(c *fakeserver.Config) flagValue {
		return scalar[enumName]{p: (*enumName)(field(c)), arg: strings.Join(keys, "|"),
			parse: func(s string) (enumName, error) {
				if !slices.Contains(names, s) {
					return "", fmt.Errorf("%q: want one of %s", s, want)
				}
				return enumName(s), nil
			},
			format: func(s enumName) string { return cmp.Or(string(s), names[0]) }}
	}
}

// pairs calls set with each KEY and VALUE of a comma-separated
// KEY=VALUE list; want describes the list in errors.
func pairs(s, want string, set func(k, v string) error) error {
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("%q: want %s", kv, want)
		}
		if err := set(k, v); err != nil {
			return err
		}
	}
	return nil
}

// faultIndexes parses "3=drop,7=http_429" into Faults.ByIndex.
func faultIndexes(c *fakeserver.Config) flagValue {
	if c.Faults.ByIndex == nil {
		c.Faults.ByIndex = map[int]fakeserver.Fault{}
	}
	m := c.Faults.ByIndex
	return scalar[map[int]fakeserver.Fault]{p: &c.Faults.ByIndex, arg: "INDEX=FAULT,...",
		parse: func(s string) (map[int]fakeserver.Fault, error) {
			err := pairs(s, "INDEX=FAULT,...", func(k, v string) error {
				i, err := strconv.Atoi(k)
				if err != nil || i < 0 {
					return fmt.Errorf("index %q: want INDEX=FAULT with INDEX >= 0", k)
				}
				f, err := fakeserver.ParseFault(v)
				if err != nil {
					return err
				}
				m[i] = f
				return nil
			})
			return m, err
		},
		format: func(m map[int]fakeserver.Fault) string {
			var b []string
			for _, i := range slices.Sorted(maps.Keys(m)) {
				b = append(b, fmt.Sprintf("%d=%s", i, m[i]))
			}
			return strings.Join(b, ",")
		}}
}

// faultProbs parses "drop=0.01,http_503=0.02" into Faults.Probability.
func faultProbs(c *fakeserver.Config) flagValue {
	if c.Faults.Probability == nil {
		c.Faults.Probability = map[fakeserver.Fault]float64{}
	}
	m := c.Faults.Probability
	return scalar[map[fakeserver.Fault]float64]{p: &c.Faults.Probability, arg: "FAULT=P,...",
		parse: func(s string) (map[fakeserver.Fault]float64, error) {
			err := pairs(s, "FAULT=PROBABILITY,...", func(k, v string) error {
				p, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return fmt.Errorf("probability %q: want FAULT=PROBABILITY with PROBABILITY in 0..1", v)
				}
				f, err := fakeserver.ParseFault(k)
				if err != nil {
					return err
				}
				m[f] = p
				return nil
			})
			return m, err
		},
		format: func(m map[fakeserver.Fault]float64) string {
			var b []string
			for _, f := range slices.Sorted(maps.Keys(m)) {
				b = append(b, fmt.Sprintf("%s=%g", f, m[f]))
			}
			return strings.Join(b, ",")
		}}
}
