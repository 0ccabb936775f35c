//go:build !linux

package main

import "os"

// datasync flushes f: a full fsync where fdatasync is not offered.
func datasync(f *os.File) error { return f.Sync() }
