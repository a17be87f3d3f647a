//go:build unix

package anviltest

import (
	"os"
	"syscall"
)

// interruptSelf sends this process SIGINT, as Ctrl-C would.
func interruptSelf() error { return syscall.Kill(os.Getpid(), syscall.SIGINT) }

// canInterruptSelf says whether interruptSelf works here.
const canInterruptSelf = true
