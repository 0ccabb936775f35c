//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package sqlitestore

// lockDir is a no-op where flock(2) is unavailable; SQLite's own locking
// still keeps the database consistent.
func lockDir(dir string) (unlock func() error, err error) {
	return func() error { return nil }, nil
}
