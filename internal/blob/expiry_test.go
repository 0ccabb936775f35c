package blob

import (
	"context"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

// TestExpiredBlobIsPurged: a blob past its Set Blob Expiry time reads as
// absent at once, and the purge removes its record and index entry; an
// index entry whose blob was given another expiry since leaves it alone.
func TestExpiredBlobIsPurged(t *testing.T) {
	s, clk := newService(t)
	s.UseHierarchicalNamespace(func(string) bool { return true })
	ctx := context.Background()
	put(t, s, "gone", "data", Cond{})
	put(t, s, "kept", "data", Cond{})
	gone, kept := Ref{Account: "acct", Container: "cont", Name: "gone", Snapshot: ""}, Ref{Account: "acct", Container: "cont", Name: "kept", Snapshot: ""}
	if _, err := s.SetExpiry(ctx, gone, ExpiryRequest{Option: ExpiryRelativeToNow, After: time.Hour}, Cond{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetExpiry(ctx, kept, ExpiryRequest{Option: ExpiryRelativeToNow, After: time.Hour}, Cond{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetExpiry(ctx, kept, ExpiryRequest{Option: ExpiryNever}, Cond{}); err != nil {
		t.Fatal(err)
	}
	clk.add(time.Hour)
	_, err := s.GetBlobProperties(ctx, gone, Cond{}, "")
	mustCode(t, err, azerr.BlobNotFound)
	if n := countKind(t, s, kindBlob); n != 2 {
		t.Fatalf("%d blob records before the purge", n)
	}
	if err := s.PurgeExpired(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countKind(t, s, kindBlob); n != 1 {
		t.Fatalf("%d blob records after the purge, want 1", n)
	}
	if n := countKind(t, s, kindBlobExpiry); n != 0 {
		t.Fatalf("%d expiry entries after the purge", n)
	}
	if got := blobText(t, s, kept); got != "data" {
		t.Fatalf("kept blob reads %q", got)
	}
}

// TestRenamedBlobIsPurged: a file renamed after Set Blob Expiry, by its
// own name or with its directory into another filesystem, is still
// purged when its time comes (the purge finds it through its expiry
// entry, which moves with its record).
func TestRenamedBlobIsPurged(t *testing.T) {
	s, clk := newService(t)
	s.UseHierarchicalNamespace(func(string) bool { return true })
	ctx := context.Background()
	if _, err := s.CreateContainer(ctx, "acct", "other", nil, ""); err != nil {
		t.Fatal(err)
	}
	put(t, s, "a/f", "data", Cond{})
	put(t, s, "b/g", "data", Cond{})
	for _, name := range []string{"a/f", "b/g"} {
		if _, err := s.SetExpiry(ctx, Ref{Account: "acct", Container: "cont", Name: name}, ExpiryRequest{Option: ExpiryRelativeToNow, After: time.Hour}, Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.RenamePath(ctx, RenameRequest{Src: Ref{Account: "acct", Container: "cont", Name: "a/f"}, Dst: Ref{Account: "acct", Container: "cont", Name: "a/f2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RenamePath(ctx, RenameRequest{Src: Ref{Account: "acct", Container: "cont", Name: "b"}, Dst: Ref{Account: "acct", Container: "other", Name: "b"}}); err != nil {
		t.Fatal(err)
	}
	clk.add(time.Hour)
	if err := s.PurgeExpired(ctx); err != nil {
		t.Fatal(err)
	}
	// Left: the directories a and b.
	if n := countKind(t, s, kindBlob); n != 2 {
		t.Fatalf("%d blob records after the purge, want 2 (the directories)", n)
	}
	if n := countKind(t, s, kindBlobExpiry); n != 0 {
		t.Fatalf("%d expiry entries after the purge", n)
	}
}
