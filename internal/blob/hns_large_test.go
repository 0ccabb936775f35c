package blob

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/engine/pgstore/pgstoretest"
	"github.com/lazuli-storage/lazuli/internal/engine/pgstore/pgtest"
	"github.com/lazuli-storage/lazuli/storage"
)

// treeNames returns, from one snapshot, the names of the path records of
// dir and everything under it, and how many of those paths have their
// access control record.
func treeNames(tb testing.TB, s *Service, dir string) (names []string, acls int) {
	tb.Helper()
	err := s.eng.View(context.Background(), func(tx storage.Tx) error {
		names, acls = nil, 0
		count := func(name string, k pathKey) error {
			names = append(names, name)
			if _, err := tx.Get(pathACLKey("acct", "fsys", k)); err == nil {
				acls++
			} else if !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			return nil
		}
		k, err := nameKey(tx, true, "acct", "fsys", dir)
		if err != nil {
			return err
		}
		if _, err := tx.Get(blobKey("acct", "fsys", k, "")); err == nil {
			if err := count(dir, k); err != nil {
				return err
			}
		} else if !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		id, ok, err := dirIDOf(tx, "acct", "fsys", k)
		if err != nil || !ok {
			return err
		}
		w := walkTree(tx, "acct", "fsys", dir, id, "", "")
		defer w.Close()
		for w.Next() {
			if w.Snap != "" {
				continue
			}
			if err := count(w.Name, w.Key()); err != nil {
				return err
			}
		}
		return w.Err()
	})
	if err != nil {
		tb.Fatal(err)
	}
	return names, acls
}

