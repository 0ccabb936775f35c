package logstore

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/engine/filestore"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/storage"
)

// failFS is the OS file system whose log files fail every write while
// fail is set.
type failFS struct {
	filestore.FS
	fail *atomic.Bool
}

func (f failFS) OpenFile(name string, flag int, perm fs.FileMode) (filestore.File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil || !strings.HasSuffix(name, ".log") {
		return file, err
	}
	return failFile{file, f.fail}, nil
}

type failFile struct {
	filestore.File
	fail *atomic.Bool
}

func (f failFile) WriteAt(b []byte, off int64) (int, error) {
	if f.fail.Load() {
		return 0, errors.New("injected write failure")
	}
	return f.File.WriteAt(b, off)
}

// TestFailedPendingWriteAcknowledgesNothing: with Sync, a record waits in
// memory for its fsync. When a rotation's write of waiting records fails,
// those records are gone: the Update that made one must get an error
// rather than be acknowledged by a later fsync, and no later Update may
// build on them.
func TestFailedPendingWriteAcknowledgesNothing(t *testing.T) {
	var fail atomic.Bool
	s, err := Open(Options{Dir: t.TempDir(), Sync: true, FS: failFS{filestore.OS, &fail}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.Update(ctx, func(tx storage.Tx) error { return tx.Set([]byte("a"), []byte("1")) }); err != nil {
		t.Fatal(err)
	}
	// A record waiting for its fsync, as an Update leaves it.
	s.mu.Lock()
	seq, err := s.log.append([]memstore.Op{{Key: []byte("b"), Value: []byte("2")}}, 0)
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	if err := s.log.rotateAndSnapshot(s); err == nil {
		t.Fatal("rotation succeeded though its write failed")
	}
	fail.Store(false)
	if err := s.log.syncTo(s, seq); err == nil {
		t.Fatal("a record whose write failed was acknowledged")
	}
	if err := s.Update(ctx, func(tx storage.Tx) error { return tx.Set([]byte("c"), []byte("3")) }); err == nil {
		t.Fatal("an Update went on after records were lost")
	}
}
