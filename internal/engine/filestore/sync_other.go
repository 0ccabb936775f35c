//go:build !linux

package filestore

import "os"

// datasync flushes f's data: fsync(2) where fdatasync is not available.
func datasync(f *os.File) error { return f.Sync() }

// Writeback does nothing where sync_file_range is not available.
func (f osFile) Writeback(off, n int64) {}
