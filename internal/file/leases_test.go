package file

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/storage"
)

// breakLog collects the breaks delivered to owner 0's sink; ack, when
// set, acknowledges each at once to the state it breaks to.
type breakLog struct {
	mu  sync.Mutex
	got []Break
}

func (l *breakLog) all() []Break {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Break(nil), l.got...)
}

// serveBreaks delivers owner 0's breaks to a log; with ack they are
// acknowledged as a client would.
func serveBreaks(t *testing.T, svc *Service, ack bool) *breakLog {
	t.Helper()
	l := &breakLog{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.ServeBreaks(ctx, 0, func(b Break) {
			l.mu.Lock()
			l.got = append(l.got, b)
			l.mu.Unlock()
			if ack && b.AckRequired {
				go ackLease(svc, b)
			}
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	// The sink is registered once ServeBreaks runs.
	for svc.localSink(0) == nil {
		time.Sleep(time.Millisecond)
	}
	return l
}

// ackLease acknowledges a break as a client does, through any open of
// the lease still open.
func ackLease(svc *Service, b Break) {
	ctx := context.Background()
	if _, err := svc.AckBreak(ctx, b.Handle, b.To); err != ErrHandleClosed || b.Cache.Oplock {
		return
	}
	var refs []HandleRef
	svc.eng.View(ctx, func(tx storage.Tx) error {
		hs, err := loadHandles(tx, b.Handle.Share, b.Handle.File)
		for _, h := range hs {
			if h.Cache != nil && h.Cache.Key == b.Cache.Key && h.Cache.Client == b.Cache.Client {
				refs = append(refs, HandleRef{Share: b.Handle.Share, File: h.FileID, ID: h.ID})
			}
		}
		return err
	})
	for _, r := range refs {
		if _, err := svc.AckBreak(ctx, r, b.To); err != ErrHandleClosed {
			return
		}
	}
}

func smbOpen(t *testing.T, svc *Service, ctx context.Context, ref Ref, access, share uint32, c *CacheRequest) *OpenResult {
	t.Helper()
	res, err := svc.Open(ctx, OpenRequest{Share: ShareRef{Account: ref.Account, Name: ref.Share}, Path: ref.Path,
		Disposition: OpenExist, DesiredAccess: access, ShareAccess: share, Cache: c})
	mustNil(t, err)
	return res
}

func leaseReq(client, key byte, state uint8) *CacheRequest {
	return &CacheRequest{Client: [16]byte{client}, Key: [16]byte{key}, State: state}
}

const rwh = CacheRead | CacheWrite | CacheHandle

// A lease is granted as asked to a lone open; a second client's open
// breaks its write caching (acknowledged) and gets read and handle
// caching; the same client's second open with the same key shares it.
func TestLeaseGrantAndBreakOnOpen(t *testing.T) {
	svc, ctx := newSvc(t)
	ref := setup(t, svc, ctx)
	log := serveBreaks(t, svc, true)
	all := FileShareRead | FileShareWrite | FileShareDelete
	a := smbOpen(t, svc, ctx, ref, FileReadData|FileWriteData, all, leaseReq(1, 1, rwh))
	if a.Cache == nil || a.Cache.State != rwh {
		t.Fatalf("first open granted %+v, want RWH", a.Cache)
	}
	same := smbOpen(t, svc, ctx, ref, FileReadData, all, leaseReq(1, 1, rwh))
	if same.Cache == nil || same.Cache.State != rwh || len(log.all()) != 0 {
		t.Fatalf("same key: granted %+v, breaks %v", same.Cache, log.all())
	}
	b := smbOpen(t, svc, ctx, ref, FileReadData, all, leaseReq(2, 1, rwh))
	if b.Cache == nil || b.Cache.State != CacheRead|CacheHandle {
		t.Fatalf("second client granted %+v, want RH", b.Cache)
	}
	got := log.all()
	if len(got) != 1 || got[0].From != rwh || got[0].To != CacheRead|CacheHandle || !got[0].AckRequired {
		t.Fatalf("breaks %+v, want one RWH->RH", got)
	}
	c, err := svc.Cache(ctx, same.Handle)
	mustNil(t, err)
	if c.State != CacheRead|CacheHandle || c.Breaking {
		t.Fatalf("shared lease after the break: %+v", c)
	}
	granted, sent := svc.CacheStats()
	if granted != 3 || sent != 1 {
		t.Fatalf("stats granted %d sent %d, want 3 and 1", granted, sent)
	}
}

// Oplocks: batch to a lone open, level II to the next, whose arrival
// breaks the batch oplock to level II.
func TestOplockBatchBreaksToLevelII(t *testing.T) {
	svc, ctx := newSvc(t)
	ref := setup(t, svc, ctx)
	log := serveBreaks(t, svc, true)
	all := FileShareRead | FileShareWrite | FileShareDelete
	a := smbOpen(t, svc, ctx, ref, FileReadData|FileWriteData, all, &CacheRequest{Oplock: true, State: rwh})
	if a.Cache == nil || a.Cache.State != rwh {
		t.Fatalf("granted %+v, want batch", a.Cache)
	}
	b := smbOpen(t, svc, ctx, ref, FileReadData, all, &CacheRequest{Oplock: true, State: rwh})
	if b.Cache == nil || b.Cache.State != CacheRead {
		t.Fatalf("second open granted %+v, want level II", b.Cache)
	}
	if got := log.all(); len(got) != 1 || got[0].To != CacheRead {
		t.Fatalf("breaks %+v, want batch->II", got)
	}
	// A write through b breaks a's level II to none, no ack needed.
	data, err := svc.IngestBytes(ctx, []byte("x"))
	mustNil(t, err)
	b2 := smbOpen(t, svc, ctx, ref, FileWriteData, all, nil)
	_, err = svc.WriteAt(ctx, b2.Handle, 0, data)
	mustNil(t, err)
	got := log.all()
	if len(got) != 3 || got[1].To != 0 || got[2].To != 0 || got[1].AckRequired {
		t.Fatalf("breaks after the write %+v, want both level II broken to none", got)
	}
}

// A REST write on a file an SMB client caches breaks its write and read
// caching first and waits for the acknowledgement; unacknowledged, it answers 409
// ClientCacheFlushDelay after the timeout, and the next write goes on.
func TestRESTWriteBreaksLease(t *testing.T) {
	for _, ack := range []bool{true, false} {
		svc, ctx := newSvc(t)
		svc.SetBreakTimeout(200 * time.Millisecond)
		ref := setup(t, svc, ctx)
		log := serveBreaks(t, svc, ack)
		all := FileShareRead | FileShareWrite | FileShareDelete
		a := smbOpen(t, svc, ctx, ref, FileReadData|FileWriteData, all, leaseReq(1, 1, rwh))
		data, err := svc.IngestBytes(ctx, []byte("y"))
		mustNil(t, err)
		start := time.Now()
		_, err = svc.PutRange(ctx, PutRangeRequest{Ref: ref, Start: 0, End: 0, Data: data})
		if ack {
			wantCode(t, "acknowledged", err, 0)
		} else {
			wantCode(t, "unacknowledged", err, azerr.ClientCacheFlushDelay)
			if time.Since(start) < 200*time.Millisecond {
				t.Fatal("answered before the timeout")
			}
			_, err = svc.PutRange(ctx, PutRangeRequest{Ref: ref, Start: 0, End: 0, Data: data})
			wantCode(t, "after the forced break", err, 0)
		}
		// Write and read caching go; handle caching stays, unless the
		// client let the break time out: then it loses the lease
		// altogether, as on Windows.
		if got := log.all(); len(got) != 1 || got[0].To != CacheHandle || got[0].Handle.ID != a.Handle.ID {
			t.Fatalf("ack %v: breaks %+v, want one RWH->H", ack, got)
		}
		c, err := svc.Cache(ctx, a.Handle)
		mustNil(t, err)
		want := CacheHandle
		if !ack {
			want = 0
		}
		if c.State != want || c.Breaking {
			t.Fatalf("ack %v: lease after the REST write: %+v", ack, c)
		}
	}
}

// REST Delete breaks handle caching; a client that closes its handle on
// the break lets the delete go on.
func TestRESTDeleteBreaksHandleCaching(t *testing.T) {
	svc, ctx := newSvc(t)
	ref := setup(t, svc, ctx)
	var h HandleRef
	ctx2, cancel := context.WithCancel(ctx)
	defer cancel()
	go svc.ServeBreaks(ctx2, 0, func(b Break) {
		if b.AckRequired {
			// A client closes the handles it no longer may cache,
			// which completes the break.
			go svc.Close(context.Background(), h)
		}
	})
	for svc.localSink(0) == nil {
		time.Sleep(time.Millisecond)
	}
	all := FileShareRead | FileShareWrite | FileShareDelete
	h = smbOpen(t, svc, ctx, ref, FileReadData, all, leaseReq(1, 1, CacheRead|CacheHandle)).Handle
	wantCode(t, "delete", svc.Delete(ctx, ref, false, ""), 0)
}

// Many clients race for leases on one file while REST writes it: every
// REST write succeeds once the caches in its way are broken, nothing
// stays breaking, and at most one lease holds write caching at any time.
func TestLeaseRace(t *testing.T) {
	svc, ctx := newSvc(t)
	svc.SetBreakTimeout(2 * time.Second)
	ref := setup(t, svc, ctx)
	serveBreaks(t, svc, true)
	all := FileShareRead | FileShareWrite | FileShareDelete
	data, err := svc.IngestBytes(ctx, []byte("z"))
	mustNil(t, err)
	var wg sync.WaitGroup
	var opens, writes atomic.Int64
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 10 {
				res, err := svc.Open(ctx, OpenRequest{Share: ShareRef{Account: "a", Name: "s"}, Path: ref.Path, Disposition: OpenExist,
					DesiredAccess: FileReadData | FileWriteData, ShareAccess: all, Cache: leaseReq(byte(i+1), byte(j), rwh)})
				if err != nil {
					t.Error(err)
					return
				}
				opens.Add(1)
				if j%3 == 0 {
					svc.Close(ctx, res.Handle)
				}
			}
		}()
	}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				if _, err := svc.PutRange(ctx, PutRangeRequest{Ref: ref, Start: 0, End: 0, Data: data}); err != nil {
					t.Error(err)
					return
				}
				writes.Add(1)
			}
		}()
	}
	wg.Wait()
	if opens.Load() != 80 || writes.Load() != 20 {
		t.Fatalf("%d opens, %d writes", opens.Load(), writes.Load())
	}
	hs, _, err := svc.ListHandles(ctx, ref, false, 0, 1000)
	mustNil(t, err)
	writers := 0
	for _, h := range hs {
		if h.Cache != nil && h.Cache.Breaking {
			t.Fatalf("handle %d still breaking", h.ID)
		}
		if h.Cache != nil && h.Cache.State&CacheWrite != 0 {
			writers++
		}
	}
	if writers > 0 && len(hs) > 1 {
		t.Fatalf("%d write caches among %d opens", writers, len(hs))
	}
}
