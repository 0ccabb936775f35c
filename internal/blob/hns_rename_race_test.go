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
		const files = 24
		for i := 0; i < files; i++ {
			mustFile(t, s, fmt.Sprintf("src/d%d/f%02d", i%3, i), []byte(fmt.Sprintf("f%02d", i)))
		}
		// d0 only gains files and d2 only loses one; d1 may move.
		const tops, creates, deletes = 4, 4, 2
		g := newGate(tops + 1 + creates + deletes + 1)
		var wins atomic.Int32
		var subErr error
		created := make([]bool, creates)
		deleted := make([]bool, deletes)
		retry := func(f func() error) error {
			for {
				if err := f(); code(err) != "ServerBusy" {
					return err
				}
			}
		}
		var wg sync.WaitGroup
		for i := 0; i < tops; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				g.wait()
				// One destination: once a rename has filled it, no
				// later rename of a src that a create made again
				// can win too.
				_, err := s.RenamePath(ctx, RenameRequest{Src: ref("src"), Dst: ref("dst")})
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
			subErr = retry(func() error {
				_, err := s.RenamePath(ctx, RenameRequest{Src: ref("src/d1"), Dst: ref("src/e1")})
				return err
			})
		}()
		for i := 0; i < creates; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				g.wait()
				err := retry(func() error {
					_, err := s.CreatePath(ctx, CreatePathRequest{Ref: ref(fmt.Sprintf("src/d0/new%d", i))})
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
				// f02 and f05 are in d2.
				err := retry(func() error {
					_, err := s.DeletePath(ctx, ref(fmt.Sprintf("src/d2/f%02d", 2+3*i)), false, "", Cond{})
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
			for !stop.Load() {
				ps, _, err := s.ListPaths(ctx, "acct", "fsys", ListPathsRequest{Recursive: true})
				if code(err) == "ServerBusy" {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				// The untouched files of d0: all under one top.
				tops := map[string]int{}
				for _, p := range ps {
					top, rest, _ := strings.Cut(p.Name, "/")
					if strings.HasPrefix(rest, "d0/f") {
						tops[top]++
					}
				}
				if len(tops) != 1 || tops[firstKey(tops)] != files/3 {
					t.Errorf("a listing saw d0 as %v", tops)
					return
				}
			}
		}()
		g.open()
		wg.Wait()
		stop.Store(true)
		readers.Wait()
		if wins.Load() != 1 {
			t.Fatalf("%d renames of the top won", wins.Load())
		}
		count := map[string][]string{}
		for _, p := range allPaths(t, s) {
			if strings.HasSuffix(p, "/") {
				continue
			}
			// Key by the leaf and the directory it was made in.
			parts := strings.Split(p, "/")
			leaf := parts[len(parts)-1]
			count[leaf] = append(count[leaf], p)
		}
		gone := map[string]bool{}
		for i, ok := range deleted {
			gone[fmt.Sprintf("f%02d", 2+3*i)] = ok
		}
		for i := 0; i < files; i++ {
			leaf := fmt.Sprintf("f%02d", i)
			want := 1
			if gone[leaf] {
				want = 0
			}
			if len(count[leaf]) != want {
				t.Fatalf("%s is there %d times (%v), want %d", leaf, len(count[leaf]), count[leaf], want)
			}
			if want == 1 {
				if got := readAll(t, s, count[leaf][0]); got != leaf {
					t.Fatalf("%s holds %q", count[leaf][0], got)
				}
			}
		}
		for i := 0; i < creates; i++ {
			leaf := fmt.Sprintf("new%d", i)
			want := 0
			if created[i] {
				want = 1
			}
			if len(count[leaf]) != want {
				t.Fatalf("created %s is there %d times (%v)", leaf, len(count[leaf]), count[leaf])
			}
		}
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
