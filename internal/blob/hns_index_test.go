package blob

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// indexedDirs checks that the name index of container c agrees with its
// directory records: every directory resolves through the index, its id
// names it back (fullName), and the index holds no other entry. It
// returns the directories.
func indexedDirs(t *testing.T, s *Service, c string) []string {
	t.Helper()
	var dirs []string
	err := s.eng.View(context.Background(), func(tx storage.Tx) error {
		// The container's records: its keys lie under the segments of
		// the homes of their directories (hns_container.go).
		var names []string
		err := containerKeys(tx, true, "acct", c, []byte{kindBlob}, func(k, v []byte) error {
			key := recordKey(k)
			if snap, _, _ := keyenc.ReadString(k[len(blobVersionsPrefix("acct", c, key)):]); snap != "" {
				return nil
			}
			in, name, err := fullPath(tx, "acct", c, key)
			if err != nil {
				return err
			}
			if in != c {
				t.Errorf("path %q of %s names container %s", name, c, in)
			}
			b, err := decodeBlobAt(v, name, "")
			if err != nil {
				return err
			}
			if b.IsDir() {
				names = append(names, name)
			}
			return nil
		})
		if err != nil {
			return err
		}
		ids := map[string]bool{}
		for _, d := range names {
			key, _, err := resolveKey(tx, "acct", c, d)
			if err != nil {
				t.Errorf("directory %q does not resolve: %v", d, err)
				continue
			}
			id, ok, err := dirIDOf(tx, "acct", c, key)
			if err != nil || !ok {
				t.Errorf("directory %q has no id (%v)", d, err)
				continue
			}
			if n, err := fullName(tx, "acct", c, key); err != nil || n != d {
				t.Errorf("key of %q names %q (%v)", d, n, err)
			}
			ids[id] = true
		}
		for _, kind := range []byte{kindDirID, kindDirName} {
			n := 0
			err := containerKeys(tx, true, "acct", c, []byte{kind}, func(k, v []byte) error {
				n++
				if kind == kindDirID && !ids[string(v)] {
					t.Errorf("index entry %q -> %s for no directory", recordKey(k), v)
				}
				return nil
			})
			if err != nil {
				return err
			}
			if n != len(names) {
				t.Errorf("%d entries of kind %c for %d directories", n, kind, len(names))
			}
		}
		sort.Strings(names)
		dirs = names
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestHNSIndexFollowsDirectories makes, renames and deletes directories
// through the dfs and Blob APIs on an account with a hierarchical
// namespace: after each step every directory, and nothing else, is in
// the name index under its current name.
func TestHNSIndexFollowsDirectories(t *testing.T) {
	onAllEngines(t, func(t *testing.T, s *Service) {
		s.UseHierarchicalNamespace(func(string) bool { return true })
		ctx := context.Background()
		step := func(what string, err error, want ...string) {
			t.Helper()
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			got := indexedDirs(t, s, "fsys")
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Fatalf("%s: directories %q, want %q", what, got, want)
			}
		}
		_, err := s.CreatePath(ctx, CreatePathRequest{Ref: ref("a/b/c"), Dir: true})
		step("create a/b/c", err, "a", "a/b", "a/b/c")
		mustFile(t, s, "a/b/c/f.txt", []byte("f"))
		mustFile(t, s, "a/g.txt", nil)
		step("files", nil, "a", "a/b", "a/b/c")
		_, err = s.PutBlob(ctx, PutBlobRequest{Ref: ref("x/y/z.txt"), Type: BlockBlob})
		step("blob x/y/z.txt", err, "a", "a/b", "a/b/c", "x", "x/y")
		_, err = s.PutBlob(ctx, PutBlobRequest{Ref: ref("x/d"), Type: BlockBlob, Meta: []KV{{FolderMeta, "true"}}})
		step("blob folder x/d", err, "a", "a/b", "a/b/c", "x", "x/y", "x/d")
		_, err = s.RenamePath(ctx, RenameRequest{Src: ref("a/b"), Dst: ref("x/y/b2")})
		step("rename a/b", err, "a", "x", "x/y", "x/y/b2", "x/y/b2/c", "x/d")
		if _, err := s.GetPath(ctx, ref("x/y/b2/c/f.txt"), Cond{}); err != nil {
			t.Fatal(err)
		}
		_, err = s.RenamePath(ctx, RenameRequest{Src: ref("x/y"), Dst: ref("x/d")})
		step("rename x/y over empty x/d", err, "a", "x", "x/d", "x/d/b2", "x/d/b2/c")
		err = s.DeleteBlob(ctx, ref("a/g.txt"), "", Cond{})
		step("delete a/g.txt", err, "a", "x", "x/d", "x/d/b2", "x/d/b2/c")
		err = s.DeleteBlob(ctx, ref("a"), "", Cond{})
		step("blob delete of empty a", err, "x", "x/d", "x/d/b2", "x/d/b2/c")
		_, err = s.DeletePath(ctx, ref("x/d"), true, "", Cond{})
		step("recursive delete of x/d", err, "x")
		_, err = s.CreatePath(ctx, CreatePathRequest{Ref: ref("x/d/e"), Dir: true})
		step("make x/d/e again", err, "x", "x/d", "x/d/e")
		// To another filesystem: the subtree's entries go along.
		if _, err := s.CreateContainer(ctx, "acct", "other", nil, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreatePath(ctx, CreatePathRequest{Ref: Ref{Account: "acct", Container: "other", Name: "p"}, Dir: true}); err != nil {
			t.Fatal(err)
		}
		_, err = s.RenamePath(ctx, RenameRequest{Src: ref("x/d"), Dst: Ref{Account: "acct", Container: "other", Name: "p/d"}})
		step("rename x/d to another filesystem", err, "x")
		if got, want := indexedDirs(t, s, "other"), []string{"p", "p/d", "p/d/e"}; !slices.Equal(got, want) {
			t.Fatalf("other filesystem: %q, want %q", got, want)
		}
		if err := s.DeleteContainer(ctx, "acct", "fsys", Cond{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateContainer(ctx, "acct", "fsys", nil, ""); err != nil {
			t.Fatal(err)
		}
		step("container made again", nil)
	})
}

// TestHNSIndexRecursiveDeleteInBatches deletes a directory larger than
// one batch: the index loses the directories with their records, batch
// by batch, and nothing is left when the directory is gone.
func TestHNSIndexRecursiveDeleteInBatches(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a directory of more than DeleteBatch paths")
	}
	onHNSEngines(t, func(t *testing.T, s *Service) {
		s.UseHierarchicalNamespace(func(string) bool { return true })
		ctx := context.Background()
		for i := 0; i < 3; i++ {
			if _, err := s.CreatePath(ctx, CreatePathRequest{Ref: ref(fmt.Sprintf("top/d%d/e", i)), Dir: true}); err != nil {
				t.Fatal(err)
			}
		}
		err := s.eng.Update(ctx, func(tx storage.Tx) error {
			now := s.now()
			for i := 0; i < DeleteBatch; i++ {
				name := fmt.Sprintf("top/d1/f%05d", i)
				k, err := s.keyOf(tx, "acct", "fsys", name)
				if err != nil {
					return err
				}
				b := &Blob{Name: name, Type: BlockBlob, Created: now, Modified: now, key: k}
				b.replacing(nil)
				if err := putBlob(tx, "acct", "fsys", b); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		next, err := s.DeletePath(ctx, ref("top"), true, "", Cond{})
		if err != nil || next == "" {
			t.Fatalf("first batch: %q %v", next, err)
		}
		got := indexedDirs(t, s, "fsys")
		if !slices.Contains(got, "top") || strings.Contains(strings.Join(got, " "), "top/d0") {
			t.Fatalf("after the first batch: %q", got)
		}
		for next != "" {
			if next, err = s.DeletePath(ctx, ref("top"), true, next, Cond{}); err != nil {
				t.Fatal(err)
			}
		}
		if got := indexedDirs(t, s, "fsys"); len(got) != 0 {
			t.Fatalf("left: %q", got)
		}
	})
}

// TestHNSIndexSoftDelete deletes an empty directory and a container with
// soft delete on: the directory leaves the index with its record and
// comes back with it (Undelete Blob), and a restored container brings
// its index back.
func TestHNSIndexSoftDelete(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		s.UseHierarchicalNamespace(func(string) bool { return true })
		s.UseContainerRetention(func(string) int { return 2 })
		ctx := context.Background()
		if err := s.SetServiceProps(ctx, "acct", &ServiceProps{XML: []byte(retainOneDay)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreatePath(ctx, CreatePathRequest{Ref: ref("a/b"), Dir: true}); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteBlob(ctx, ref("a/b"), "", Cond{}); err != nil {
			t.Fatal(err)
		}
		if got := indexedDirs(t, s, "fsys"); !slices.Equal(got, []string{"a"}) {
			t.Fatalf("after the delete: %q", got)
		}
		if err := s.Undelete(ctx, ref("a/b")); err != nil {
			t.Fatal(err)
		}
		if got := indexedDirs(t, s, "fsys"); !slices.Equal(got, []string{"a", "a/b"}) {
			t.Fatalf("after the undelete: %q", got)
		}
		if err := s.DeleteContainer(ctx, "acct", "fsys", Cond{}); err != nil {
			t.Fatal(err)
		}
		ds, err := s.ListDeletedContainers(ctx, "acct", "")
		if err != nil || len(ds) != 1 {
			t.Fatalf("deleted containers: %v %v", ds, err)
		}
		if _, err := s.RestoreContainer(ctx, "acct", "fsys", ds[0].Version); err != nil {
			t.Fatal(err)
		}
		if got := indexedDirs(t, s, "fsys"); !slices.Equal(got, []string{"a", "a/b"}) {
			t.Fatalf("after the restore: %q", got)
		}
	})
}
