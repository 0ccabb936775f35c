package blob

import (
	"context"
	"slices"
	"testing"
)

// TestHNSListBlobsAfterRename renames a directory on an account with a
// hierarchical namespace and lists blobs: the paths under it are listed
// under their new names, in name order, with prefixes, delimiters,
// markers and uncommitted blobs as on any account.
func TestHNSListBlobsAfterRename(t *testing.T) {
	s := newHNSBench(t)
	ctx := context.Background()
	for _, n := range []string{"a/b/c.txt", "a/b.txt", "a/b-x", "a/b/d/e", "top.txt"} {
		mustFile(t, s, n, []byte("x"))
	}
	if err := s.PutBlock(ctx, ref("a/b/staged"), "YmxvY2s=", Ingested{Segs: []Segment{{Len: 1, Data: []byte("y")}}, Size: 1}, Cond{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RenamePath(ctx, RenameRequest{Src: ref("a"), Dst: ref("z")}); err != nil {
		t.Fatal(err)
	}
	list := func(req ListBlobsRequest) ([]string, string) {
		t.Helper()
		items, next, err := s.ListBlobs(ctx, "acct", "fsys", req)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, it := range items {
			switch {
			case it.Prefix != "":
				names = append(names, it.Prefix)
			case it.Uncommitted:
				names = append(names, it.Blob.Name+"*")
			default:
				names = append(names, it.Blob.Name)
			}
		}
		return names, next
	}
	check := func(what string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %q, want %q", what, got, want)
		}
	}
	got, _ := list(ListBlobsRequest{Max: 100})
	check("flat", got, []string{"top.txt", "z", "z/b", "z/b-x", "z/b.txt", "z/b/c.txt", "z/b/d", "z/b/d/e"})
	got, _ = list(ListBlobsRequest{Max: 100, Prefix: "z/b", Uncommitted: true})
	check("prefix z/b", got, []string{"z/b", "z/b-x", "z/b.txt", "z/b/c.txt", "z/b/d", "z/b/d/e", "z/b/staged*"})
	got, _ = list(ListBlobsRequest{Max: 100, Prefix: "z/", Delimiter: "/"})
	check("delimiter", got, []string{"z/b", "z/b-x", "z/b.txt", "z/b/"})
	got, next := list(ListBlobsRequest{Max: 3, Prefix: "z/"})
	check("page 1", got, []string{"z/b", "z/b-x", "z/b.txt"})
	got, _ = list(ListBlobsRequest{Max: 3, Prefix: "z/", Marker: next})
	check("page 2", got, []string{"z/b/c.txt", "z/b/d", "z/b/d/e"})
	got, _ = list(ListBlobsRequest{Max: 100, Prefix: "a/"})
	check("old name", got, nil)
}
