package logstore

import (
	"context"
	"errors"
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

// TestGroupCommitRotateCloseRace: writers that return at different paces
// (some fsyncs gather them, some run without waiting) while compactions
// rotate the log and Close comes in the middle. Every acknowledged Update
// is visible at once and after reopening; nothing but ErrClosed fails.
func TestGroupCommitRotateCloseRace(t *testing.T) {
	dir := t.TempDir()
	fsys := slowSyncFS{filestore.OS, 2 * time.Millisecond}
	s, err := Open(Options{Dir: dir, Sync: true, FS: fsys, CompactBytes: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const writers, keys = 8, 4
	var mu sync.Mutex
	acked := map[string]string{} // the last acknowledged value of each key
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := 0; ; i++ {
				// Overwrites, so that compactions find garbage.
				k := fmt.Sprintf("k/%d/%d", w, i%keys)
				v := fmt.Sprintf("%d%0500d", i, 0)
				err := s.Update(ctx, func(tx storage.Tx) error { return tx.Set([]byte(k), []byte(v)) })
				if errors.Is(err, storage.ErrClosed) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				err = s.View(ctx, func(tx storage.Tx) error {
					got, err := tx.Get([]byte(k))
					if err == nil && string(got) != v {
						t.Errorf("%s: an acknowledged write is not visible", k)
					}
					return err
				})
				if err != nil && !errors.Is(err, storage.ErrClosed) {
					t.Error(err)
					return
				}
				mu.Lock()
				acked[k] = v
				mu.Unlock()
				time.Sleep(time.Duration(2+w%4) * time.Millisecond)
			}
		})
	}
	time.Sleep(400 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	st := s.SyncStats()
	t.Logf("%d fsyncs, %.1f Updates each, %d compactions", st.Fsyncs, st.RecordsPerFsync(), s.log.compactions.Load())
	if s.log.compactions.Load() == 0 {
		t.Error("no compaction ran")
	}
	s, err = Open(Options{Dir: dir, Sync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.View(ctx, func(tx storage.Tx) error {
		for k, v := range acked {
			got, err := tx.Get([]byte(k))
			if err != nil || string(got) != v {
				t.Errorf("%s after reopening: %.10q, %v; want %.10q", k, got, err, v)
			}
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}
