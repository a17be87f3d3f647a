package trace

import (
	"errors"
	"strconv"
)

// Every bad value the package reports, a field of a trace row or an
// option, is a *field.Error (capacity.FieldError to users) with Pkg
// "trace", Where the file and line of the row ("conv.jsonl:17"), Field
// the key, column or option, and Rule what is allowed:
//
//	trace: conv.jsonl:17: input_length = "-3": must be an integer in [1, 10000000]
//	trace: SpeedUp = 0: must be in [0.001, 1e+06]

// pkg is the prefix of the package's messages.
const pkg = "trace"

// errInvalid is the Kind of every error about bad input.
var errInvalid = errors.New("trace: invalid input")

// at is the Where of a value on line (1-based; 0 for none) of file.
func at(file string, line int) string {
	switch {
	case file != "" && line > 0:
		return file + ":" + strconv.Itoa(line)
	case line > 0:
		return "line " + strconv.Itoa(line)
	}
	return file
}
