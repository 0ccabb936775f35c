package blob

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/pgstore/pgstoretest"
)

// onAllEngines is onHNSEngines and PostgreSQL.
func onAllEngines(t *testing.T, fn func(t *testing.T, s *Service)) {
	onHNSEngines(t, fn)
	t.Run("postgres", func(t *testing.T) {
		e, _ := pgstoretest.MustOpen(t, 0)
		var n atomic.Int64
		s := New(e, time.Now, func() string { return fmt.Sprintf("%08d-0000-0000-0000-000000000000", n.Add(1)) })
		if _, err := s.CreateContainer(context.Background(), "acct", "fsys", nil, ""); err != nil {
			t.Fatal(err)
		}
		fn(t, s)
	})
}

// treeRace is the frame of the races of a directory rename against what
// happens under the directory: treeFiles files are made at
// top/d{i%3}/fNN of fsys (content fNN), then renames of top to dst race one
// more actor (other), creates of top/d0/new{i}, deletes of the files
// f02 and f05 of top/d2 and a reader (read, called until the rest is
// done; false stops it).
type treeRace struct {
	top, dst Ref
	other    func()
	read     func() bool
}

const treeFiles = 24

// retryBusy calls f until it answers other than ServerBusy.
func retryBusy(f func() error) error {
	for {
		if err := f(); code(err) != "ServerBusy" {
			return err
		}
	}
}

// run makes the tree, races the actors and asserts that exactly one
// rename of the top won; it reports which creates and deletes won.
func (tr treeRace) run(t *testing.T, s *Service) (created, deleted []bool) {
	ctx := context.Background()
	for i := 0; i < treeFiles; i++ {
		mustFile(t, s, fmt.Sprintf("%s/d%d/f%02d", tr.top.Name, i%3, i), []byte(fmt.Sprintf("f%02d", i)))
	}
	const tops, creates, deletes = 4, 4, 2
	g := newGate(tops + 1 + creates + deletes + 1)
	var wins atomic.Int32
	created = make([]bool, creates)
	deleted = make([]bool, deletes)
	var wg sync.WaitGroup
	for i := 0; i < tops; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			g.wait()
			// One destination: once a rename has filled it, no later
			// rename of a top that a create made again can win too.
			_, err := s.RenamePath(ctx, RenameRequest{Src: tr.top, Dst: tr.dst})
			switch code(err) {
			case "":
				wins.Add(1)
			case "SourcePathNotFound", "PathAlreadyExists", "ServerBusy":
			default:
				t.Errorf("rename %d: %v", i, err)
			}
		}(i)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		g.wait()
		tr.other()
	}()
	under := func(name string) Ref {
		r := tr.top
		r.Name = tr.top.Name + "/" + name
		return r
	}
	for i := 0; i < creates; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			g.wait()
			err := retryBusy(func() error {
				_, err := s.CreatePath(ctx, CreatePathRequest{Ref: under(fmt.Sprintf("d0/new%d", i))})
				return err
			})
			if err != nil {
				t.Errorf("create %d: %v", i, err)
			}
			created[i] = err == nil
		}(i)
	}
	for i := 0; i < deletes; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			g.wait()
			err := retryBusy(func() error {
				_, err := s.DeletePath(ctx, under(fmt.Sprintf("d2/f%02d", 2+3*i)), false, "", Cond{})
				return err
			})
			switch code(err) {
			case "":
				deleted[i] = true
			case "PathNotFound":
			default:
				t.Errorf("delete %d: %v", i, err)
			}
		}(i)
	}
	var stop atomic.Bool
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		g.wait()
		for !stop.Load() && tr.read() {
		}
	}()
	g.open()
	wg.Wait()
	stop.Store(true)
	readers.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d renames of the top won", wins.Load())
	}
	return created, deleted
}

