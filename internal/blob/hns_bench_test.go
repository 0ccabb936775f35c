package blob

// Benchmarks of the Data Lake operations, on the memory engine so that
// they measure lazuli rather than a disk (the rename on every engine):
//
//	go test -run '^$' -bench HNS -benchtime 3x ./internal/blob/

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/logstore"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/engine/pgstore/pgstoretest"
	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/storage"
)

// newHNSBench is a service on the memory engine with the filesystem fsys.
func newHNSBench(tb testing.TB) *Service {
	tb.Helper()
	s := newHNSService(memstore.New())
	if _, err := s.CreateContainer(context.Background(), "acct", "fsys", nil, ""); err != nil {
		tb.Fatal(err)
	}
	return s
}

// newHNSService is a service on e whose accounts have a hierarchical
// namespace, with distinct ids (directory ids must be).
func newHNSService(e storage.Engine) *Service {
	var n atomic.Int64
	s := New(e, time.Now, func() string { return fmt.Sprintf("%08d-0000-0000-0000-000000000000", n.Add(1)) })
	s.UseHierarchicalNamespace(func(string) bool { return true })
	return s
}

// seedTree makes the directory root with n descendants: n/1000
// subdirectories (at least one) holding the rest as empty files, each
// path with its record, access control and (directories) index entry as
// Create Path writes them.
// It writes in transactions of a few thousand paths, which is what makes
// trees of 100,000 paths quick to set up; it returns the file names.
func seedTree(tb testing.TB, s *Service, root string, n int) []string {
	tb.Helper()
	dirs := max(n/1000, 1)
	names := make([]string, 0, n)
	for d := 0; d < dirs; d++ {
		names = append(names, fmt.Sprintf("%s/d%03d", root, d))
	}
	for i := 0; len(names) < n; i++ {
		names = append(names, fmt.Sprintf("%s/d%03d/f%06d", root, i%dirs, i))
	}
	files := names[dirs:]
	names = append([]string{root}, names...)
	const batch = 5000
	for lo := 0; lo < len(names); lo += batch {
		part := names[lo:min(lo+batch, len(names))]
		err := s.eng.Update(context.Background(), func(tx storage.Tx) error {
			now := s.now()
			for j, name := range part {
				dir := lo+j <= dirs
				k, err := s.keyOf(tx, "acct", "fsys", name)
				if err != nil {
					return err
				}
				var b *Blob
				if dir {
					b = s.newDirRecord(k, name, nil, now)
				} else {
					b = &Blob{Name: name, Type: BlockBlob, Created: now, Modified: s.written(now), ETag: s.etag(0, now), key: k}
					b.replacing(nil)
				}
				if err := putBlob(tx, "acct", "fsys", b); err != nil {
					return err
				}
				if dir {
					if _, _, _, err := s.indexDir(tx, "acct", "fsys", name); err != nil {
						return err
					}
				}
				a := defaultACL(dir)
				a.Created = b.Created
				if err := putACL(tx, "acct", "fsys", k, a); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return files
}

// BenchmarkHNSCreateAppendFlush1KiB is create file + append + flush of
// 1 KiB.
func BenchmarkHNSCreateAppendFlush1KiB(b *testing.B) {
	s := newHNSBench(b)
	data := bytes.Repeat([]byte("x"), 1024)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		mustFile(b, s, fmt.Sprintf("dir/f%d", i), data)
	}
}

// BenchmarkHNSAppend4MiB appends 4 MiB (through the chunk store, as an
// HTTP append does) and flushes it.
func BenchmarkHNSAppend4MiB(b *testing.B) {
	s := newHNSBench(b)
	ctx := context.Background()
	mustFile(b, s, "big", nil)
	data := bytes.Repeat([]byte("0123456789abcdef"), 4<<20/16)
	b.SetBytes(int64(len(data)))
	for i := 0; b.Loop(); i++ {
		in, err := s.IngestSize(ctx, bytes.NewReader(data), int64(len(data)), false, nil, 0)
		if err != nil {
			b.Fatal(err)
		}
		pos := int64(i) * int64(len(data))
		if err := s.AppendData(ctx, ref("big"), pos, in, Cond{}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.FlushData(ctx, FlushRequest{Ref: ref("big"), Position: pos + int64(len(data))}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHNSRenameDirectory renames a directory with 1,000, 10,000 and
// 100,000 descendants back and forth, on each engine; each op is one
// rename, and ns/path is what it costs per path of the tree (a rename
// moves every key of the tree; on PostgreSQL 100,000 paths take tens of
// seconds, within its one-minute bound on a transaction).
func BenchmarkHNSRenameDirectory(b *testing.B) {
	engines := []struct {
		name  string
		open  func(b *testing.B) storage.Engine
		sizes []int
	}{
		{"memory", func(*testing.B) storage.Engine { return memstore.New() }, []int{1000, 10000, 100000}},
		{"log", func(b *testing.B) storage.Engine {
			e, err := logstore.Open(logstore.Options{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			return e
		}, []int{10000, 100000}},
		{"sqlite", func(b *testing.B) storage.Engine {
			e, err := sqlitestore.Open(sqlitestore.Options{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			return e
		}, []int{10000, 100000}},
		{"postgres", func(b *testing.B) storage.Engine {
			e, _ := pgstoretest.MustOpen(b, 0)
			return e
		}, []int{1000, 10000, 100000}},
	}
	for _, eng := range engines {
		for _, n := range eng.sizes {
			b.Run(fmt.Sprintf("%s/%d", eng.name, n), func(b *testing.B) {
				e := eng.open(b)
				b.Cleanup(func() { e.Close() })
				s := newHNSService(e)
				ctx := context.Background()
				if _, err := s.CreateContainer(ctx, "acct", "fsys", nil, ""); err != nil {
					b.Fatal(err)
				}
				seedTree(b, s, "one", n)
				names := [2]string{"one", "two"}
				for i := 0; b.Loop(); i++ {
					if _, err := s.RenamePath(ctx, RenameRequest{Src: ref(names[i%2]), Dst: ref(names[(i+1)%2])}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/path")
				// One more rename, counted: what the engine reads and
				// writes for it, which a rename of bounded cost keeps
				// the same whatever n.
				var c keyCounts
				cs := New(countingEngine{e, &c}, time.Now, s.newID)
				cs.UseHierarchicalNamespace(s.namespace)
				if _, err := cs.RenamePath(ctx, RenameRequest{Src: ref(names[b.N%2]), Dst: ref(names[(b.N+1)%2])}); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(c.read), "keys-read/rename")
				b.ReportMetric(float64(c.written), "keys-written/rename")
			})
		}
	}
}

// BenchmarkHNSRenameAcrossFilesystems renames a directory with 10,000
// and 100,000 descendants from one filesystem to another and back, on
// the memory engine; each op is one rename. The paths under the
// directory keep their keys (their segment is the home of their parent
// directory, not their container), so the keys counted for one more
// rename are those of a rename within a filesystem, whatever the tree.
func BenchmarkHNSRenameAcrossFilesystems(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			e := memstore.New()
			s := newHNSService(e)
			ctx := context.Background()
			for _, c := range []string{"fsys", "fsys2"} {
				if _, err := s.CreateContainer(ctx, "acct", c, nil, ""); err != nil {
					b.Fatal(err)
				}
			}
			seedTree(b, s, "one", n)
			refs := [2]Ref{ref("one"), {Account: "acct", Container: "fsys2", Name: "one"}}
			for i := 0; b.Loop(); i++ {
				if _, err := s.RenamePath(ctx, RenameRequest{Src: refs[i%2], Dst: refs[(i+1)%2]}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/path")
			var c keyCounts
			cs := New(countingEngine{e, &c}, time.Now, s.newID)
			cs.UseHierarchicalNamespace(s.namespace)
			if _, err := cs.RenamePath(ctx, RenameRequest{Src: refs[b.N%2], Dst: refs[(b.N+1)%2]}); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(c.read), "keys-read/rename")
			b.ReportMetric(float64(c.written), "keys-written/rename")
		})
	}
}

// TestHNSRenameCostBounded renames a directory with 10 and with 1,000
// descendants: the engine reads and writes the same keys for both, as
// a rename moves the one path it names whatever lies under it.
func TestHNSRenameCostBounded(t *testing.T) {
	var got [2]keyCounts
	for i, n := range []int{10, 1000} {
		e := memstore.New()
		s := newHNSService(e)
		ctx := context.Background()
		if _, err := s.CreateContainer(ctx, "acct", "fsys", nil, ""); err != nil {
			t.Fatal(err)
		}
		files := seedTree(t, s, "one", n)
		cs := New(countingEngine{e, &got[i]}, time.Now, s.newID)
		cs.UseHierarchicalNamespace(s.namespace)
		if _, err := cs.RenamePath(ctx, RenameRequest{Src: ref("one"), Dst: ref("two")}); err != nil {
			t.Fatal(err)
		}
		last := "two" + strings.TrimPrefix(files[len(files)-1], "one")
		if _, err := s.GetPath(ctx, ref(last), Cond{}); err != nil {
			t.Fatalf("%d descendants: %s after the rename: %v", n, last, err)
		}
	}
	if got[0] != got[1] {
		t.Fatalf("keys read/written: %+v with 10 descendants, %+v with 1,000", got[0], got[1])
	}
}

// BenchmarkHNSListPathsRecursive lists 100,000 paths recursively, in
// pages of 5,000 (the most one page holds); each op is the whole
// listing.
func BenchmarkHNSListPathsRecursive(b *testing.B) {
	s := newHNSBench(b)
	const n = 100000
	seedTree(b, s, "top", n)
	ctx := context.Background()
	for b.Loop() {
		total, cont := 0, ""
		for {
			ps, next, err := s.ListPaths(ctx, "acct", "fsys", ListPathsRequest{Recursive: true, Continuation: cont})
			if err != nil {
				b.Fatal(err)
			}
			total += len(ps)
			if next == "" {
				break
			}
			cont = next
		}
		if total != n+1 {
			b.Fatalf("listed %d paths, want %d", total, n+1)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/path")
}

// keyCounts are the keys an engine read (Get, and each entry a scan
// yielded) and wrote (Set, Delete) through countingEngine.
type keyCounts struct{ read, written int }

// countingEngine counts the keys the transactions run through it read
// and write. Its transactions offer none of the engine's optional
// interfaces, so each key goes through Get, Set or Delete and counts.
type countingEngine struct {
	storage.Engine
	n *keyCounts
}

func (e countingEngine) Update(ctx context.Context, fn func(storage.Tx) error) error {
	return e.Engine.Update(ctx, func(tx storage.Tx) error {
		*e.n = keyCounts{} // a retried transaction counts once
		return fn(countingTx{tx, e.n})
	})
}

func (e countingEngine) View(ctx context.Context, fn func(storage.Tx) error) error {
	return e.Engine.View(ctx, func(tx storage.Tx) error { return fn(countingTx{tx, e.n}) })
}

type countingTx struct {
	tx storage.Tx
	n  *keyCounts
}

func (t countingTx) Get(k []byte) ([]byte, error) { t.n.read++; return t.tx.Get(k) }
func (t countingTx) Set(k, v []byte) error        { t.n.written++; return t.tx.Set(k, v) }
func (t countingTx) Delete(k []byte) error        { t.n.written++; return t.tx.Delete(k) }
func (t countingTx) Scan(lo, hi []byte, rev bool) storage.Iterator {
	return countingIt{t.tx.Scan(lo, hi, rev), t.n}
}

type countingIt struct {
	storage.Iterator
	n *keyCounts
}

func (it countingIt) Next() bool {
	ok := it.Iterator.Next()
	if ok {
		it.n.read++
	}
	return ok
}
