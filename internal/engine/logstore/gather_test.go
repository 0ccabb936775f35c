package logstore

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/filestore"
	"github.com/lazuli-storage/lazuli/storage"
)

// slowSyncFS is the OS file system whose log files take d per fsync, as
// a busy disk does.
type slowSyncFS struct {
	filestore.FS
	d time.Duration
}

func (f slowSyncFS) OpenFile(name string, flag int, perm fs.FileMode) (filestore.File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil || !strings.HasSuffix(name, ".log") {
		return file, err
	}
	return slowSyncFile{file, f.d}, nil
}

type slowSyncFile struct {
	filestore.File
	d time.Duration
}

func (f slowSyncFile) Sync() error {
	time.Sleep(f.d)
	return f.File.Sync()
}

// TestGroupCommitGathersReturningWriters: writers that spend a little
// time between Updates (as a server answers one request and reads the
// next) share one fsync rather than taking turns in two groups, each
// fsync serving about half of them.
func TestGroupCommitGathersReturningWriters(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir(), Sync: true, FS: slowSyncFS{filestore.OS, 10 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	const writers, each = 8, 30
	before := s.SyncStats()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				err := s.Update(ctx, func(tx storage.Tx) error {
					return tx.Set(fmt.Appendf(nil, "k/%d/%d", w, i), []byte("v"))
				})
				if err != nil {
					t.Error(err)
					return
				}
				time.Sleep(time.Millisecond) // between requests
			}
		})
	}
	wg.Wait()
	st := s.SyncStats()
	st.Fsyncs -= before.Fsyncs
	st.Records -= before.Records
	t.Logf("%d fsyncs, %.1f Updates each", st.Fsyncs, st.RecordsPerFsync())
	if st.RecordsPerFsync() < 6 {
		t.Errorf("%.1f Updates per fsync of %d writers, want at least 6", st.RecordsPerFsync(), writers)
	}
}