// TestHNSRenameLargeTree renames a directory with 100,000 descendants
// while readers look at the tree: every snapshot holds the whole tree
// under exactly one of the two names, and after the rename every path is
// under the new name once, with its access control.
func TestHNSRenameLargeTree(t *testing.T) {
	s := newHNSBench(t)
	const n = 100000
	files := seedTree(t, s, "one", n)
	ctx := context.Background()
	var stop atomic.Bool
	var seen [2]atomic.Int32 // snapshots with the tree under one, two
	var wg sync.WaitGroup
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ; !stop.Load(); time.Sleep(time.Millisecond) {
				err := s.eng.View(ctx, func(tx storage.Tx) error {
					var at [2]bool
					for i, dir := range []string{"one", "two"} {
						// The first and the last file of the tree.
						for _, f := range []string{files[0], files[len(files)-1]} {
							b, err := getBlobNamed(tx, true, "acct", "fsys", dir+strings.TrimPrefix(f, "one"))
							if err != nil {
								return err
							}
							if b != nil {
								at[i] = true
							} else if at[i] {
								t.Errorf("a snapshot saw part of %s", dir)
							}
						}
					}
					if at[0] == at[1] {
						t.Errorf("a snapshot saw the tree under one: %v, under two: %v", at[0], at[1])
					}
					if at[0] {
						seen[0].Add(1)
					} else {
						seen[1].Add(1)
					}
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	// Let the readers see the tree before the rename.
	for seen[0].Load() == 0 && !t.Failed() {
		time.Sleep(time.Millisecond)
	}
	if _, err := s.RenamePath(ctx, RenameRequest{Src: ref("one"), Dst: ref("two")}); err != nil {
		t.Fatal(err)
	}
	for seen[1].Load() == 0 && !t.Failed() {
		time.Sleep(time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if old, _ := treeNames(t, s, "one"); len(old) != 0 {
		t.Fatalf("%d paths left under the old name, e.g. %q", len(old), old[0])
	}
	names, acls := treeNames(t, s, "two")
	if len(names) != n+1 || acls != n+1 {
		t.Fatalf("%d paths (%d with access control) under the new name, want %d", len(names), acls, n+1)
	}
	got := make(map[string]bool, len(names))
	for _, name := range names {
		got[name] = true
	}
	for _, f := range files {
		if !got["two"+strings.TrimPrefix(f, "one")] {
			t.Fatalf("%s did not move", f)
		}
	}
}

// TestHNSRenameAcrossInstances runs two lazuli instances on one
// PostgreSQL database. Renames of one directory through both race with
// creates into it and readers through the other instance: exactly one
// rename wins, every seeded and created path is there once, and no
// reader sees the tree split between two names.
func TestHNSRenameAcrossInstances(t *testing.T) {
	url := pgtest.NewDatabase(t)
	var insts [2]*Service
	var ids atomic.Int64
	for i := range insts {
		e := pgstoretest.MustOpenURL(t, url, 8)
		insts[i] = New(e, time.Now, func() string { return fmt.Sprintf("%08d-0000-0000-0000-000000000000", ids.Add(1)) })
		insts[i].UseHierarchicalNamespace(func(string) bool { return true })
	}
	a, b := insts[0], insts[1]
	ctx := context.Background()
	if _, err := a.CreateContainer(ctx, "acct", "fsys", nil, ""); err != nil {
		t.Fatal(err)
	}
	const n = 2000
	files := seedTree(t, a, "src", n)
	const renames, creates = 6, 6
	g := newGate(renames + creates + 1)
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < renames; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			g.wait()
			_, err := insts[i%2].RenamePath(ctx, RenameRequest{Src: ref("src"), Dst: ref(fmt.Sprintf("dst%d", i))})
			switch code(err) {
			case "":
				wins.Add(1)
			case "SourcePathNotFound", "ServerBusy":
			default:
				t.Errorf("rename %d: %v", i, err)
			}
		}(i)
	}
	for i := 0; i < creates; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			g.wait()
			for {
				_, err := insts[(i+1)%2].CreatePath(ctx, CreatePathRequest{Ref: ref(fmt.Sprintf("src/d000/new%02d", i))})
				if code(err) == "ServerBusy" {
					continue
				}
				if err != nil {
					t.Errorf("create %d: %v", i, err)
				}
				return
			}
		}(i)
	}
	var stop atomic.Bool
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		g.wait()
		for !stop.Load() {
			// One snapshot through b: the first seeded file is under
			// exactly one name of the tree.
			err := b.eng.View(ctx, func(tx storage.Tx) error {
				found := 0
				leaf := strings.TrimPrefix(files[0], "src")
				for _, dir := range []string{"src", "dst0", "dst1", "dst2", "dst3", "dst4", "dst5"} {
					bl, err := getBlobNamed(tx, true, "acct", "fsys", dir+leaf)
					if err != nil {
						return err
					}
					if bl != nil {
						found++
					}
				}
				if found != 1 {
					t.Errorf("a snapshot saw %s under %d names", leaf, found)
				}
				return nil
			})
			if err != nil {
				t.Error(err)
				return
			}
		}
	}()
	g.open()
	wg.Wait()
	stop.Store(true)
	readers.Wait()
	// One rename moves the seeded tree. A create that comes after it
	// makes src again (with its parents), which a later rename may move
	// in turn: a rename costs so little now that one often does.
	if w := wins.Load(); w < 1 || w > 1+creates {
		t.Fatalf("%d renames won", w)
	}
	count := map[string]int{}
	top := map[string]string{}
	for _, p := range allPaths(t, b) {
		if p = strings.TrimSuffix(p, "/"); strings.Contains(p, "/") {
			dir, rest, _ := strings.Cut(p, "/")
			count[rest]++
			top[rest] = dir
		}
	}
	seededUnder := top[strings.TrimPrefix(files[0], "src/")]
	for _, f := range files {
		if c := count[strings.TrimPrefix(f, "src/")]; c != 1 {
			t.Fatalf("%s is there %d times", f, c)
		}
		if d := top[strings.TrimPrefix(f, "src/")]; d != seededUnder {
			t.Fatalf("the seeded tree is split between %s and %s", seededUnder, d)
		}
	}
	for i := 0; i < creates; i++ {
		if c := count[fmt.Sprintf("d000/new%02d", i)]; c != 1 {
			t.Fatalf("created file %d is there %d times", i, c)
		}
	}
}

