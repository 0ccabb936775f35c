//go:build unix

package main

import (
	"syscall"
	"time"
)

// processCPU returns the user plus system CPU time this process has used,
// so a result can show how much of the machine the client itself took.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

// settle writes every dirty page of the machine's file systems to disk.
func settle() { syscall.Sync() }
