package filestore

import "fmt"

// LockedError is a data directory another process holds (LockDir).
type LockedError struct {
	Path string
	// PID is the holder's process id as it recorded it (0 if unknown).
	PID int
}

func (e *LockedError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("the data directory is in use by process %d (lock file %s)", e.PID, e.Path)
	}
	return fmt.Sprintf("the data directory is in use by another process (lock file %s)", e.Path)
}
