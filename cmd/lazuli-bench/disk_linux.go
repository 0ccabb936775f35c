package main

import (
	"os"
	"syscall"
)

// datasync flushes f's data (and the metadata needed to read it back),
// like dd's conv=fdatasync.
func datasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
