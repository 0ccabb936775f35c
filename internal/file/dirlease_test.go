package file

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

func dirLeaseReq(client, key byte, state uint8) *CacheRequest {
	r := leaseReq(client, key, state)
	r.V2, r.Directory = true, true
	return r
}

// waitAcked waits until the break of the cache of ref was acknowledged.
func waitAcked(t *testing.T, svc *Service, ref HandleRef) {
	t.Helper()
	for i := 0; i < 200; i++ {
		c, err := svc.Cache(context.Background(), ref)
		mustNil(t, err)
		if c == nil || !c.Breaking {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("break not acknowledged")
}

// A directory lease is read or read-handle caching, granted only where
// directory leasing was offered (SMB 3); a file created in the directory,
// through SMB or REST, breaks it to none, except through an open naming it
// as its parent lease.
func TestDirectoryLease(t *testing.T) {
	svc, ctx := newSvc(t)
	setup(t, svc, ctx)
	log := serveBreaks(t, svc, true)
	dir := Ref{Account: "a", Share: "s", Path: "d"}
	old := smbOpen(t, svc, ctx, dir, FileReadData, allShare, leaseReq(9, 9, rwh))
	if old.Cache != nil {
		t.Fatalf("directory lease without directory leasing: %+v", old.Cache)
	}
	d := smbOpen(t, svc, ctx, dir, FileReadData, allShare, dirLeaseReq(1, 2, rwh))
	if d.Cache == nil || d.Cache.State != CacheRead|CacheHandle {
		t.Fatalf("directory lease %+v, want RH", d.Cache)
	}
	// A create naming the directory's lease as its parent breaks nothing.
	child := dirLeaseReq(1, 3, rwh)
	child.Directory, child.Parent = false, [16]byte{2}
	_, err := svc.Open(ctx, OpenRequest{Share: ShareRef{Account: "a", Name: "s"}, Path: "d/g", Disposition: CreateNew,
		DesiredAccess: FileReadData | FileWriteData, ShareAccess: allShare, Cache: child})
	mustNil(t, err)
	if got := log.all(); len(got) != 0 {
		t.Fatalf("create under its parent lease broke %+v", got)
	}
	// Another create breaks it to none, acknowledged.
	res, err := svc.Open(ctx, OpenRequest{Share: ShareRef{Account: "a", Name: "s"}, Path: "d/h", Disposition: CreateNew,
		DesiredAccess: FileReadData | FileWriteData, ShareAccess: allShare, Cache: leaseReq(1, 4, rwh)})
	mustNil(t, err)
	got := waitBreaks(t, log, 1)
	if got[0].Cache.Key != [16]byte{2} || got[0].From != CacheRead|CacheHandle || got[0].To != 0 || !got[0].AckRequired {
		t.Fatalf("break %+v, want the directory lease RH to none", got[0])
	}
	waitAcked(t, svc, d.Handle)
	// Regranted on a new open, it breaks again on a REST create.
	d2 := smbOpen(t, svc, ctx, dir, FileReadData, allShare, dirLeaseReq(1, 2, CacheRead|CacheHandle))
	if d2.Cache == nil || d2.Cache.State != CacheRead|CacheHandle {
		t.Fatalf("directory lease again %+v, want RH", d2.Cache)
	}
	_, err = svc.Create(ctx, CreateRequest{Ref: Ref{Account: "a", Share: "s", Path: "d/rest"}, Size: 1})
	mustNil(t, err)
	waitBreaks(t, log, 2)
	waitAcked(t, svc, d.Handle)
	// And on the close of a file written through SMB.
	smbOpen(t, svc, ctx, dir, FileReadData, allShare, dirLeaseReq(1, 2, CacheRead|CacheHandle))
	_, err = svc.CloseWritten(ctx, res.Handle)
	mustNil(t, err)
	waitBreaks(t, log, 3)
	waitAcked(t, svc, d.Handle)
	// And on a REST delete.
	smbOpen(t, svc, ctx, dir, FileReadData, allShare, dirLeaseReq(1, 2, CacheRead|CacheHandle))
	mustNil(t, svc.Delete(ctx, Ref{Account: "a", Share: "s", Path: "d/rest"}, false, ""))
	waitBreaks(t, log, 4)
	waitAcked(t, svc, d.Handle)
	// And on a REST rename into the directory.
	_, err = svc.Create(ctx, CreateRequest{Ref: Ref{Account: "a", Share: "s", Path: "outside"}, Size: 1})
	mustNil(t, err)
	smbOpen(t, svc, ctx, dir, FileReadData, allShare, dirLeaseReq(1, 2, CacheRead|CacheHandle))
	_, err = svc.Rename(ctx, RenameRequest{Source: Ref{Account: "a", Share: "s", Path: "outside"},
		Dest: Ref{Account: "a", Share: "s", Path: "d/inside"}})
	mustNil(t, err)
	waitBreaks(t, log, 5)
}

// A rename through an open waits until the other clients holding handle
// caching on the file acknowledged its break (MS-FSA 2.1.4.12): until
// then the file keeps its name.
func TestRenameWaitsForHandleBreak(t *testing.T) {
	svc, ctx := newSvc(t)
	ref := setup(t, svc, ctx)
	log := serveBreaks(t, svc, false)
	a := smbOpen(t, svc, ctx, ref, FileReadData|Delete, allShare, leaseReq(1, 1, CacheRead|CacheHandle))
	b := smbOpen(t, svc, ctx, ref, FileReadData, allShare, leaseReq(2, 2, CacheRead|CacheHandle))
	var waited atomic.Bool
	done := make(chan error, 1)
	go func() {
		_, err := svc.RenameHandle(WithWaiting(ctx, func() { waited.Store(true) }), a.Handle, "d/moved", true)
		done <- err
	}()
	got := waitBreaks(t, log, 1)
	if got[0].Handle.ID != b.Handle.ID || got[0].To != CacheRead || !got[0].AckRequired {
		t.Fatalf("break %+v, want the second lease RH to R", got[0])
	}
	select {
	case err := <-done:
		t.Fatalf("rename finished before the acknowledgement: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if !waited.Load() {
		t.Fatal("the rename did not report its wait")
	}
	if _, err := svc.Get(ctx, Ref{Account: "a", Share: "s", Path: "d/moved"}, false, ""); err == nil {
		t.Fatal("the new name exists before the acknowledgement")
	}
	_, err := svc.AckBreak(ctx, b.Handle, CacheRead)
	mustNil(t, err)
	mustNil(t, <-done)
	_, err = svc.Get(ctx, Ref{Account: "a", Share: "s", Path: "d/moved"}, false, "")
	mustNil(t, err)
}

// A delete disposition waits for the handle caching break the same way.
func TestDeletePendingWaitsForHandleBreak(t *testing.T) {
	svc, ctx := newSvc(t)
	ref := setup(t, svc, ctx)
	log := serveBreaks(t, svc, false)
	a := smbOpen(t, svc, ctx, ref, FileReadData|Delete, allShare, nil)
	b := smbOpen(t, svc, ctx, ref, FileReadData, allShare, leaseReq(2, 2, CacheRead|CacheHandle))
	done := make(chan error, 1)
	go func() {
		_, err := svc.SetDeletePending(context.Background(), a.Handle, true)
		done <- err
	}()
	waitBreaks(t, log, 1)
	select {
	case err := <-done:
		t.Fatalf("delete disposition set before the acknowledgement: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	_, err := svc.AckBreak(ctx, b.Handle, CacheRead)
	mustNil(t, err)
	mustNil(t, <-done)
}
