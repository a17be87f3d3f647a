//go:build !unix

package anviltest

import "errors"

// interruptSelf would send this process Ctrl-C: a process cannot send
// itself os.Interrupt on Windows (os.Process.Signal refuses it).
func interruptSelf() error {
	return errors.New("a process cannot interrupt itself on this system")
}

// canInterruptSelf says whether interruptSelf works here.
const canInterruptSelf = false
