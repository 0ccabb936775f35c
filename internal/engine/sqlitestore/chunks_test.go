package sqlitestore_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/storage"
)

// zeroReader yields n zero bytes without holding them.
type zeroReader struct{ n int64 }

func (r *zeroReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.n)]
	clear(p)
	r.n -= int64(len(p))
	return len(p), nil
}

// heapWatch samples the live heap until stopped and reports its peak
// growth over the starting point.
func heapWatch() (stop func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > base && ms.HeapInuse-base > peak.Load() {
				peak.Store(ms.HeapInuse - base)
			}
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak.Load()
	}
}

// TestChunkStreaming: Put and Open stream; memory stays flat whatever the
// chunk size.
func TestChunkStreaming(t *testing.T) {
	const size = 256 << 20
	const budget = 16 << 20
	s := openStore(t, t.TempDir(), false)
	defer s.Close()
	ctx := context.Background()

	stop := heapWatch()
	ref, n, err := s.Chunks().Put(ctx, &zeroReader{n: size})
	grew := stop()
	if err != nil || n != size {
		t.Fatalf("Put = %d, %v", n, err)
	}
	if grew > budget {
		t.Fatalf("Put of %d MiB grew the heap by %d MiB", size>>20, grew>>20)
	}

	stop = heapWatch()
	rc, err := s.Chunks().Open(ctx, ref, 1<<20, size-2<<20)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.Copy(io.Discard, rc)
	rc.Close()
	grew = stop()
	if err != nil || got != size-2<<20 {
		t.Fatalf("read %d bytes, %v", got, err)
	}
	if grew > budget {
		t.Fatalf("reading %d MiB grew the heap by %d MiB", got>>20, grew>>20)
	}
}

// TestChunkPutCanceled: a Put whose context ends leaves no chunk and no
// file behind.
func TestChunkPutCanceled(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, false)
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r := &cancelAfter{r: &zeroReader{n: 64 << 20}, left: 4 << 20, cancel: cancel}
	if _, _, err := s.Chunks().Put(ctx, r); !errors.Is(err, context.Canceled) {
		t.Fatalf("Put with a canceled context: err = %v", err)
	}
	n := 0
	s.Chunks().Walk(context.Background(), func(storage.ChunkRef, time.Time) error { n++; return nil })
	if n != 0 {
		t.Fatalf("Walk reports %d chunks after a canceled Put", n)
	}
	var files []string
	filepath.WalkDir(filepath.Join(dir, sqlitestore.ChunkDir), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if len(files) != 0 {
		t.Fatalf("files left after a canceled Put: %q", files)
	}
}

type cancelAfter struct {
	r      io.Reader
	left   int
	cancel func()
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.left -= n
	if c.left <= 0 {
		c.cancel()
	}
	return n, err
}

// TestLeftoverChunkWalked: a Put interrupted by a crash leaves its partial
// chunk under its reference, never acknowledged; Walk reports it, so the
// garbage collector removes it like any unreferenced chunk.
func TestLeftoverChunkWalked(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, false)
	s.Close()
	const ref = "0123456789abcdef0123456789abcdef"
	leftover := filepath.Join(dir, sqlitestore.ChunkDir, ref[:2], ref)
	if err := os.WriteFile(leftover, []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir, false)
	defer s.Close()
	var got []storage.ChunkRef
	s.Chunks().Walk(context.Background(), func(r storage.ChunkRef, _ time.Time) error { got = append(got, r); return nil })
	if len(got) != 1 || got[0] != ref {
		t.Fatalf("Walk reports %q, want the leftover chunk %s", got, ref)
	}
	if err := s.Chunks().Delete(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(leftover); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("leftover chunk still there after Delete: %v", err)
	}
}

// TestDirLocked: a second Open of the same directory fails while the first
// is open and succeeds after Close.
func TestDirLocked(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, false)
	if s2, err := sqlitestore.Open(sqlitestore.Options{Dir: dir}); err == nil {
		s2.Close()
		t.Fatal("second Open of a directory in use succeeded")
	}
	s.Close()
	s = openStore(t, dir, false)
	s.Close()
}