// checkTreeFiles asserts that every file of a treeRace is where (keyed
// by its leaf name) exactly once with its content, or not at all when
// its delete won, and that each created file is there once exactly when
// its create won.
func checkTreeFiles(t *testing.T, s *Service, where map[string][]Ref, created, deleted []bool) {
	t.Helper()
	gone := map[string]bool{}
	for i, ok := range deleted {
		gone[fmt.Sprintf("f%02d", 2+3*i)] = ok
	}
	for i := 0; i < treeFiles; i++ {
		leaf := fmt.Sprintf("f%02d", i)
		want := 1
		if gone[leaf] {
			want = 0
		}
		if len(where[leaf]) != want {
			t.Fatalf("%s is there %d times (%v), want %d", leaf, len(where[leaf]), where[leaf], want)
		}
		if want == 1 {
			if got := readRef(t, s, where[leaf][0]); got != leaf {
				t.Fatalf("%v holds %q", where[leaf][0], got)
			}
		}
	}
	for i, ok := range created {
		leaf := fmt.Sprintf("new%d", i)
		want := 0
		if ok {
			want = 1
		}
		if len(where[leaf]) != want {
			t.Fatalf("created %s is there %d times (%v)", leaf, len(where[leaf]), where[leaf])
		}
	}
}

// filesByLeaf lists the files of the filesystems cs by their leaf name.
func filesByLeaf(t *testing.T, s *Service, cs ...string) map[string][]Ref {
	t.Helper()
	where := map[string][]Ref{}
	for _, c := range cs {
		ps, next, err := s.ListPaths(context.Background(), "acct", c, ListPathsRequest{Recursive: true})
		if err != nil || next != "" {
			t.Fatalf("list %s: %v, continuation %q", c, err, next)
		}
		for _, p := range ps {
			if !p.Dir {
				leaf := p.Name[strings.LastIndex(p.Name, "/")+1:]
				where[leaf] = append(where[leaf], Ref{Account: "acct", Container: c, Name: p.Name})
			}
		}
	}
	return where
}

// TestHNSRenameRaceUnderTree races renames of a directory with renames of
// a directory under it, creates and deletes of files under it and
// readers of the whole tree, on every engine. Exactly one rename of the
// top wins; every file is afterwards there once (or gone, when its delete
// won), with its content; a created file is there once when its create
// succeeded; and no listing sees the untouched files split between two
// names.
func TestHNSRenameRaceUnderTree(t *testing.T) {
	onAllEngines(t, func(t *testing.T, s *Service) {
		s.UseHierarchicalNamespace(func(string) bool { return true })
		ctx := context.Background()
		var subErr error
		created, deleted := treeRace{
			top: ref("src"), dst: ref("dst"),
			// d0 only gains files and d2 only loses some; d1 may move.
			other: func() {
				subErr = retryBusy(func() error {
					_, err := s.RenamePath(ctx, RenameRequest{Src: ref("src/d1"), Dst: ref("src/e1")})
					return err
				})
			},
			read: func() bool {
				ps, _, err := s.ListPaths(ctx, "acct", "fsys", ListPathsRequest{Recursive: true})
				if code(err) == "ServerBusy" {
					return true
				}
				if err != nil {
					t.Error(err)
					return false
				}
				// The untouched files of d0: all under one top.
				tops := map[string]int{}
				for _, p := range ps {
					top, rest, _ := strings.Cut(p.Name, "/")
					if strings.HasPrefix(rest, "d0/f") {
						tops[top]++
					}
				}
				if len(tops) != 1 || tops[firstKey(tops)] != treeFiles/3 {
					t.Errorf("a listing saw d0 as %v", tops)
					return false
				}
				return true
			},
		}.run(t, s)
		checkTreeFiles(t, s, filesByLeaf(t, s, "fsys"), created, deleted)
		if subErr != nil && code(subErr) != "SourcePathNotFound" {
			t.Fatalf("rename of d1: %v", subErr)
		}
		// The name index agrees with the directories the races left.
		indexedDirs(t, s, "fsys")
	})
}

func firstKey(m map[string]int) string {
	for k := range m {
		return k
	}
	return ""
}
