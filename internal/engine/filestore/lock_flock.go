//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filestore

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// LockDir takes an exclusive advisory lock on the file at path (created if
// need be) so that two processes never serve the same data directory (the
// second would, among other things, remove the first one's chunk uploads in
// progress). The kernel drops the lock when the process dies, however it
// dies. The holder's process id is written into the file, so that a
// second process can say who holds it (LockedError).
func LockDir(path string) (unlock func() error, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP) {
			// A filesystem without flock support: run unguarded, as on
			// platforms without flock.
			return f.Close, nil
		}
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid := 0
			if b, err := os.ReadFile(path); err == nil {
				pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			}
			return nil, &LockedError{Path: path, PID: pid}
		}
		return nil, err
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f.Close, nil
}
