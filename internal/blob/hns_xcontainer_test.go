package blob

import (
	"context"
	"slices"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// TestHNSMovedTreeBelongsToItsFilesystem moves a directory made in fsys
// to fsys2 (its paths keep their keys, under fsys's segment) and checks
// that everything that goes by container follows the paths, not their
// keys: listing, tag search (whole account, and one container, through
// the tag index and a full scan), container soft delete and restore,
// and container delete of the old home and of the new one.
func TestHNSMovedTreeBelongsToItsFilesystem(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		s.UseHierarchicalNamespace(func(string) bool { return true })
		ctx := context.Background()
		if _, err := s.CreateContainer(ctx, "acct", "fsys2", nil, ""); err != nil {
			t.Fatal(err)
		}
		at := func(c, name string) Ref { return Ref{Account: "acct", Container: c, Name: name} }
		for _, n := range []string{"top/a", "top/sub/b", "top/sub/deep/c", "stay"} {
			mustFile(t, s, n, []byte(n))
		}
		if err := s.SetTags(ctx, ref("top/sub/b"), []KV{{"t", "1"}}, Cond{}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetTags(ctx, ref("stay"), []KV{{"t", "1"}}, Cond{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RenamePath(ctx, RenameRequest{Src: ref("top"), Dst: at("fsys2", "moved")}); err != nil {
			t.Fatal(err)
		}
		// A directory made under the moved one gets fsys2 as its home.
		if _, err := s.CreatePath(ctx, CreatePathRequest{Ref: at("fsys2", "moved/sub/new"), Dir: true}); err != nil {
			t.Fatal(err)
		}
		list := func(c string) []string {
			t.Helper()
			ps, _, err := s.ListPaths(ctx, "acct", c, ListPathsRequest{Recursive: true})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range ps {
				names = append(names, p.Name)
			}
			return names
		}
		want2 := []string{"moved", "moved/a", "moved/sub", "moved/sub/b", "moved/sub/deep", "moved/sub/deep/c", "moved/sub/new"}
		if got := list("fsys2"); !slices.Equal(got, want2) {
			t.Fatalf("fsys2 lists %q, want %q", got, want2)
		}
		if got := list("fsys"); !slices.Equal(got, []string{"stay"}) {
			t.Fatalf("fsys lists %q", got)
		}
		indexDirs := func(c string, want ...string) {
			t.Helper()
			if got := indexedDirs(t, s, c); !slices.Equal(got, want) {
				t.Errorf("%s: directories %q, want %q", c, got, want)
			}
		}
		indexDirs("fsys")
		indexDirs("fsys2", "moved", "moved/sub", "moved/sub/deep", "moved/sub/new")
		for _, expr := range []string{`"t"='1'`, `"t">='1'`} { // indexed, scanned
			for _, c := range []string{"", "fsys", "fsys2"} {
				found, _, err := s.FindBlobs(ctx, "acct", c, expr, "", 10)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, f := range found {
					got = append(got, f.Container+"/"+f.Name)
				}
				slices.Sort(got)
				want := map[string][]string{"": {"fsys/stay", "fsys2/moved/sub/b"}, "fsys": {"fsys/stay"}, "fsys2": {"fsys2/moved/sub/b"}}[c]
				if !slices.Equal(got, want) {
					t.Errorf("find %s in %q: %q, want %q", expr, c, got, want)
				}
			}
		}
		// Soft delete and restore of fsys2 take the moved tree along.
		s.UseContainerRetention(func(string) int { return 1 })
		if err := s.DeleteContainer(ctx, "acct", "fsys2", Cond{}); err != nil {
			t.Fatal(err)
		}
		if got := list("fsys"); !slices.Equal(got, []string{"stay"}) {
			t.Fatalf("fsys lists %q after fsys2's soft delete", got)
		}
		del, err := s.ListDeletedContainers(ctx, "acct", "fsys2")
		if err != nil || len(del) != 1 {
			t.Fatalf("deleted containers %v (%v)", del, err)
		}
		if _, err := s.RestoreContainer(ctx, "acct", "fsys2", del[0].Version); err != nil {
			t.Fatal(err)
		}
		if got := list("fsys2"); !slices.Equal(got, want2) {
			t.Fatalf("fsys2 lists %q after its restore, want %q", got, want2)
		}
		s.UseContainerRetention(func(string) int { return 0 })
		// Deleting the home leaves the moved tree whole.
		if err := s.DeleteContainer(ctx, "acct", "fsys", Cond{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateContainer(ctx, "acct", "fsys", nil, ""); err != nil {
			t.Fatal(err)
		}
		if got := list("fsys"); len(got) != 0 {
			t.Fatalf("a new fsys lists %q", got)
		}
		if got := list("fsys2"); !slices.Equal(got, want2) {
			t.Fatalf("fsys2 lists %q after fsys's delete, want %q", got, want2)
		}
		for _, n := range []string{"moved/a", "moved/sub/b", "moved/sub/deep/c"} {
			if _, err := s.GetPath(ctx, at("fsys2", n), Cond{}); err != nil {
				t.Fatalf("%s after fsys's delete: %v", n, err)
			}
		}
		// Deleting fsys2 (and the new fsys) leaves no path record in
		// the account.
		for _, c := range []string{"fsys2", "fsys"} {
			if err := s.DeleteContainer(ctx, "acct", c, Cond{}); err != nil {
				t.Fatal(err)
			}
		}
		err = s.eng.View(ctx, func(tx storage.Tx) error {
			for _, kind := range containerKinds {
				p := tupleKey(kind, "acct")
				it := tx.Scan(p, keyenc.PrefixEnd(p), false)
				for it.Next() {
					t.Errorf("kind %c: %q left", kind, it.Key())
				}
				it.Close()
			}
			p := tagIndexPrefix("acct", "t", "1")
			it := tx.Scan(p, keyenc.PrefixEnd(p), false)
			for it.Next() {
				t.Errorf("tag entry %q left", it.Key())
			}
			it.Close()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
