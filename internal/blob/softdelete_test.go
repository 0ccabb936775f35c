package blob

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/storage"
)

const retainOneDay = `<StorageServiceProperties><DeleteRetentionPolicy><Enabled>true</Enabled><Days>1</Days><AllowPermanentDelete>true</AllowPermanentDelete></DeleteRetentionPolicy></StorageServiceProperties>`

func softService(t *testing.T) (*Service, *clock) {
	t.Helper()
	s, clk := newService(t)
	if err := s.SetServiceProps(context.Background(), "acct", &ServiceProps{XML: []byte(retainOneDay)}); err != nil {
		t.Fatal(err)
	}
	return s, clk
}

// blobText reads a blob or snapshot whole.
func blobText(t *testing.T, s *Service, ref Ref) string {
	t.Helper()
	b, err := s.GetBlob(context.Background(), ref, Cond{}, "")
	if err != nil {
		t.Fatalf("get %v: %v", ref, err)
	}
	rc := s.Open(context.Background(), b, 0, b.Size)
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func listAll(t *testing.T, s *Service, req ListBlobsRequest) []ListItem {
	t.Helper()
	req.Max = MaxListResults
	items, _, err := s.ListBlobs(context.Background(), "acct", "cont", req)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

func countKind(t *testing.T, s *Service, kind byte) int {
	t.Helper()
	n := 0
	err := s.eng.View(context.Background(), func(tx storage.Tx) error {
		it := tx.Scan([]byte{kind}, []byte{kind + 1}, false)
		defer it.Close()
		for it.Next() {
			n++
		}
		return it.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSoftDeleteUndeleteRestoresEverything: with a retention policy a
// deleted blob of each type, with its snapshots, is gone for readers,
// listed with include=deleted, and Undelete Blob brings back content,
// metadata, properties and snapshots.
func TestSoftDeleteUndeleteRestoresEverything(t *testing.T) {
	s, clk := softService(t)
	ctx := context.Background()
	big := bytes.Repeat([]byte("0123456789abcdef"), 8<<10) // chunked, not inline
	in, err := s.Ingest(ctx, bytes.NewReader(big), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	blockRef := Ref{Account: "acct", Container: "cont", Name: "block", Snapshot: ""}
	if _, err := s.PutBlob(ctx, PutBlobRequest{Ref: blockRef, Type: BlockBlob, Data: in, Meta: []KV{{"k", "v"}}, Props: Props{ContentType: "text/x"}}); err != nil {
		t.Fatal(err)
	}
	appendRef := Ref{Account: "acct", Container: "cont", Name: "log", Snapshot: ""}
	if _, err := s.PutBlob(ctx, PutBlobRequest{Ref: appendRef, Type: AppendBlob}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		in, _ := s.Ingest(ctx, bytes.NewReader([]byte(fmt.Sprintf("line %d\n", i))), true, nil)
		if _, _, err := s.AppendBlock(ctx, appendRef, AppendRequest{Data: in}); err != nil {
			t.Fatal(err)
		}
	}
	pageRef := Ref{Account: "acct", Container: "cont", Name: "disk", Snapshot: ""}
	if _, err := s.PutBlob(ctx, PutBlobRequest{Ref: pageRef, Type: PageBlob, PageSize: 4096}); err != nil {
		t.Fatal(err)
	}
	pg, _ := s.Ingest(ctx, bytes.NewReader(bytes.Repeat([]byte{7}, 512)), true, nil)
	if _, err := s.PutPage(ctx, pageRef, PutPageRequest{Start: 1024, End: 1535, Data: pg}); err != nil {
		t.Fatal(err)
	}
	snap, err := s.SnapshotBlob(ctx, blockRef, nil, Cond{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, r := range []Ref{blockRef, appendRef, pageRef} {
		want[r.Name] = blobText(t, s, r)
	}
	clk.add(time.Hour)
	mustCode(t, s.DeleteBlob(ctx, blockRef, "", Cond{}), azerr.SnapshotsPresent)
	kept, err := s.DeleteBlobKept(ctx, blockRef, "include", Cond{})
	if err != nil || !kept {
		t.Fatalf("delete: kept %v, %v", kept, err)
	}
	for _, r := range []Ref{appendRef, pageRef} {
		if err := s.DeleteBlob(ctx, r, "", Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.GetBlob(ctx, blockRef, Cond{}, ""); !isCode(err, azerr.BlobNotFound) {
		t.Fatalf("get after soft delete: %v", err)
	}
	if items := listAll(t, s, ListBlobsRequest{Snapshots: true}); len(items) != 0 {
		t.Fatalf("listed %d deleted items without include=deleted", len(items))
	}
	items := listAll(t, s, ListBlobsRequest{Snapshots: true, Deleted: true})
	var got []string
	for _, it := range items {
		if it.Deleted == nil {
			t.Fatalf("%s listed as live", it.Blob.Name)
		}
		if d := it.Deleted.RemainingDays(clk.now()); d != 1 || !it.Deleted.Time.Equal(clk.now()) {
			t.Fatalf("%s: deleted %v, %d days left", it.Blob.Name, it.Deleted.Time, d)
		}
		got = append(got, it.Blob.Name+"@"+it.Blob.Snapshot)
	}
	if fmt.Sprint(got) != fmt.Sprint([]string{"block@" + snap.Snapshot, "block@", "disk@", "log@"}) {
		t.Fatalf("listed %v", got)
	}
	for _, kind := range []byte{kindAppend, kindPage} {
		if n := countKind(t, s, kind); n != 0 {
			t.Fatalf("%d extents of kind %c left behind live keys", n, kind)
		}
	}
	marked := map[storage.ChunkRef]bool{}
	if err := MarkChunks(ctx, s.eng, func(r storage.ChunkRef) { marked[r] = true }); err != nil {
		t.Fatal(err)
	}
	if !marked[in.Segs[0].Ref] {
		t.Fatal("the chunk of a soft-deleted blob is not marked")
	}
	for _, r := range []Ref{blockRef, appendRef, pageRef} {
		if err := s.Undelete(ctx, r); err != nil {
			t.Fatal(err)
		}
		if c := blobText(t, s, r); c != want[r.Name] {
			t.Fatalf("%s restored with %d bytes, want %d", r.Name, len(c), len(want[r.Name]))
		}
	}
	b, err := s.GetBlob(ctx, blockRef, Cond{}, "")
	if err != nil || fmt.Sprint(b.Meta) != "[[k v]]" || b.Props.ContentType != "text/x" {
		t.Fatalf("restored %+v, %v", b, err)
	}
	if c := blobText(t, s, Ref{Account: "acct", Container: "cont", Name: "block", Snapshot: snap.Snapshot}); c != want["block"] {
		t.Fatal("snapshot not restored")
	}
	// Appends continue where the restored blob ended.
	more, _ := s.Ingest(ctx, bytes.NewReader([]byte("more\n")), true, nil)
	if _, _, err := s.AppendBlock(ctx, appendRef, AppendRequest{Data: more}); err != nil {
		t.Fatal(err)
	}
	if c := blobText(t, s, appendRef); c != want["log"]+"more\n" {
		t.Fatalf("append after restore: %q", c)
	}
	if n := countKind(t, s, kindDeleted) + countKind(t, s, kindExpiry); n != 0 {
		t.Fatalf("%d soft delete keys left after undelete", n)
	}
	mustCode(t, s.Undelete(ctx, Ref{Account: "acct", Container: "cont", Name: "never", Snapshot: ""}), azerr.BlobNotFound)
}

func isCode(err error, code azerr.Code) bool {
	e, ok := azerr.As(err)
	return ok && e.Code == code
}

// TestSoftDeleteOverwriteKeepsOldState: Put Blob over a blob keeps the
// state it replaced as a soft-deleted snapshot; a blob made over a
// soft-deleted one turns it into one too, so Undelete brings back both.
func TestSoftDeleteOverwriteKeepsOldState(t *testing.T) {
	s, clk := softService(t)
	ctx := context.Background()
	ref := Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: ""}
	put(t, s, "b", "one", Cond{})
	clk.add(time.Second)
	put(t, s, "b", "two", Cond{})
	clk.add(time.Second)
	if err := s.DeleteBlob(ctx, ref, "", Cond{}); err != nil {
		t.Fatal(err)
	}
	clk.add(time.Second)
	put(t, s, "b", "three", Cond{})
	items := listAll(t, s, ListBlobsRequest{Snapshots: true, Deleted: true})
	if len(items) != 3 || items[0].Deleted == nil || items[1].Deleted == nil || items[2].Deleted != nil {
		t.Fatalf("listed %+v", items)
	}
	if err := s.Undelete(ctx, ref); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range listAll(t, s, ListBlobsRequest{Snapshots: true}) {
		got = append(got, blobText(t, s, Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: it.Blob.Snapshot}))
	}
	if fmt.Sprint(got) != "[one two three]" {
		t.Fatalf("after undelete: %v", got)
	}
}

// TestSoftDeleteExpiresAndPurges: past the retention days nothing is
// listed or restorable, and the purge removes the records.
func TestSoftDeleteExpiresAndPurges(t *testing.T) {
	s, clk := softService(t)
	ctx := context.Background()
	ref := Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: ""}
	put(t, s, "b", "data", Cond{})
	if err := s.DeleteBlob(ctx, ref, "", Cond{}); err != nil {
		t.Fatal(err)
	}
	clk.add(23 * time.Hour)
	if err := s.PurgeExpired(ctx); err != nil {
		t.Fatal(err)
	}
	items := listAll(t, s, ListBlobsRequest{Deleted: true})
	if len(items) != 1 || items[0].Deleted.RemainingDays(clk.now()) != 1 {
		t.Fatalf("within retention: %+v", items)
	}
	clk.add(time.Hour)
	if items := listAll(t, s, ListBlobsRequest{Deleted: true}); len(items) != 0 {
		t.Fatalf("listed after retention: %+v", items)
	}
	mustCode(t, s.Undelete(ctx, ref), azerr.BlobNotFound)
	if n := countKind(t, s, kindDeleted); n != 1 {
		t.Fatalf("%d deleted records before the purge", n)
	}
	if err := s.PurgeExpired(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countKind(t, s, kindDeleted) + countKind(t, s, kindExpiry); n != 0 {
		t.Fatalf("%d keys left after the purge", n)
	}
}

// TestSoftDeleteOffByDefault: without a policy, Delete Blob deletes for
// good and nothing is listed or restorable; turning the policy off stops
// keeping new deletes.
func TestSoftDeleteOffByDefault(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	put(t, s, "b", "data", Cond{})
	kept, err := s.DeleteBlobKept(ctx, Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: ""}, "", Cond{})
	if err != nil || kept {
		t.Fatalf("kept %v, %v", kept, err)
	}
	if n := countKind(t, s, kindDeleted); n != 0 {
		t.Fatalf("%d deleted records without a policy", n)
	}
	mustCode(t, s.Undelete(ctx, Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: ""}), azerr.BlobNotFound)
	mustCode(t, s.PermanentDelete(ctx, Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: "2025-01-01T00:00:00.0000000Z"}), azerr.InvalidOperation)
}

// TestPermanentDeleteOfSoftDeletedSnapshot: deletetype=permanent removes
// a soft-deleted snapshot for good; a live snapshot is not found and a
// base blob is refused.
func TestPermanentDeleteOfSoftDeletedSnapshot(t *testing.T) {
	s, _ := softService(t)
	ctx := context.Background()
	ref := Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: ""}
	put(t, s, "b", "data", Cond{})
	snap, err := s.SnapshotBlob(ctx, ref, nil, Cond{})
	if err != nil {
		t.Fatal(err)
	}
	sref := Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: snap.Snapshot}
	mustCode(t, s.PermanentDelete(ctx, sref), azerr.BlobNotFound)
	if err := s.DeleteBlob(ctx, sref, "", Cond{}); err != nil {
		t.Fatal(err)
	}
	mustCode(t, s.PermanentDelete(ctx, ref), azerr.InvalidQueryParameterValue)
	if err := s.PermanentDelete(ctx, sref); err != nil {
		t.Fatal(err)
	}
	if err := s.Undelete(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if items := listAll(t, s, ListBlobsRequest{Snapshots: true, Deleted: true}); len(items) != 1 {
		t.Fatalf("listed %d items, want the base blob alone", len(items))
	}
}

// TestSoftDeleteConcurrentOverwritesLoseNothing: writers racing Put Blob
// on one name with soft delete on each leave their data either as the
// blob or as a soft-deleted snapshot, so none is lost.
func TestSoftDeleteConcurrentOverwritesLoseNothing(t *testing.T) {
	s, _ := softService(t)
	ctx := context.Background()
	const writers = 24
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Go(func() {
			in, err := s.Ingest(ctx, bytes.NewReader([]byte(fmt.Sprintf("w%02d", i))), true, nil)
			if err == nil {
				_, err = s.PutBlob(ctx, PutBlobRequest{Ref: Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: ""}, Type: BlockBlob, Data: in})
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteBlob(ctx, Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: ""}, "", Cond{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Undelete(ctx, Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: ""}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, it := range listAll(t, s, ListBlobsRequest{Snapshots: true}) {
		seen[blobText(t, s, Ref{Account: "acct", Container: "cont", Name: "b", Snapshot: it.Blob.Snapshot})] = true
	}
	if len(seen) != writers {
		t.Fatalf("%d of %d writes survive", len(seen), writers)
	}
}

// TestContainerSoftDelete: with a container retention, a deleted
// container is listed as deleted, its name is free, and Restore Container
// brings back its blobs, snapshots, tags, staged blocks and soft-deleted
// blobs; past the retention it is gone and the purge removes its keys.
func TestContainerSoftDelete(t *testing.T) {
	s, clk := softService(t)
	s.UseContainerRetention(func(string) int { return 2 })
	ctx := context.Background()
	big := bytes.Repeat([]byte("abcdefgh"), 16<<10)
	in, err := s.Ingest(ctx, bytes.NewReader(big), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref := Ref{Account: "acct", Container: "cont", Name: "big", Snapshot: ""}
	if _, err := s.PutBlob(ctx, PutBlobRequest{Ref: ref, Type: BlockBlob, Data: in, Tags: []KV{{"t", "1"}}}); err != nil {
		t.Fatal(err)
	}
	put(t, s, "gone", "soft-deleted", Cond{})
	if err := s.DeleteBlob(ctx, Ref{Account: "acct", Container: "cont", Name: "gone", Snapshot: ""}, "", Cond{}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteContainer(ctx, "acct", "cont", Cond{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetBlob(ctx, ref, Cond{}, ""); !isCode(err, azerr.ContainerNotFound) {
		t.Fatalf("get in a deleted container: %v", err)
	}
	found, _, err := s.FindBlobs(ctx, "acct", "", `"t"='1'`, "", 10)
	if err != nil || len(found) != 0 {
		t.Fatalf("found %+v, %v", found, err)
	}
	marked := map[string]bool{}
	if err := MarkChunks(ctx, s.eng, func(r storage.ChunkRef) { marked[string(r)] = true }); err != nil || !marked[string(in.Segs[0].Ref)] {
		t.Fatalf("chunk of a soft-deleted container not marked: %v", err)
	}
	ds, err := s.ListDeletedContainers(ctx, "acct", "")
	if err != nil || len(ds) != 1 || ds[0].Deletion().RemainingDays(clk.now()) != 2 {
		t.Fatalf("deleted containers %+v, %v", ds, err)
	}
	// The name is free; a new container of that name blocks the restore.
	if _, err := s.CreateContainer(ctx, "acct", "cont", nil, ""); err != nil {
		t.Fatal(err)
	}
	_, err = s.RestoreContainer(ctx, "acct", "cont", ds[0].Version)
	mustCode(t, err, azerr.ContainerAlreadyExists)
	if err := s.DeleteContainer(ctx, "acct", "cont", Cond{}); err != nil {
		t.Fatal(err)
	}
	_, err = s.RestoreContainer(ctx, "acct", "cont", "0000")
	mustCode(t, err, azerr.ContainerNotFound)
	if _, err := s.RestoreContainer(ctx, "acct", "cont", ds[0].Version); err != nil {
		t.Fatal(err)
	}
	if c := blobText(t, s, ref); c != string(big) {
		t.Fatalf("restored blob has %d bytes", len(c))
	}
	found, _, err = s.FindBlobs(ctx, "acct", "", `"t"='1'`, "", 10)
	if err != nil || len(found) != 1 {
		t.Fatalf("tag index after restore: %+v, %v", found, err)
	}
	if err := s.Undelete(ctx, Ref{Account: "acct", Container: "cont", Name: "gone", Snapshot: ""}); err != nil {
		t.Fatal(err)
	}
	if c := blobText(t, s, Ref{Account: "acct", Container: "cont", Name: "gone", Snapshot: ""}); c != "soft-deleted" {
		t.Fatalf("undeleted blob reads %q", c)
	}
	// Past the retention the other deleted version is gone for good.
	clk.add(49 * time.Hour)
	if ds, _ := s.ListDeletedContainers(ctx, "acct", ""); len(ds) != 0 {
		t.Fatalf("%d deleted containers listed after the retention", len(ds))
	}
	if err := s.PurgeExpired(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countKind(t, s, kindDeletedContainer) + countKind(t, s, kindMoved); n != 0 {
		t.Fatalf("%d keys of deleted containers left after the purge", n)
	}
}
