package blob

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/logstore"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/engine/pgstore/pgstoretest"
	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// indexTree is the tree the name index tests walk: names that sort
// across directory boundaries ("b.txt" and "b-" before "b/", a tab below
// every printable byte, a space) at several depths.
var (
	indexDirs  = []string{"a", "a/b", "a/b/c", "ab", "b", "b-", "b.x", "b/b", "b\t", " sp"}
	indexFiles = []string{"a/b!", "a/b.txt", "a/b/c.txt", "a/b/c/d", "ab/q", "b.txt", "b/b/y", "b/x", "b-/z", "b.x/y", "b0", "b\t/t", " sp/f", "z"}
)

// seedIndex writes the records of indexTree under the name index: each
// directory with its id, each file with a snapshot too.
func seedIndex(tb testing.TB, tx storage.Tx) {
	tb.Helper()
	dirs := slices.Clone(indexDirs)
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") < strings.Count(dirs[j], "/") })
	for i, d := range dirs {
		key, _, err := resolveKey(tx, "acct", "fsys", d)
		if err != nil {
			tb.Fatalf("resolve %q: %v", d, err)
		}
		if err := tx.Set(blobKey("acct", "fsys", key, ""), []byte(d)); err != nil {
			tb.Fatal(err)
		}
		if err := putDirID(tx, "acct", "fsys", key, fmt.Sprintf("id%02d", i)); err != nil {
			tb.Fatal(err)
		}
	}
	for _, f := range indexFiles {
		key, _, err := resolveKey(tx, "acct", "fsys", f)
		if err != nil {
			tb.Fatalf("resolve %q: %v", f, err)
		}
		for _, snap := range []string{"", "2026-01-01T00:00:00.0000000Z"} {
			if err := tx.Set(blobKey("acct", "fsys", key, snap), []byte(f)); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// walkNames is every name a walk visits, a name once per record.
func walkNames(tb testing.TB, w *treeWalk) []string {
	tb.Helper()
	defer w.Close()
	var out []string
	for w.Next() {
		if w.Snap != "" && (len(out) == 0 || out[len(out)-1] != w.Name) {
			tb.Fatalf("snapshot of %q before its base record", w.Name)
		}
		if w.Snap == "" {
			out = append(out, w.Name)
			if n, err := fullName(w.tx, w.acct, w.c, w.Key()); err != nil || n != w.Name {
				tb.Fatalf("key of %q names %q (%v)", w.Name, n, err)
			}
		}
	}
	if err := w.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestHNSIndexWalkOrder walks trees of the name index from every start:
// the names come in full-name byte order, as a scan of full names would
// give them.
func TestHNSIndexWalkOrder(t *testing.T) {
	onIndexEngines(t, func(t *testing.T, s *Service) {
		all := append(slices.Clone(indexDirs), indexFiles...)
		sort.Strings(all)
		err := s.eng.Update(context.Background(), func(tx storage.Tx) error {
			seedIndex(t, tx)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		err = s.eng.View(context.Background(), func(tx storage.Tx) error {
			if got := walkNames(t, walkTree(tx, "acct", "fsys", "", "", "", "")); !slices.Equal(got, all) {
				t.Fatalf("walk:\n got %q\nwant %q", got, all)
			}
			froms := append(slices.Clone(all), "", "a/b/c/", "a/b/c/zz", "b.t", "b/a", "b/", "b/b/", "zz", "0", "a/b0")
			for _, from := range froms {
				var want []string
				for _, n := range all {
					if n >= from {
						want = append(want, n)
					}
				}
				if got := walkNames(t, walkTree(tx, "acct", "fsys", "", "", "", from)); !slices.Equal(got, want) {
					t.Errorf("walk from %q:\n got %q\nwant %q", from, got, want)
				}
			}
			// Under a directory, with a prefix of the leaf.
			key, _, err := resolveKey(tx, "acct", "fsys", "a")
			if err != nil {
				return err
			}
			id, ok, err := dirIDOf(tx, "acct", "fsys", key)
			if err != nil || !ok {
				t.Fatalf("id of a: %v %v", ok, err)
			}
			for _, lp := range []string{"", "b", "b/", "b.", "q"} {
				for _, from := range append(slices.Clone(froms), "a/b.txt", "a/b/c.txt", "a/b") {
					var want []string
					for _, n := range all {
						if strings.HasPrefix(n, "a/"+lp) && n >= from {
							want = append(want, n)
						}
					}
					if strings.Contains(lp, "/") {
						continue // callers split a prefix at its last '/'
					}
					if got := walkNames(t, walkTree(tx, "acct", "fsys", "a", id, lp, from)); !slices.Equal(got, want) {
						t.Errorf("walk of a, leaf prefix %q, from %q:\n got %q\nwant %q", lp, from, got, want)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// TestHNSIndexRename renames a directory by moving its own record and
// index entry: the walk, the reverse lookup and resolution of the paths
// under it then give the new name, and the old one resolves no more.
func TestHNSIndexRename(t *testing.T) {
	onIndexEngines(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		err := s.eng.Update(ctx, func(tx storage.Tx) error {
			seedIndex(t, tx)
			from, _, err := resolveKey(tx, "acct", "fsys", "a/b")
			if err != nil {
				return err
			}
			to, _, err := resolveKey(tx, "acct", "fsys", "b.x/moved")
			if err != nil {
				return err
			}
			id, _, err := dirIDOf(tx, "acct", "fsys", from)
			if err != nil {
				return err
			}
			v, err := tx.Get(blobKey("acct", "fsys", from, ""))
			if err != nil {
				return err
			}
			if err := tx.Delete(blobKey("acct", "fsys", from, "")); err != nil {
				return err
			}
			if err := tx.Set(blobKey("acct", "fsys", to, ""), v); err != nil {
				return err
			}
			return moveDirID(tx, "acct", "fsys", "fsys", from, to, id)
		})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, n := range append(slices.Clone(indexDirs), indexFiles...) {
			if rest, ok := strings.CutPrefix(n, "a/b"); ok && (rest == "" || rest[0] == '/') {
				n = "b.x/moved" + rest
			}
			want = append(want, n)
		}
		sort.Strings(want)
		err = s.eng.View(ctx, func(tx storage.Tx) error {
			if got := walkNames(t, walkTree(tx, "acct", "fsys", "", "", "", "")); !slices.Equal(got, want) {
				t.Fatalf("walk after the rename:\n got %q\nwant %q", got, want)
			}
			for _, n := range want {
				key, _, err := resolveKey(tx, "acct", "fsys", n)
				if err != nil {
					t.Fatalf("resolve %q: %v", n, err)
				}
				if _, err := tx.Get(blobKey("acct", "fsys", key, "")); err != nil {
					t.Fatalf("record of %q: %v", n, err)
				}
				if got, err := fullName(tx, "acct", "fsys", key); err != nil || got != n {
					t.Fatalf("full name of %q: %q, %v", n, got, err)
				}
			}
			if _, _, err := resolveKey(tx, "acct", "fsys", "a/b/c.txt"); err != errNotDir {
				t.Fatalf("old name resolved: %v", err)
			}
			if _, _, err := resolveKey(tx, "acct", "fsys", "z/q"); err != errNotDir {
				t.Fatalf("a name under a file resolved: %v", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// onIndexEngines is onHNSEngines and PostgreSQL.
func onIndexEngines(t *testing.T, fn func(t *testing.T, s *Service)) {
	onHNSEngines(t, fn)
	t.Run("postgres", func(t *testing.T) {
		e, _ := pgstoretest.MustOpen(t, 0)
		s := New(e, time.Now, func() string { return "00000000-0000-0000-0000-000000000001" })
		if _, err := s.CreateContainer(context.Background(), "acct", "fsys", nil, ""); err != nil {
			t.Fatal(err)
		}
		fn(t, s)
	})
}

// seedIndexTree is seedTree in the layout of the name index: the
// directory root with n descendants (n/1000 subdirectories holding the
// rest as files), each with its record and access control.
func seedIndexTree(tb testing.TB, s *Service, root string, n int) {
	tb.Helper()
	dirs := max(n/1000, 1)
	names := []string{root}
	for d := 0; d < dirs; d++ {
		names = append(names, fmt.Sprintf("%s/d%03d", root, d))
	}
	for i := 0; len(names) < n+1; i++ {
		names = append(names, fmt.Sprintf("%s/d%03d/f%06d", root, i%dirs, i))
	}
	const batch = 5000
	for lo := 0; lo < len(names); lo += batch {
		err := s.eng.Update(context.Background(), func(tx storage.Tx) error {
			now := s.now()
			for j, name := range names[lo:min(lo+batch, len(names))] {
				key, _, err := resolveKey(tx, "acct", "fsys", name)
				if err != nil {
					return err
				}
				dir := lo+j <= dirs
				var b *Blob
				if dir {
					b = s.newDirRecord(key, name, nil, now)
					if err := putDirID(tx, "acct", "fsys", key, fmt.Sprintf("%x", lo+j)); err != nil {
						return err
					}
				} else {
					b = &Blob{Name: name, Type: BlockBlob, Created: now, Modified: s.written(now), ETag: s.etag(0, now)}
					b.replacing(nil)
				}
				if err := tx.Set(blobKey("acct", "fsys", key, ""), encodeBlob(b)); err != nil {
					return err
				}
				a := defaultACL(dir)
				a.Created = b.Created
				if err := tx.Set(pathACLKey("acct", "fsys", key), encodeACL(a)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
}

var errNoSource, errTaken = errors.New("no source directory"), errors.New("destination exists")

// renameIndexed renames the directory src to dst in the layout of the
// name index: its record, its access control and its index entries
// move; what lies under it stays.
func renameIndexed(tx storage.Tx, src, dst string) error {
	from, _, err := resolveKey(tx, "acct", "fsys", src)
	if err != nil {
		return err
	}
	to, _, err := resolveKey(tx, "acct", "fsys", dst)
	if err != nil {
		return err
	}
	id, ok, err := dirIDOf(tx, "acct", "fsys", from)
	if err != nil {
		return err
	}
	if !ok {
		return errNoSource
	}
	if _, err := tx.Get(blobKey("acct", "fsys", to, "")); err == nil {
		return errTaken
	} else if !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	for _, k := range [][2][]byte{
		{blobKey("acct", "fsys", from, ""), blobKey("acct", "fsys", to, "")},
		{pathACLKey("acct", "fsys", from), pathACLKey("acct", "fsys", to)},
	} {
		v, err := tx.Get(k[0])
		if errors.Is(err, storage.ErrNotFound) {
			continue // a path without access control of its own
		}
		if err != nil {
			return err
		}
		if err := tx.Delete(k[0]); err != nil {
			return err
		}
		if err := tx.Set(k[1], v); err != nil {
			return err
		}
	}
	return moveDirID(tx, "acct", "fsys", "fsys", from, to, id)
}

// BenchmarkHNSIndexRename renames a directory with 1,000, 10,000 and
// 100,000 descendants back and forth in the layout of the name index, on
// the embedded engines: the cost of one rename, flat in the size of the
// tree.
func BenchmarkHNSIndexRename(b *testing.B) {
	for _, eng := range []string{"memory", "log", "sqlite"} {
		for _, n := range []int{1000, 10000, 100000} {
			b.Run(fmt.Sprintf("%s/%d", eng, n), func(b *testing.B) {
				s := newBenchService(b, eng)
				seedIndexTree(b, s, "one", n)
				names := [2]string{"one", "two"}
				ctx := context.Background()
				for i := 0; b.Loop(); i++ {
					err := s.eng.Update(ctx, func(tx storage.Tx) error {
						return renameIndexed(tx, names[i%2], names[(i+1)%2])
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkHNSIndexWalk walks 100,000 paths in full-name order, against
// a scan of the same paths keyed by full name (the layout of accounts
// without a hierarchical namespace); ns/path is per path, no record
// decoded.
func BenchmarkHNSIndexWalk(b *testing.B) {
	const n = 100000
	for _, layout := range []string{"index", "fullname"} {
		b.Run(layout, func(b *testing.B) {
			s := newBenchService(b, "memory")
			if layout == "index" {
				seedIndexTree(b, s, "top", n)
			} else {
				seedTree(b, s, "top", n)
			}
			for b.Loop() {
				seen := 0
				err := s.eng.View(context.Background(), func(tx storage.Tx) error {
					if layout == "index" {
						w := walkTree(tx, "acct", "fsys", "", "", "", "")
						defer w.Close()
						for w.Next() {
							seen++
						}
						return w.Err()
					}
					lo := blobsPrefix("acct", "fsys")
					it := tx.Scan(lo, keyenc.PrefixEnd(lo), false)
					defer it.Close()
					for it.Next() {
						seen++
					}
					return it.Err()
				})
				if err != nil {
					b.Fatal(err)
				}
				if seen != n+1 {
					b.Fatalf("walked %d paths, want %d", seen, n+1)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/path")
		})
	}
}

// newBenchService is a service with container fsys on the engine named.
func newBenchService(b *testing.B, eng string) *Service {
	var e storage.Engine
	var err error
	switch eng {
	case "memory":
		e = memstore.New()
	case "log":
		e, err = logstore.Open(logstore.Options{Dir: b.TempDir()})
	case "sqlite":
		e, err = sqlitestore.Open(sqlitestore.Options{Dir: b.TempDir()})
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	s := New(e, time.Now, func() string { return "00000000-0000-0000-0000-000000000001" })
	if _, err := s.CreateContainer(context.Background(), "acct", "fsys", nil, ""); err != nil {
		b.Fatal(err)
	}
	return s
}

// deleteIndexed deletes the directory name and everything under it.
func deleteIndexed(tx storage.Tx, name string) error {
	key, _, err := resolveKey(tx, "acct", "fsys", name)
	if err != nil {
		return err
	}
	id, ok, err := dirIDOf(tx, "acct", "fsys", key)
	if err != nil {
		return err
	}
	if !ok {
		return errNoSource
	}
	keys := []pathKey{key}
	w := walkTree(tx, "acct", "fsys", name, id, "", "")
	for w.Next() {
		keys = append(keys, w.Key())
	}
	w.Close()
	if err := w.Err(); err != nil {
		return err
	}
	for _, k := range keys {
		if err := tx.Delete(blobKey("acct", "fsys", k, "")); err != nil {
			return err
		}
		if sub, ok, err := dirIDOf(tx, "acct", "fsys", k); err != nil {
			return err
		} else if ok {
			if err := dropDirID(tx, "acct", "fsys", k, sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestHNSIndexRenameRace races renames of one directory to several
// names and its deletion with creates of files under it, on every
// engine: exactly one rename or the delete wins; every create that
// succeeded lies under the name the directory has at its commit
// (resolution read the entry the rename replaced), so each file is there
// once, under the winner's name, and none is left without a name.
func TestHNSIndexRenameRace(t *testing.T) {
	onIndexEngines(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		if err := s.eng.Update(ctx, func(tx storage.Tx) error { seedIndex(t, tx); return nil }); err != nil {
			t.Fatal(err)
		}
		const renames, creates = 4, 12
		retry := func(fn func(tx storage.Tx) error) error {
			for {
				err := s.eng.Update(ctx, fn)
				if !errors.Is(err, storage.ErrConflict) {
					return err
				}
			}
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		winners, created := 0, 0
		start := make(chan struct{})
		for i := 0; i < renames+1+creates; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				if i <= renames {
					err := retry(func(tx storage.Tx) error {
						if i == renames {
							return deleteIndexed(tx, "a/b")
						}
						return renameIndexed(tx, "a/b", fmt.Sprintf("dst%d", i))
					})
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						winners++
					case !errors.Is(err, errNoSource) && !errors.Is(err, errNotDir):
						t.Errorf("rename %d: %v", i, err)
					}
					return
				}
				err := retry(func(tx storage.Tx) error {
					key, _, err := resolveKey(tx, "acct", "fsys", fmt.Sprintf("a/b/new%02d", i))
					if err != nil {
						return err
					}
					return tx.Set(blobKey("acct", "fsys", key, ""), nil)
				})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					created++
				case !errors.Is(err, errNotDir):
					t.Errorf("create %d: %v", i, err)
				}
			}(i)
		}
		close(start)
		wg.Wait()
		if winners != 1 {
			t.Fatalf("%d renames won", winners)
		}
		err := s.eng.View(ctx, func(tx storage.Tx) error {
			names := walkNames(t, walkTree(tx, "acct", "fsys", "", "", "", ""))
			news, moved := 0, 0
			for _, n := range names {
				if strings.HasPrefix(n, "a/b/") {
					t.Errorf("%q is still under the old name", n)
				}
				if strings.HasPrefix(n, "dst") && strings.Contains(n, "/") {
					moved++
				}
				if strings.Contains(n, "/new") {
					news++
				}
			}
			deleted := !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "dst") })
			if deleted && news != 0 || !deleted && news != created {
				t.Errorf("%d new files listed, %d created, directory deleted %v", news, created, deleted)
			}
			// a/b held c, c.txt, c/d besides what was created.
			if !deleted && moved != created+3 {
				t.Errorf("%d paths under the winner, want %d: %q", moved, created+3, names)
			}
			// No record lies under a directory id that no name reaches.
			lo := blobsPrefix("acct", "fsys")
			it := tx.Scan(lo, keyenc.PrefixEnd(lo), false)
			defer it.Close()
			records := 0
			for it.Next() {
				key, rest, err := keyenc.ReadString(it.Key()[len(lo):])
				if err != nil {
					return err
				}
				if snap, _, _ := keyenc.ReadString(rest); snap != "" {
					continue
				}
				records++
				if _, err := fullName(tx, "acct", "fsys", pathKey(key)); err != nil {
					t.Errorf("record %q has no name: %v", key, err)
				}
			}
			if records != len(names) {
				t.Errorf("%d records, %d listed", records, len(names))
			}
			return it.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