// TestHNSRenameOverLeftovers renames a directory onto a name where keys
// of earlier paths remain (the access control a Blob delete leaves, the
// staged blocks of a blob never committed): the rename replaces them, on
// the memory engine and on PostgreSQL, where keys new to the table are
// written with a plain INSERT.
func TestHNSRenameOverLeftovers(t *testing.T) {
	open := map[string]func(t *testing.T) storage.Engine{
		"memory": func(*testing.T) storage.Engine { return memstore.New() },
		"postgres": func(t *testing.T) storage.Engine {
			e, _ := pgstoretest.MustOpen(t, 0)
			return e
		},
	}
	for _, name := range []string{"memory", "postgres"} {
		t.Run(name, func(t *testing.T) {
			e := open[name](t)
			t.Cleanup(func() { e.Close() })
			s := newHNSService(e)
			ctx := context.Background()
			if _, err := s.CreateContainer(ctx, "acct", "fsys", nil, ""); err != nil {
				t.Fatal(err)
			}
			mustFile(t, s, "dst/f", nil)
			if err := s.DeleteBlob(ctx, ref("dst/f"), "", Cond{}); err != nil {
				t.Fatal(err)
			}
			if err := s.PutBlock(ctx, ref("dst/g"), "YmxvY2s=", Ingested{Segs: []Segment{{Len: 1, Data: []byte("x")}}, Size: 1}, Cond{}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.CreatePath(ctx, CreatePathRequest{Ref: ref("src/f"), Owner: "alice"}); err != nil {
				t.Fatal(err)
			}
			if err := s.PutBlock(ctx, ref("src/g"), "YmxvY2s=", Ingested{Segs: []Segment{{Len: 1, Data: []byte("y")}}, Size: 1}, Cond{}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.RenamePath(ctx, RenameRequest{Src: ref("src"), Dst: ref("dst")}); err != nil {
				t.Fatal(err)
			}
			p, err := s.GetPath(ctx, ref("dst/f"), Cond{})
			if err != nil || p.ACL.Owner != "alice" {
				t.Fatalf("dst/f after the rename: %+v %v", p, err)
			}
			if _, err := s.PutBlockList(ctx, PutBlockListRequest{Ref: ref("dst/g"), Blocks: []BlockListItem{{ID: "YmxvY2s=", Kind: "Latest"}}}); err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, s, "dst/g"); got != "y" {
				t.Fatalf("dst/g holds %q, want the block staged under src", got)
			}
		})
	}
}

// TestHNSRenameVsDelete races the rename of a directory with its
// recursive delete: exactly one of them succeeds, and the tree is then
// either whole under the new name or gone, never split.
func TestHNSRenameVsDelete(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		const files = 30
		for round := 0; round < 4; round++ {
			for i := 0; i < files; i++ {
				mustFile(t, s, fmt.Sprintf("src/d%d/f%02d", i%3, i), nil)
			}
			g := newGate(2)
			var renameErr, deleteErr error
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				g.wait()
				_, renameErr = s.RenamePath(ctx, RenameRequest{Src: ref("src"), Dst: ref("dst")})
			}()
			go func() {
				defer wg.Done()
				g.wait()
				_, deleteErr = s.DeletePath(ctx, ref("src"), true, "", Cond{})
			}()
			g.open()
			wg.Wait()
			paths := allPaths(t, s)
			switch {
			case renameErr == nil && (code(deleteErr) == "PathNotFound" || code(deleteErr) == "ServerBusy"):
				if len(paths) != files+4 {
					t.Fatalf("round %d: the rename won, and left %d paths: %v", round, len(paths), paths)
				}
				for _, p := range paths {
					if !strings.HasPrefix(p, "dst/") {
						t.Fatalf("round %d: %s after the rename", round, p)
					}
				}
				if _, err := s.DeletePath(ctx, ref("dst"), true, "", Cond{}); err != nil {
					t.Fatal(err)
				}
			case deleteErr == nil && (code(renameErr) == "SourcePathNotFound" || code(renameErr) == "ServerBusy"):
				if len(paths) != 0 {
					t.Fatalf("round %d: the delete won, and left %v", round, paths)
				}
			default:
				t.Fatalf("round %d: rename %v, delete %v", round, renameErr, deleteErr)
			}
		}
	})
}

// TestHNSACLCodec round-trips every field of PathACL through its binary
// record (a field added to PathACL fails here until encodeACL writes
// it), and reads the JSON records of earlier builds.
func TestHNSACLCodec(t *testing.T) {
	var a PathACL
	v := reflect.ValueOf(&a).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch {
		case f.Kind() == reflect.String:
			f.SetString("é-" + v.Type().Field(i).Name)
		case f.Type() == reflect.TypeOf(time.Time{}):
			f.Set(reflect.ValueOf(time.Date(2026, 11, 27, 21, 0, 0, 123456789, time.UTC)))
		default:
			t.Fatalf("PathACL.%s: encodeACL and this test know no %s", v.Type().Field(i).Name, f.Type())
		}
	}
	got, err := decodeACL(encodeACL(a))
	if err != nil || !reflect.DeepEqual(*got, a) {
		t.Fatalf("round trip: %+v %v, want %+v", got, err, a)
	}
	got, err = decodeACL(encode(a))
	if err != nil || !reflect.DeepEqual(*got, a) {
		t.Fatalf("JSON record: %+v %v, want %+v", got, err, a)
	}
	for _, bad := range [][]byte{{aclBinaryTag}, append(encodeACL(a), 0)} {
		if _, err := decodeACL(bad); err == nil {
			t.Fatalf("corrupt record %q decoded", bad)
		}
	}
}
