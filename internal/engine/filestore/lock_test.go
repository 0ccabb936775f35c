//go:build linux

package filestore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestLockNamesItsHolder: a second LockDir on a held directory fails with
// the holder's process id.
func TestLockNamesItsHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lazuli.lock")
	unlock, err := LockDir(path)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	_, err = LockDir(path)
	var le *LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() {
		t.Fatalf("second lock: %v", err)
	}
}
