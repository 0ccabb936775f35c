package blob

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

func versionedService(t *testing.T) (*Service, *clock) {
	t.Helper()
	s, clk := newService(t)
	s.UseVersioning(func(acct string) bool { return acct == "acct" })
	return s, clk
}

// versionsOf lists the versions of name, oldest first, the current one
// (if any) last, as content@id strings.
func versionsOf(t *testing.T, s *Service, name string) (out []string, current string) {
	t.Helper()
	for _, it := range listAll(t, s, ListBlobsRequest{Versions: true, Prefix: name}) {
		b := it.Blob
		if id, ok := VersionOf(b.Snapshot); ok {
			out = append(out, blobText(t, s, Ref{Account: "acct", Container: "cont", Name: name, Snapshot: VersionKey(id)}))
			continue
		}
		current = b.VersionID
		out = append(out, blobText(t, s, Ref{Account: "acct", Container: "cont", Name: name, Snapshot: ""})+"*")
	}
	return out, current
}

// TestVersionsKeepEveryWrite: Put Blob, Put Block List, Copy and Set
// Blob Metadata each make a version; reads, tier and delete reach one
// version; deleting the blob keeps its versions; copying a version over
// the blob promotes it; writes to a version are refused.
func TestVersionsKeepEveryWrite(t *testing.T) {
	s, clk := versionedService(t)
	ctx := context.Background()
	ref := Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: ""}
	v1 := put(t, s, "b", "one", Cond{}).VersionID
	clk.add(time.Second)
	v2 := put(t, s, "b", "two", Cond{}).VersionID
	clk.add(time.Second)
	b3, err := s.SetBlobMetadata(ctx, ref, []KV{{"m", "3"}}, Cond{})
	if err != nil {
		t.Fatal(err)
	}
	if v1 == "" || !(v1 < v2 && v2 < b3.VersionID) {
		t.Fatalf("version ids %q %q %q", v1, v2, b3.VersionID)
	}
	got, cur := versionsOf(t, s, "b")
	if fmt.Sprint(got) != "[one two two*]" || cur != b3.VersionID {
		t.Fatalf("versions %v, current %s", got, cur)
	}
	// The version Set Blob Metadata replaced has the old metadata.
	old, err := s.GetBlob(ctx, Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: VersionKey(v2)}, Cond{}, "")
	if err != nil || len(old.Meta) != 0 || old.VersionID != v2 {
		t.Fatalf("version %s: %+v, %v", v2, old, err)
	}
	// versionid= of the current version reads the blob.
	if c := blobText(t, s, Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: VersionKey(b3.VersionID)}); c != "two" {
		t.Fatalf("current version reads %q", c)
	}
	in, _ := s.Ingest(ctx, bytes.NewReader([]byte("x")), true, nil)
	_, err = s.PutBlob(ctx, PutBlobRequest{Ref: Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: VersionKey(v1)}, Type: BlockBlob, Data: in})
	mustCode(t, err, azerr.InvalidOperation)
	_, err = s.SetBlobMetadata(ctx, Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: VersionKey(v1)}, nil, Cond{})
	mustCode(t, err, azerr.InvalidOperation)
	if _, err := s.SetTier(ctx, Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: VersionKey(v1)}, "Cool", "", Cond{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := s.GetBlob(ctx, Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: VersionKey(v1)}, Cond{}, ""); b.AccessTier != "Cool" {
		t.Fatalf("version tier %q", b.AccessTier)
	}
	// Deleting the blob leaves every version, the last one included.
	clk.add(time.Second)
	kept, err := s.DeleteBlobKept(ctx, ref, "", Cond{})
	if err != nil || !kept {
		t.Fatalf("delete: kept %v, %v", kept, err)
	}
	if _, err := s.GetBlob(ctx, ref, Cond{}, ""); !isCode(err, azerr.BlobNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	got, cur = versionsOf(t, s, "b")
	if fmt.Sprint(got) != "[one two two]" || cur != "" {
		t.Fatalf("after delete: %v, current %q", got, cur)
	}
	if items := listAll(t, s, ListBlobsRequest{}); len(items) != 0 {
		t.Fatalf("listed %d blobs without include=versions", len(items))
	}
	// Promote the first version: a copy over the blob.
	clk.add(time.Second)
	p, err := s.CopyBlob(ctx, CopyRequest{Dst: ref, Src: Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: VersionKey(v1)}, SourceURL: "u"}, "copy")
	if err != nil {
		t.Fatal(err)
	}
	if p.VersionID <= b3.VersionID {
		t.Fatalf("promoted version %s not after %s", p.VersionID, b3.VersionID)
	}
	got, _ = versionsOf(t, s, "b")
	if fmt.Sprint(got) != "[one two two one*]" {
		t.Fatalf("after promote: %v", got)
	}
	// Deleting one version removes it alone.
	if err := s.DeleteBlob(ctx, Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: VersionKey(v2)}, "", Cond{}); err != nil {
		t.Fatal(err)
	}
	got, _ = versionsOf(t, s, "b")
	if fmt.Sprint(got) != "[one two one*]" {
		t.Fatalf("after deleting a version: %v", got)
	}
	// Versions are no snapshots: Delete Blob needs no x-ms-delete-snapshots.
	if err := s.DeleteBlob(ctx, ref, "", Cond{}); err != nil {
		t.Fatal(err)
	}
}

// TestVersionsOffByDefault: without versioning writes carry no version id
// and nothing is kept.
func TestVersionsOffByDefault(t *testing.T) {
	s, _ := newService(t)
	if v := put(t, s, "b", "one", Cond{}).VersionID; v != "" {
		t.Fatalf("version id %q with versioning off", v)
	}
	put(t, s, "b", "two", Cond{})
	if items := listAll(t, s, ListBlobsRequest{Versions: true}); len(items) != 1 {
		t.Fatalf("listed %d items", len(items))
	}
}

// TestVersionsConcurrentWritersLoseNothing: writers racing Put Blob on
// one name each get a version of their own; every write is kept, with
// distinct increasing ids, and exactly one is current.
func TestVersionsConcurrentWritersLoseNothing(t *testing.T) {
	s, _ := versionedService(t)
	ctx := context.Background()
	const writers = 32
	var wg sync.WaitGroup
	ids := make([]string, writers)
	errs := make([]error, writers)
	for i := range writers {
		wg.Go(func() {
			in, err := s.Ingest(ctx, bytes.NewReader([]byte(fmt.Sprintf("w%02d", i))), true, nil)
			if err == nil {
				var b *Blob
				if b, err = s.PutBlob(ctx, PutBlobRequest{Ref: Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: ""}, Type: BlockBlob, Data: in}); err == nil {
					ids[i] = b.VersionID
				}
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	items := listAll(t, s, ListBlobsRequest{Versions: true})
	if len(items) != writers {
		t.Fatalf("%d versions for %d writes", len(items), writers)
	}
	seen, listed := map[string]bool{}, map[string]bool{}
	prev := ""
	for i, it := range items {
		id, ok := VersionOf(it.Blob.Snapshot)
		if !ok {
			if i != writers-1 {
				t.Fatalf("current version listed at %d", i)
			}
			id = it.Blob.VersionID
		}
		if id <= prev {
			t.Fatalf("version ids out of order: %s after %s", id, prev)
		}
		prev = id
		listed[id] = true
		seen[blobText(t, s, Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: VersionKey(id)})] = true
	}
	if len(seen) != writers {
		t.Fatalf("%d distinct contents for %d writes", len(seen), writers)
	}
	for _, id := range ids {
		if !listed[id] {
			t.Fatalf("version %s a writer was answered is not listed", id)
		}
	}
}
