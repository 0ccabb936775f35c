package file

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// countKeys counts the File service's keys with tag.
func countKeys(t *testing.T, svc *Service, tag byte) int {
	t.Helper()
	n := 0
	p := root(tag, 0)
	mustNil(t, svc.eng.View(context.Background(), func(tx storage.Tx) error {
		it := tx.Scan(p, keyenc.PrefixEnd(p), false)
		defer it.Close()
		for it.Next() {
			n++
		}
		return it.Err()
	}))
	return n
}

// TestDeleteSharePurges: a deleted share is gone for readers at once and
// its keys (and its snapshots') are removed by the purge; the chunk marker
// then reports nothing.
func TestDeleteSharePurges(t *testing.T) {
	svc, ctx := newSvc(t)
	ref := setup(t, svc, ctx)
	big, err := svc.Ingest(ctx, bytes.NewReader(make([]byte, 100<<10)), 100<<10, nil)
	mustNil(t, err)
	_, err = svc.Create(ctx, CreateRequest{Ref: Ref{Account: "a", Share: "s", Path: "big"}, Size: 100 << 10})
	mustNil(t, err)
	_, err = svc.PutRange(ctx, PutRangeRequest{Ref: Ref{Account: "a", Share: "s", Path: "big"}, Start: 0, End: 100<<10 - 1, Data: big})
	mustNil(t, err)
	_, err = svc.SnapshotShare(ctx, ShareRef{Account: "a", Name: "s"}, nil)
	mustNil(t, err)
	marked := 0
	mustNil(t, MarkChunks(ctx, svc.eng, func(storage.ChunkRef) { marked++ }))
	if marked != 2 {
		t.Fatalf("marked %d chunks, want the one chunk in the share and its snapshot", marked)
	}
	wantCode(t, "delete with snapshots", svc.DeleteShare(ctx, ShareRef{Account: "a", Name: "s"}, "", KeepSnapshots), azerr.ShareHasSnapshots)
	mustNil(t, svc.DeleteShare(ctx, ShareRef{Account: "a", Name: "s"}, "", IncludeSnapshots))
	_, err = svc.Get(ctx, ref, false, "")
	wantCode(t, "get after delete", err, azerr.ShareNotFound)
	mustNil(t, svc.PurgeDeleted(ctx))
	for _, tag := range append(purgeTags, tagTomb, tagShare, tagShID) {
		if n := countKeys(t, svc, tag); n != 0 {
			t.Errorf("tag %c: %d keys left", tag, n)
		}
	}
	marked = 0
	mustNil(t, MarkChunks(ctx, svc.eng, func(storage.ChunkRef) { marked++ }))
	if marked != 0 {
		t.Fatalf("%d chunks still marked", marked)
	}
	// The name is usable again.
	_, err = svc.CreateShare(ctx, CreateShareRequest{Ref: ShareRef{Account: "a", Name: "s"}})
	mustNil(t, err)
}

// TestSoftDeleteExpires: a soft-deleted share past its retention days is
// no longer listed or restorable, and the purge removes its keys.
func TestSoftDeleteExpires(t *testing.T) {
	eng := memstore.New()
	defer eng.Close()
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	svc := New(eng, func() time.Time { return now }, func() string { return "id" })
	ctx := context.Background()
	mustNil(t, svc.SetServiceProps(ctx, "a", ServiceProps{XML: []byte(`<StorageServiceProperties><ShareDeleteRetentionPolicy><Enabled>true</Enabled><Days>1</Days></ShareDeleteRetentionPolicy></StorageServiceProperties>`)}))
	setup(t, svc, ctx)
	mustNil(t, svc.DeleteShare(ctx, ShareRef{Account: "a", Name: "s"}, "", KeepSnapshots))
	ls, _, err := svc.ListSharesWithDeleted(ctx, ListSharesRequest{Account: "a", Max: 10})
	mustNil(t, err)
	if len(ls) != 1 || ls[0].Deleted == nil || ls[0].Deleted.RemainingDays(now) != 1 {
		t.Fatalf("listed %+v", ls)
	}
	version := ls[0].Deleted.Version
	mustNil(t, svc.PurgeDeleted(ctx))
	if countKeys(t, svc, tagNode) == 0 {
		t.Fatal("retained share purged")
	}
	now = now.Add(25 * time.Hour)
	ls, _, err = svc.ListSharesWithDeleted(ctx, ListSharesRequest{Account: "a", Max: 10})
	mustNil(t, err)
	if len(ls) != 0 {
		t.Fatal("expired share listed")
	}
	_, err = svc.RestoreShare(ctx, "a", "s", version)
	wantCode(t, "restore expired", err, azerr.ShareNotFound)
	mustNil(t, svc.PurgeDeleted(ctx))
	for _, tag := range append(purgeTags, tagTomb, tagDeleted) {
		if n := countKeys(t, svc, tag); n != 0 {
			t.Errorf("tag %c: %d keys left", tag, n)
		}
	}
}
