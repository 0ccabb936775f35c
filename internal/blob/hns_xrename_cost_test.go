package blob

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
)

// TestHNSRenameAcrossFilesystemsCostBounded renames a directory with 10
// and with 1,000 descendants into another filesystem of the account: the
// engine reads and writes the same keys for both, as for a rename within
// one filesystem.
func TestHNSRenameAcrossFilesystemsCostBounded(t *testing.T) {
	var got [2]keyCounts
	for i, n := range []int{10, 1000} {
		e := memstore.New()
		s := newHNSService(e)
		ctx := context.Background()
		for _, c := range []string{"fsys", "fsys2"} {
			if _, err := s.CreateContainer(ctx, "acct", c, nil, ""); err != nil {
				t.Fatal(err)
			}
		}
		files := seedTree(t, s, "one", n)
		cs := New(countingEngine{e, &got[i]}, time.Now, s.newID)
		cs.UseHierarchicalNamespace(s.namespace)
		dst := Ref{Account: "acct", Container: "fsys2", Name: "two"}
		if _, err := cs.RenamePath(ctx, RenameRequest{Src: ref("one"), Dst: dst}); err != nil {
			t.Fatal(err)
		}
		last := Ref{Account: "acct", Container: "fsys2", Name: "two" + strings.TrimPrefix(files[len(files)-1], "one")}
		if _, err := s.GetPath(ctx, last, Cond{}); err != nil {
			t.Fatalf("%d descendants: %s after the rename: %v", n, last.Name, err)
		}
		if _, err := s.GetPath(ctx, ref(files[len(files)-1]), Cond{}); err == nil {
			t.Fatalf("%d descendants: %s still in the source filesystem", n, files[len(files)-1])
		}
	}
	if got[0] != got[1] {
		t.Fatalf("keys read/written: %+v with 10 descendants, %+v with 1,000", got[0], got[1])
	}
}
