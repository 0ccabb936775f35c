//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package filestore

// LockDir is a no-op where flock(2) is unavailable.
func LockDir(path string) (unlock func() error, err error) {
	return func() error { return nil }, nil
}
