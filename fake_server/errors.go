package fakeserver

import "fmt"

// ConfigError is the error of an invalid Config, Dialect or FaultPlan field
// (and of an unknown profile, dialect or fault name). Callers match it with
// errors.As and read Field to know which knob is wrong. It is the fake's
// own type, not the module's capacity.FieldError: the fake shares no code
// with the client it checks, so a bug in one cannot hide in the other.
type ConfigError struct {
	// Field is the Go path of the field from Config: "MaxSeqs",
	// "Dialect.KeepAlive", "Faults.Stall"; a map entry adds its key in
	// brackets, "Faults.Probability[drop]". Names looked up by
	// Profile, DialectByName and ParseFault are "Profile", "Dialect" and
	// "Fault".
	Field string
	// Value is the rejected value.
	Value any
	// Want describes the allowed values: ">= 1", "0..1".
	Want string
}

var _ error = (*ConfigError)(nil)

// Error formats the error as "fakeserver: FIELD = VALUE: want WANT", a
// string value quoted.
func (e *ConfigError) Error() string {
	if s, ok := e.Value.(string); ok {
		return fmt.Sprintf("fakeserver: %s = %q: want %s", e.Field, s, e.Want)
	}
	return fmt.Sprintf("fakeserver: %s = %v: want %s", e.Field, e.Value, e.Want)
}

// check is one validity condition of a field: ok, or a ConfigError naming
// the field, its value and want (the allowed range).
type check struct {
	field string
	value any
	ok    bool
	want  string
}

// firstInvalid returns the *ConfigError of the first failed check, or nil.
func firstInvalid(cs ...check) error {
	for _, c := range cs {
		if !c.ok {
			return &ConfigError{Field: c.field, Value: c.value, Want: c.want}
		}
	}
	return nil
}
