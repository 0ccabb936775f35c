package chunkgc_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/chunkgc"
	"github.com/lazuli-storage/lazuli/internal/engine/logstore"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/storage"
	"github.com/lazuli-storage/lazuli/storage/storagetest"
)

// The tests model a service that stores "ref/<name>" -> chunk ref.
const prefix = "ref/"

func refMarker(ctx context.Context, e storage.Engine, mark func(storage.ChunkRef)) error {
	return e.View(ctx, func(tx storage.Tx) error {
		it := tx.Scan([]byte(prefix), []byte("ref0"), false)
		defer it.Close()
		for it.Next() {
			mark(storage.ChunkRef(it.Value()))
		}
		return it.Err()
	})
}

type engineCase struct {
	name string
	open func(t *testing.T) (storage.Engine, func() int64) // engine, bytes on disk (or in memory)
}

func engines() []engineCase {
	return []engineCase{
		{"memstore", func(t *testing.T) (storage.Engine, func() int64) {
			e := memstore.New()
			t.Cleanup(func() { e.Close() })
			return e, func() int64 { return chunkBytes(t, e) }
		}},
		{"logstore", func(t *testing.T) (storage.Engine, func() int64) {
			dir := t.TempDir()
			e, err := logstore.Open(logstore.Options{Dir: dir, Sync: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { e.Close() })
			return e, func() int64 { return duBytes(t, filepath.Join(dir, logstore.ChunkDir)) }
		}},
		{"sqlitestore", func(t *testing.T) (storage.Engine, func() int64) {
			dir := t.TempDir()
			e, err := sqlitestore.Open(sqlitestore.Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { e.Close() })
			return e, func() int64 { return duBytes(t, filepath.Join(dir, sqlitestore.ChunkDir)) }
		}},
	}
}

// chunkBytes sums the sizes of all chunks through the ChunkStore API.
func chunkBytes(t *testing.T, e storage.Engine) int64 {
	var total int64
	ctx := context.Background()
	err := e.Chunks().Walk(ctx, func(ref storage.ChunkRef, _ time.Time) error {
		rc, err := e.Chunks().Open(ctx, ref, 0, -1)
		if err != nil {
			return err
		}
		defer rc.Close()
		n, err := io.Copy(io.Discard, rc)
		total += n
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}

// duBytes is the disk space used by files under dir.
func duBytes(t *testing.T, dir string) int64 {
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			total += info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func putRef(t *testing.T, e storage.Engine, name string, size int) storage.ChunkRef {
	t.Helper()
	ref, _, err := e.Chunks().Put(context.Background(), bytes.NewReader(bytes.Repeat([]byte{byte(len(name))}, size)))
	if err != nil {
		t.Fatal(err)
	}
	storagetest.MustSet(t, e, prefix+name, string(ref))
	return ref
}

func collect(t *testing.T, c *chunkgc.Collector) int {
	t.Helper()
	n, err := c.Collect(context.Background())
	if err != nil {
		t.Fatalf("Collect: %v", err)
	}
	return n
}

func exists(e storage.Engine, ref storage.ChunkRef) bool {
	rc, err := e.Chunks().Open(context.Background(), ref, 0, -1)
	if err != nil {
		return false
	}
	rc.Close()
	return true
}

func TestCollectReturnsSpace(t *testing.T) {
	const grace = time.Minute
	for _, ec := range engines() {
		t.Run(ec.name, func(t *testing.T) {
			e, used := ec.open(t)
			baseline := used()
			clk := &clock{t: time.Now()}
			c := chunkgc.New(e, []storage.ChunkMarker{refMarker}, grace)
			c.Now = clk.now

			refs := map[string]storage.ChunkRef{}
			for i := range 40 {
				name := strconv.Itoa(i)
				refs[name] = putRef(t, e, name, 256<<10)
			}
			full := used()
			if full-baseline < 40*256<<10 {
				t.Fatalf("chunks use %d bytes, want at least %d", full-baseline, 40*256<<10)
			}
			// Overwrite half and delete the other half's metadata, as
			// blob overwrites and deletes do.
			MustUpdate := storagetest.MustUpdate
			MustUpdate(t, e, func(tx storage.Tx) error {
				for i := range 40 {
					if i%2 == 0 {
						if err := tx.Delete([]byte(prefix + strconv.Itoa(i))); err != nil {
							return err
						}
					}
				}
				return nil
			})
			for i := 1; i < 40; i += 2 {
				putRef(t, e, strconv.Itoa(i), 1) // replaces the big chunk with a tiny one
			}

			// Chunks are younger than grace: nothing goes, however often
			// the collector runs.
			for range 3 {
				if n := collect(t, c); n != 0 {
					t.Fatalf("removed %d chunks younger than grace", n)
				}
			}
			// Old enough, and first seen unreferenced more than grace ago.
			// (The fake clock started before the chunks were written.)
			clk.advance(grace + time.Since(clk.now()) + time.Second)
			if n := collect(t, c); n != 40 {
				t.Fatalf("removed %d chunks, want 40", n)
			}
			for i := 1; i < 40; i += 2 {
				v, err := storage.GetValue(context.Background(), e, []byte(prefix+strconv.Itoa(i)))
				if err != nil || !exists(e, storage.ChunkRef(v)) {
					t.Fatalf("referenced chunk %d removed (%v)", i, err)
				}
			}
			for _, ref := range refs {
				if exists(e, ref) {
					t.Fatalf("unreferenced chunk %q survived", ref)
				}
			}
			if got := used(); got > baseline+40 {
				t.Fatalf("after collection chunks use %d bytes, baseline %d (+20 live bytes)", got, baseline)
			}
			if n := collect(t, c); n != 0 {
				t.Fatalf("second collection removed %d more", n)
			}
		})
	}
}

// TestOldChunkNeedsTwoCollections: a chunk written long ago and just
// unreferenced (a reader may still hold its ref from an older snapshot)
// survives until a collection at least grace after the first that found it
// unreferenced.
func TestOldChunkNeedsTwoCollections(t *testing.T) {
	const grace = time.Minute
	for _, ec := range engines() {
		t.Run(ec.name, func(t *testing.T) {
			e, _ := ec.open(t)
			clk := &clock{t: time.Now().Add(time.Hour)} // every chunk is "old"
			c := chunkgc.New(e, []storage.ChunkMarker{refMarker}, grace)
			c.Now = clk.now
			ref := putRef(t, e, "blob", 100)
			if n := collect(t, c); n != 0 {
				t.Fatalf("removed %d referenced chunks", n)
			}
			// A reader takes the ref from its snapshot ...
			var held storage.ChunkRef
			storagetest.MustView(t, e, func(tx storage.Tx) error {
				v, err := tx.Get([]byte(prefix + "blob"))
				held = storage.ChunkRef(v)
				return err
			})
			// ... the blob is deleted, and a collection runs.
			storagetest.MustUpdate(t, e, func(tx storage.Tx) error { return tx.Delete([]byte(prefix + "blob")) })
			if n := collect(t, c); n != 0 {
				t.Fatalf("first collection after the delete removed %d chunks", n)
			}
			clk.advance(grace / 2)
			if n := collect(t, c); n != 0 {
				t.Fatalf("collection within grace removed %d chunks", n)
			}
			if !exists(e, held) {
				t.Fatalf("reader's chunk is gone within grace")
			}
			clk.advance(grace / 2)
			if n := collect(t, c); n != 1 || exists(e, ref) {
				t.Fatalf("collection after grace removed %d chunks, chunk exists = %v", n, exists(e, ref))
			}
		})
	}
}

// TestReferencedAgainResets: a chunk that becomes referenced again (a copy
// made from an old snapshot) is not removed, and its clock restarts.
func TestReferencedAgainResets(t *testing.T) {
	const grace = time.Minute
	e := memstore.New()
	clk := &clock{t: time.Now().Add(time.Hour)}
	c := chunkgc.New(e, []storage.ChunkMarker{refMarker}, grace)
	c.Now = clk.now
	ref, _, err := e.Chunks().Put(context.Background(), bytes.NewReader([]byte("x")))
	if err != nil {
		t.Fatal(err)
	}
	collect(t, c) // unreferenced from here
	clk.advance(grace / 2)
	storagetest.MustSet(t, e, prefix+"copy", string(ref))
	collect(t, c)
	storagetest.MustUpdate(t, e, func(tx storage.Tx) error { return tx.Delete([]byte(prefix + "copy")) })
	clk.advance(grace / 2)
	if n := collect(t, c); n != 0 {
		t.Fatalf("removed %d: the grace period did not restart", n)
	}
	clk.advance(grace)
	if n := collect(t, c); n != 1 {
		t.Fatalf("removed %d, want 1", n)
	}
}

func TestMarkerErrorRemovesNothing(t *testing.T) {
	e := memstore.New()
	clk := &clock{t: time.Now().Add(time.Hour)}
	fail := false
	failing := func(ctx context.Context, e storage.Engine, mark func(storage.ChunkRef)) error {
		if fail {
			return errors.New("marker failed")
		}
		return nil
	}
	c := chunkgc.New(e, []storage.ChunkMarker{refMarker, failing}, time.Minute)
	c.Now = clk.now
	e.Chunks().Put(context.Background(), bytes.NewReader([]byte("x")))
	collect(t, c)
	clk.advance(time.Hour)
	fail = true
	if n, err := c.Collect(context.Background()); err == nil || n != 0 {
		t.Fatalf("Collect with a failing marker = %d, %v; want 0 and an error", n, err)
	}
	fail = false
	if n := collect(t, c); n != 1 {
		t.Fatalf("removed %d after the marker recovered, want 1", n)
	}
}

func TestRun(t *testing.T) {
	e := memstore.New()
	ref, _, err := e.Chunks().Put(context.Background(), bytes.NewReader([]byte("x")))
	if err != nil {
		t.Fatal(err)
	}
	keep := putRef(t, e, "keep", 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		c := chunkgc.New(e, []storage.ChunkMarker{refMarker}, time.Millisecond)
		c.Run(ctx, 5*time.Millisecond, nil)
		close(done)
	}()
	deadline := time.After(5 * time.Second)
	for exists(e, ref) {
		select {
		case <-deadline:
			t.Fatal("Run did not remove the unreferenced chunk")
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	<-done
	if !exists(e, keep) {
		t.Fatal("Run removed a referenced chunk")
	}
}

// TestActivity: with an Activity, garbage goes within two collections of
// the end of the requests in flight when it was found, whatever the clock
// says, and never while such a request is in flight: a reader holding a
// reference from before a delete, an upload whose chunk is not referenced
// yet, and an upload that is abandoned. Requests begun after a collection
// do not hold back what it found.
func TestActivity(t *testing.T) {
	for _, ec := range engines() {
		t.Run(ec.name, func(t *testing.T) {
			e, _ := ec.open(t)
			var a chunkgc.Activity
			c := chunkgc.New(e, []storage.ChunkMarker{refMarker}, time.Hour)
			c.Activity = &a
			ctx := context.Background()

			old := putRef(t, e, "blob", 100)
			reader := a.Begin() // holds old's ref from its snapshot
			storagetest.MustUpdate(t, e, func(tx storage.Tx) error { return tx.Delete([]byte(prefix + "blob")) })

			upload := a.Begin() // its chunk is referenced only when it commits
			staged, _, err := e.Chunks().Put(ctx, bytes.NewReader([]byte("staged")))
			if err != nil {
				t.Fatal(err)
			}
			abandoned := a.Begin() // the client goes away after the body
			lost, _, err := e.Chunks().Put(ctx, bytes.NewReader([]byte("lost")))
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if n := collect(t, c); n != 0 {
					t.Fatalf("removed %d chunks while the requests that hold them are in flight", n)
				}
			}
			a.End(abandoned)
			a.End(reader)
			storagetest.MustSet(t, e, prefix+"staged", string(staged))
			a.End(upload)
			later := a.Begin() // in flight at every collection from here on
			defer a.End(later)
			// The ends are seen by the collection after next at the latest.
			collect(t, c)
			collect(t, c)
			if exists(e, old) || exists(e, lost) {
				t.Fatalf("garbage survived two collections after its last request: old %v, abandoned %v", exists(e, old), exists(e, lost))
			}
			if !exists(e, staged) {
				t.Fatal("a committed upload's chunk was removed")
			}
		})
	}
}

// TestActivityLateReference: a request in flight at a collection that
// found a chunk unreferenced references it again (a copy from its older
// snapshot) and ends just before the next collection: the chunk stays.
func TestActivityLateReference(t *testing.T) {
	e := memstore.New()
	var a chunkgc.Activity
	c := chunkgc.New(e, []storage.ChunkMarker{refMarker}, time.Hour)
	c.Activity = &a
	ref := putRef(t, e, "src", 10)
	copier := a.Begin()
	storagetest.MustUpdate(t, e, func(tx storage.Tx) error { return tx.Delete([]byte(prefix + "src")) })
	collect(t, c) // unreferenced, copier in flight
	storagetest.MustSet(t, e, prefix+"dst", string(ref))
	a.End(copier)
	for range 3 {
		collect(t, c)
	}
	if !exists(e, ref) {
		t.Fatal("a chunk referenced again by a request in flight was removed")
	}
}
