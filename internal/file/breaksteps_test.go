package file

import (
	"context"
	"testing"
	"time"
)

const allShare = FileShareRead | FileShareWrite | FileShareDelete

// openAsync runs an SMB open in the background; its result arrives on the
// channel.
func openAsync(svc *Service, ctx context.Context, ref Ref, disp Disposition, access uint32) chan error {
	done := make(chan error, 1)
	go func() {
		_, err := svc.Open(ctx, OpenRequest{Share: ShareRef{Account: ref.Account, Name: ref.Share}, Path: ref.Path,
			Disposition: disp, DesiredAccess: access, ShareAccess: allShare})
		done <- err
	}()
	return done
}

// waitBreaks waits until the log holds n breaks and returns them.
func waitBreaks(t *testing.T, l *breakLog, n int) []Break {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(l.all()) < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	got := l.all()
	if len(got) != n {
		t.Fatalf("breaks %+v, want %d", got, n)
	}
	return got
}

func wantBreak(t *testing.T, b Break, from, to uint8, ack bool) {
	t.Helper()
	if b.From != from || b.To != to || b.AckRequired != ack {
		t.Fatalf("break %d->%d ack %v, want %d->%d ack %v", b.From, b.To, b.AckRequired, from, to, ack)
	}
}

func pending(t *testing.T, what string, done chan error) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("%s finished (%v) while the break was unacknowledged", what, err)
	case <-time.After(100 * time.Millisecond):
	}
}

// A truncating open that arrives while a lease breaks from RWH to RH
// waits; once RH is acknowledged the lease breaks on in steps, as on
// Windows: to R (acknowledged, as handle caching goes), then to none at
// once; every open waiting meanwhile goes on only then (smbtorture
// smb2.lease.breaking3).
func TestLeaseBreaksInSteps(t *testing.T) {
	svc, ctx := newSvc(t)
	ref := setup(t, svc, ctx)
	log := serveBreaks(t, svc, false)
	a := smbOpen(t, svc, ctx, ref, FileReadData|FileWriteData, allShare, leaseReq(1, 1, rwh))
	plain := openAsync(svc, ctx, ref, OpenExist, FileReadData)
	wantBreak(t, waitBreaks(t, log, 1)[0], rwh, CacheRead|CacheHandle, true)
	trunc := openAsync(svc, ctx, ref, Overwrite, FileReadData)
	pending(t, "truncating open", trunc)
	if len(log.all()) != 1 {
		t.Fatalf("a break under way was followed by another at once: %+v", log.all())
	}
	c, err := svc.AckBreak(ctx, a.Handle, CacheRead|CacheHandle)
	mustNil(t, err)
	if c.State != CacheRead|CacheHandle || !c.Breaking {
		t.Fatalf("after the first acknowledgement %+v, want RH still breaking", c)
	}
	wantBreak(t, waitBreaks(t, log, 2)[1], CacheRead|CacheHandle, CacheRead, true)
	pending(t, "plain open", plain)
	_, err = svc.AckBreak(ctx, a.Handle, CacheRead)
	mustNil(t, err)
	wantBreak(t, waitBreaks(t, log, 3)[2], CacheRead, 0, false)
	mustNil(t, <-plain)
	mustNil(t, <-trunc)
}

