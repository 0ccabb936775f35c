package filestore

import (
	"io"
	"io/fs"
	"os"
)

// FS is the file system beneath the embedded engines' files: the operating
// system's (OS), or in tests one that simulates losing power
// (storagetest.PowerFS). Names are slash- or OS-separated paths as the
// os package takes them.
type FS interface {
	// OpenFile opens a file as os.OpenFile does; flag takes O_RDONLY,
	// O_WRONLY, O_RDWR, O_CREATE, O_EXCL, O_APPEND and O_TRUNC.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	Rename(oldname, newname string) error
	Remove(name string) error
	RemoveAll(name string) error
	MkdirAll(name string, perm fs.FileMode) error
	ReadDir(name string) ([]fs.DirEntry, error)
	Stat(name string) (fs.FileInfo, error)
	// SyncDir makes the creation, renaming and removal of the entries of
	// directory name durable.
	SyncDir(name string) error
	// Lock takes the lock that keeps a data directory to one process
	// (see LockDir).
	Lock(name string) (unlock func() error, err error)
}

// File is an open file of an FS.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.WriterAt
	io.Closer
	Stat() (fs.FileInfo, error)
	Truncate(size int64) error
	// Sync makes the file's data durable: it is on stable storage once
	// Sync returns nil.
	Sync() error
	// Writeback starts writing n bytes from off to stable storage and
	// returns without waiting, so that a later Sync has less left to do.
	// It is a hint: it may do nothing.
	Writeback(off, n int64)
}

// OS is the operating system's file system.
var OS FS = osFS{}

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Rename(oldname, newname string) error              { return os.Rename(oldname, newname) }
func (osFS) Remove(name string) error                          { return os.Remove(name) }
func (osFS) RemoveAll(name string) error                       { return os.RemoveAll(name) }
func (osFS) MkdirAll(name string, perm fs.FileMode) error      { return os.MkdirAll(name, perm) }
func (osFS) ReadDir(name string) ([]fs.DirEntry, error)        { return os.ReadDir(name) }
func (osFS) Stat(name string) (fs.FileInfo, error)             { return os.Stat(name) }
func (osFS) SyncDir(name string) error                         { return SyncDir(name) }
func (osFS) Lock(name string) (unlock func() error, err error) { return LockDir(name) }

// osFile is an *os.File whose Sync writes only what reading the data back
// needs (fdatasync where the system has it: not the modification time).
type osFile struct{ *os.File }

func (f osFile) Sync() error { return datasync(f.File) }
