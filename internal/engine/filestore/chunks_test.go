package filestore_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/filestore"
	"github.com/lazuli-storage/lazuli/storage"
	"github.com/lazuli-storage/lazuli/storage/storagetest"
)

// slowDirFS counts directory fsyncs, each taking a while as on a disk.
type slowDirFS struct {
	filestore.FS
	mu       sync.Mutex
	dirSyncs int
}

func (s *slowDirFS) SyncDir(name string) error {
	s.mu.Lock()
	s.dirSyncs++
	s.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	return s.FS.SyncDir(name)
}

func (s *slowDirFS) take() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.dirSyncs
	s.dirSyncs = 0
	return n
}

// Chunks written at once share their directory's fsyncs: 16 concurrent
// durable Puts (and a Delete of them all) cost a few directory fsyncs,
// not one each, and every chunk whose Put returned survives a power cut
// whole, and stays deleted once Delete returned.
func TestChunksShareDirectoryFsyncs(t *testing.T) {
	ctx := context.Background()
	power := storagetest.NewPowerFS()
	fsys := &slowDirFS{FS: power}
	cs, err := filestore.OpenChunkStoreFS(fsys, "/data/chunks", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	fsys.take()
	const n = 16
	refs := make([]storage.ChunkRef, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			body := bytes.Repeat([]byte{byte(i)}, 1000+i)
			var err error
			if i%2 == 0 {
				refs[i], _, err = cs.Put(ctx, bytes.NewReader(body))
			} else {
				var wait func() error
				refs[i], _, wait, err = storage.PutDeferred(ctx, cs, bytes.NewReader(body))
				if err == nil {
					err = wait()
				}
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Before, each chunk went to a random directory of 256 and fsynced it.
	if got := fsys.take(); got > n/4 {
		t.Errorf("%d concurrent Puts made %d directory fsyncs, want at most %d", n, got, n/4)
	}

	// What the Puts acknowledged survives a power cut.
	after := power.Cut(rand.New(rand.NewPCG(3, 4)))
	cs, err = filestore.OpenChunkStoreFS(after, "/data/chunks", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, ref := range refs {
		rc, err := cs.Open(ctx, ref, 0, -1)
		if err != nil {
			t.Fatalf("chunk %d after the power cut: %v", i, err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if want := bytes.Repeat([]byte{byte(i)}, 1000+i); !bytes.Equal(b, want) {
			t.Fatalf("chunk %d after the power cut: %d bytes, want %d", i, len(b), len(want))
		}
	}

	// So does a Delete.
	fsys = &slowDirFS{FS: after}
	cs, err = filestore.OpenChunkStoreFS(fsys, "/data/chunks", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.Delete(ctx, refs); err != nil {
		t.Fatal(err)
	}
	cs, err = filestore.OpenChunkStoreFS(after.Cut(rand.New(rand.NewPCG(5, 6))), "/data/chunks", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, ref := range refs {
		if _, err := cs.Open(ctx, ref, 0, -1); err != storage.ErrNotFound {
			t.Fatalf("chunk %d after its Delete and a power cut: %v", i, fmt.Sprint(err))
		}
	}
}