// A truncating open breaks an RH lease to none without waiting for the
// acknowledgement: only write caching (or handle caching in a sharing
// violation) holds an open up (smbtorture smb2.lease.breaking4).
func TestTruncatingOpenDoesNotWaitForHandleCaching(t *testing.T) {
	svc, ctx := newSvc(t)
	ref := setup(t, svc, ctx)
	log := serveBreaks(t, svc, false)
	a := smbOpen(t, svc, ctx, ref, FileReadData, allShare, leaseReq(1, 1, CacheRead|CacheHandle))
	if a.Cache == nil || a.Cache.State != CacheRead|CacheHandle {
		t.Fatalf("granted %+v, want RH", a.Cache)
	}
	select {
	case err := <-openAsync(svc, ctx, ref, Overwrite, FileReadData):
		mustNil(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the truncating open waited for the acknowledgement")
	}
	wantBreak(t, waitBreaks(t, log, 1)[0], CacheRead|CacheHandle, 0, true)
}

// Stat opens: attributes (and, for a lease, the security descriptor)
// alone break nothing, and do not keep a lease from write caching; any
// other access breaks a batch oplock (smbtorture smb2.oplock.statopen1,
// smb2.lease.statopen3 and statopen4).
func TestStatOpensBreakNothing(t *testing.T) {
	const fileReadEA = 0x8
	svc, ctx := newSvc(t)
	ref := setup(t, svc, ctx)
	log := serveBreaks(t, svc, true)
	smbOpen(t, svc, ctx, ref, fileReadAttributes, allShare, nil)
	a := smbOpen(t, svc, ctx, ref, FileReadData|FileWriteData, allShare, leaseReq(1, 1, rwh))
	if a.Cache == nil || a.Cache.State != rwh {
		t.Fatalf("lease beside a stat open: %+v, want RWH", a.Cache)
	}
	rc := smbOpen(t, svc, ctx, ref, readControl|synchronize, allShare, nil)
	if got := log.all(); len(got) != 0 {
		t.Fatalf("a stat open broke the lease: %+v", got)
	}
	_, err := svc.Close(ctx, a.Handle)
	mustNil(t, err)
	_, err = svc.Close(ctx, rc.Handle)
	mustNil(t, err)
	b := smbOpen(t, svc, ctx, ref, FileReadData|FileWriteData, allShare, &CacheRequest{Oplock: true, State: rwh})
	if b.Cache == nil || b.Cache.State != rwh {
		t.Fatalf("granted %+v, want batch", b.Cache)
	}
	smbOpen(t, svc, ctx, ref, fileWriteAttributes, allShare, nil)
	if got := log.all(); len(got) != 0 {
		t.Fatalf("a stat open broke the oplock: %+v", got)
	}
	smbOpen(t, svc, ctx, ref, fileReadEA, allShare, nil)
	wantBreak(t, waitBreaks(t, log, 1)[0], rwh, CacheRead, true)
}

// A write breaks another client's RH lease to none without waiting, and
// a set-end-of-file that keeps the size still breaks level II oplocks
// (smbtorture smb2.lease.complex1 and smb2.oplock.batch12).
func TestWritesBreakReadCaching(t *testing.T) {
	svc, ctx := newSvc(t)
	ref := setup(t, svc, ctx)
	log := serveBreaks(t, svc, false)
	smbOpen(t, svc, ctx, ref, FileReadData, allShare, leaseReq(1, 1, CacheRead|CacheHandle))
	w := smbOpen(t, svc, ctx, ref, FileWriteData, allShare, leaseReq(2, 1, CacheRead))
	if w.Cache == nil || w.Cache.State != CacheRead {
		t.Fatalf("writer granted %+v, want R", w.Cache)
	}
	data, err := svc.IngestBytes(ctx, []byte("x"))
	mustNil(t, err)
	_, err = svc.WriteAt(ctx, w.Handle, 0, data)
	mustNil(t, err)
	wantBreak(t, waitBreaks(t, log, 1)[0], CacheRead|CacheHandle, 0, true)

	svc2, ctx := newSvc(t)
	ref = setup(t, svc2, ctx)
	log = serveBreaks(t, svc2, false)
	smbOpen(t, svc2, ctx, ref, FileReadData, allShare, &CacheRequest{Oplock: true, State: CacheRead})
	o := smbOpen(t, svc2, ctx, ref, FileWriteData, allShare, nil)
	_, err = svc2.SetEndOfFile(ctx, o.Handle, 1024)
	mustNil(t, err)
	wantBreak(t, waitBreaks(t, log, 1)[0], CacheRead, 0, false)
}

// An open with delete-on-close breaks other clients' handle caching,
// without waiting, as setting the disposition does (smbtorture
// smb2.lease.unlink).
func TestDeleteOnCloseOpenBreaksHandleCaching(t *testing.T) {
	svc, ctx := newSvc(t)
	ref := setup(t, svc, ctx)
	log := serveBreaks(t, svc, false)
	smbOpen(t, svc, ctx, ref, FileReadData, allShare, leaseReq(1, 1, CacheRead|CacheHandle))
	_, err := svc.Open(ctx, OpenRequest{Share: ShareRef{Account: ref.Account, Name: ref.Share}, Path: ref.Path,
		Disposition: OpenExist, DesiredAccess: Delete, ShareAccess: allShare, DeleteOnClose: true})
	mustNil(t, err)
	wantBreak(t, waitBreaks(t, log, 1)[0], CacheRead|CacheHandle, CacheRead, true)
}
