package blob

import (
	"context"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/guid"
)

// No page blob comes to be on an account with a hierarchical namespace,
// not even as the copy of one from an account without (409
// BlobOperationNotSupported); the account without keeps its page blobs.
func TestNoPageBlobOnHNSAccount(t *testing.T) {
	ctx := context.Background()
	s := New(memstore.New(), time.Now, guid.NewString)
	s.UseHierarchicalNamespace(func(acct string) bool { return acct == "lake" })
	for _, a := range []string{"lake", "flat"} {
		if _, err := s.CreateContainer(ctx, a, "cont", nil, ""); err != nil {
			t.Fatal(err)
		}
	}
	disk := func(acct string) Ref { return Ref{Account: acct, Container: "cont", Name: "disk.vhd"} }
	if _, err := s.PutBlob(ctx, PutBlobRequest{Ref: disk("flat"), Type: PageBlob, PageSize: 512}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutBlob(ctx, PutBlobRequest{Ref: disk("lake"), Type: PageBlob, PageSize: 512}); code(err) != "BlobOperationNotSupported" {
		t.Fatalf("page blob on lake: %v", err)
	}
	if _, err := s.CopyBlob(ctx, CopyRequest{Src: disk("flat"), Dst: disk("lake"), SourceURL: "http://flat/cont/disk.vhd"}, "copy-1"); code(err) != "BlobOperationNotSupported" {
		t.Fatalf("copy of a page blob to lake: %v", err)
	}
	if _, err := s.GetBlobProperties(ctx, disk("lake"), Cond{}, ""); code(err) != "BlobNotFound" {
		t.Fatalf("lake/disk.vhd: %v", err)
	}
	if _, err := s.CopyBlob(ctx, CopyRequest{Src: disk("flat"), Dst: Ref{Account: "flat", Container: "cont", Name: "copy.vhd"}, SourceURL: "http://flat/cont/disk.vhd"}, "copy-2"); err != nil {
		t.Fatalf("copy within flat: %v", err)
	}
}
