package anviltest

import "github.com/anvilbench/anvil/reporters"

// printableError is err with its message made safe for the terminal
// (reporters.PrintableLines): a run error can quote what the server sent,
// and b.Fatal prints it. errors.Is and errors.As still see err.
func printableError(err error) error {
	if err == nil {
		return nil
	}
	if msg := err.Error(); reporters.PrintableLines(msg) != msg {
		return &safeError{err}
	}
	return err
}

// safeError is an error whose message is printed PrintableLines.
type safeError struct{ err error }

var _ error = (*safeError)(nil)

func (e *safeError) Error() string { return reporters.PrintableLines(e.err.Error()) }
func (e *safeError) Unwrap() error { return e.err }
