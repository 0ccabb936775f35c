package filestore

import (
	"os"
	"syscall"
)

// datasync flushes f's data and the metadata needed to read it back
// (its size), but not its timestamps: fdatasync(2).
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}

// Writeback starts the kernel writing the range to disk:
// sync_file_range(2) with SYNC_FILE_RANGE_WRITE, which does not wait.
func (f osFile) Writeback(off, n int64) {
	const syncFileRangeWrite = 2
	syscall.Syscall6(syscall.SYS_SYNC_FILE_RANGE, f.Fd(), uintptr(off), uintptr(n), syncFileRangeWrite, 0, 0)
}
