package blob

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestHNSRenameAcrossFilesystemsRace races renames of a directory from
// fsys to fsys2 with renames of a directory under it back to fsys,
// creates and deletes of files under it and readers of both
// filesystems, on every engine. Exactly one rename of the top wins;
// every file is afterwards in one filesystem once (or gone, when its
// delete won), with its content; a created file is there once when its
// create succeeded; and no pair of listings taken in one instant sees
// the untouched files in both filesystems or in neither.
func TestHNSRenameAcrossFilesystemsRace(t *testing.T) {
	onAllEngines(t, func(t *testing.T, s *Service) {
		s.UseHierarchicalNamespace(func(string) bool { return true })
		ctx := context.Background()
		if _, err := s.CreateContainer(ctx, "acct", "fsys2", nil, ""); err != nil {
			t.Fatal(err)
		}
		const files = 24
		for i := 0; i < files; i++ {
			mustFile(t, s, fmt.Sprintf("top/d%d/f%02d", i%3, i), []byte(fmt.Sprintf("f%02d", i)))
		}
		at := func(c, name string) Ref { return Ref{Account: "acct", Container: c, Name: name} }
		retry := func(f func() error) error {
			for {
				if err := f(); code(err) != "ServerBusy" {
					return err
				}
			}
		}
		// d0 only gains files and d2 only loses some; d1 moves back to
		// fsys once the top has moved.
		const tops, creates, deletes = 4, 4, 2
		g := newGate(tops + 1 + creates + deletes + 1)
		var wins atomic.Int32
		var backErr error
		created := make([]bool, creates)
		deleted := make([]bool, deletes)
		var wg sync.WaitGroup
		for i := 0; i < tops; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				g.wait()
				_, err := s.RenamePath(ctx, RenameRequest{Src: at("fsys", "top"), Dst: at("fsys2", "top")})
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
			// Until the top has moved there is no fsys2/top/d1.
			for {
				_, backErr = s.RenamePath(ctx, RenameRequest{Src: at("fsys2", "top/d1"), Dst: at("fsys", "back")})
				if c := code(backErr); c != "ServerBusy" && c != "SourcePathNotFound" {
					return
				}
			}
		}()
		for i := 0; i < creates; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				g.wait()
				err := retry(func() error {
					_, err := s.CreatePath(ctx, CreatePathRequest{Ref: at("fsys", fmt.Sprintf("top/d0/new%d", i))})
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
					_, err := s.DeletePath(ctx, at("fsys", fmt.Sprintf("top/d2/f%02d", 2+3*i)), false, "", Cond{})
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
				// fsys before fsys2: the top only moves to fsys2, so
				// its untouched files are seen once or twice, never
				// not at all.
				seen := 0
				for _, c := range []string{"fsys", "fsys2"} {
					ps, _, err := s.ListPaths(ctx, "acct", c, ListPathsRequest{Recursive: true})
					if code(err) == "ServerBusy" {
						seen = -1
						break
					}
					if err != nil {
						t.Error(err)
						return
					}
					for _, p := range ps {
						if strings.HasPrefix(p.Name, "top/d0/f") {
							seen++
						}
					}
				}
				if seen != -1 && seen != files/3 && seen != 2*files/3 {
					t.Errorf("listings saw %d of the %d files of d0", seen, files/3)
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
		if backErr != nil {
			t.Fatalf("rename of d1 back: %v", backErr)
		}
		where := map[string][]Ref{}
		for _, c := range []string{"fsys", "fsys2"} {
			ps, next, err := s.ListPaths(ctx, "acct", c, ListPathsRequest{Recursive: true})
			if err != nil || next != "" {
				t.Fatalf("list %s: %v, continuation %q", c, err, next)
			}
			for _, p := range ps {
				if !p.Dir {
					parts := strings.Split(p.Name, "/")
					leaf := parts[len(parts)-1]
					where[leaf] = append(where[leaf], at(c, p.Name))
				}
			}
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
			if len(where[leaf]) != want {
				t.Fatalf("%s is there %d times (%v), want %d", leaf, len(where[leaf]), where[leaf], want)
			}
			if want == 0 {
				continue
			}
			r := where[leaf][0]
			if i%3 == 1 && (r.Container != "fsys" || r.Name != "back/"+leaf) {
				t.Fatalf("%s of d1 is at %v, want fsys back/%s", leaf, r, leaf)
			}
			if got := readRef(t, s, r); got != leaf {
				t.Fatalf("%v holds %q", r, got)
			}
		}
		for i := 0; i < creates; i++ {
			leaf := fmt.Sprintf("new%d", i)
			want := 0
			if created[i] {
				want = 1
			}
			if len(where[leaf]) != want {
				t.Fatalf("created %s is there %d times (%v)", leaf, len(where[leaf]), where[leaf])
			}
		}
		// The name index of each filesystem agrees with its directories.
		indexedDirs(t, s, "fsys")
		indexedDirs(t, s, "fsys2")
	})
}

// readRef is the content of the file r.
func readRef(tb testing.TB, s *Service, r Ref) string {
	tb.Helper()
	b, err := s.GetBlob(context.Background(), r, Cond{}, "")
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	rc := s.Open(context.Background(), b, 0, b.Size)
	defer rc.Close()
	if _, err := io.Copy(&buf, rc); err != nil {
		tb.Fatal(err)
	}
	return buf.String()
}
