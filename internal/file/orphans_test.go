package file

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/cluster"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/storage"
)

// fakeClock is a monotonic clock the test moves.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }
func newFakeClock() *fakeClock               { c := &fakeClock{}; c.ns.Store(int64(time.Hour)); return c }
func (c *fakeClock) set(d time.Duration)     { c.ns.Store(int64(time.Hour + d)) }
func openReq(share ShareRef, path string) OpenRequest {
	return OpenRequest{Share: share, Path: path, Disposition: OpenIf, DesiredAccess: FileReadData | FileWriteData}
}

// twoInstances returns two File services on one engine (two instances of
// lazuli on one database), each with its membership (Expiry 60 s on clk),
// joined, and share "s" with file "d/f".
func twoInstances(t *testing.T, clk *fakeClock, lost *atomic.Int32) (a, b *Service, ma, mb *cluster.Membership, ref Ref) {
	t.Helper()
	eng := memstore.New()
	t.Cleanup(func() { eng.Close() })
	a, b = New(eng, time.Now, func() string { return newIDString() }), New(eng, time.Now, func() string { return newIDString() })
	ctx := context.Background()
	ref = setup(t, a, ctx)
	ma = cluster.New(a.eng, cluster.Config{Holder: a, Expiry: time.Minute, Clock: clk.now, Lost: func() { lost.Add(1) }})
	mb = cluster.New(b.eng, cluster.Config{Holder: b, Expiry: time.Minute, Clock: clk.now})
	mustNil(t, ma.Join(ctx, false))
	mustNil(t, mb.Join(ctx, false))
	return a, b, ma, mb, ref
}

var idSeq atomic.Int64

func newIDString() string { return "id-" + strconv.FormatInt(idSeq.Add(1), 10) }

func handleCount(t *testing.T, svc *Service, ref Ref) int {
	t.Helper()
	hs, _, err := svc.ListHandles(context.Background(), Ref{Account: ref.Account, Share: ref.Share}, true, 0, 1000)
	mustNil(t, err)
	return len(hs)
}

// TestMembershipReleasesDeadInstance: instance A holds an exclusive open
// and a delete-on-close file; B sees both. A stops beating: B releases
// them once A's beat has stood still for Expiry by B's clock, not
// before; A's membership lapsed earlier (two thirds of Expiry after its
// last beat), its fenced opens fail, its old handle is closed, and its
// next round finds itself dead, drops its connections and joins anew.
func TestMembershipReleasesDeadInstance(t *testing.T) {
	clk := newFakeClock()
	var lost atomic.Int32
	a, b, ma, mb, ref := twoInstances(t, clk, &lost)
	ctx := context.Background()
	share := ShareRef{Account: "a", Name: "s"}

	owner, err := ma.Owner()
	mustNil(t, err)
	req := openReq(share, "d/f")
	req.Owner = owner
	held, err := a.Open(ctx, req)
	mustNil(t, err)
	doc := openReq(share, "d/tmp")
	doc.DesiredAccess |= Delete
	doc.DeleteOnClose, doc.Owner = true, owner
	_, err = a.Open(ctx, doc)
	mustNil(t, err)

	mustNil(t, mb.Tick(ctx)) // B sees A's beat at 0
	clk.set(20 * time.Second)
	mustNil(t, ma.Tick(ctx)) // A's last beat, at 20 s
	mustNil(t, mb.Tick(ctx)) // B sees it at 20 s
	wantCode(t, "REST Put Range through B", putByte(t, b, ref), azerr.SharingViolation)

	// A's membership lapses at 20 s + 40 s.
	clk.set(59 * time.Second)
	if _, err := ma.Owner(); err != nil {
		t.Fatalf("A's membership lapsed early: %v", err)
	}
	clk.set(60 * time.Second)
	if _, err := ma.Owner(); !errors.Is(err, cluster.ErrInstanceLost) {
		t.Fatalf("A's membership at 60 s: %v, want cluster.ErrInstanceLost", err)
	}

	// B declares A dead only at 20 s + 60 s.
	clk.set(79 * time.Second)
	mustNil(t, mb.Tick(ctx))
	if n := handleCount(t, b, ref); n != 2 {
		t.Fatalf("B released A's handles early: %d left, want 2", n)
	}
	clk.set(80 * time.Second)
	mustNil(t, mb.Tick(ctx))
	if n := handleCount(t, b, ref); n != 0 {
		t.Fatalf("%d handles left after A expired, want 0", n)
	}
	wantCode(t, "REST Put Range after A expired", putByte(t, b, ref), 0)
	if _, err := b.Get(ctx, Ref{Account: "a", Share: "s", Path: "d/tmp"}, false, ""); err == nil {
		t.Fatal("A's delete-on-close file survived A")
	}

	// A, stalled until now, can neither open (the fence in Open's
	// transaction) nor use its old handle.
	if _, err := a.Open(ctx, req); !errors.Is(err, cluster.ErrInstanceLost) {
		t.Fatalf("open by the dead instance: %v, want cluster.ErrInstanceLost", err)
	}
	if _, err := a.GetInfo(ctx, held.Handle); !errors.Is(err, ErrHandleClosed) {
		t.Fatalf("dead instance's handle: %v, want ErrHandleClosed", err)
	}
	// Its next round: lost (connections dropped), joined again.
	mustNil(t, ma.Tick(ctx))
	if lost.Load() != 1 {
		t.Fatalf("Lost called %d times, want 1", lost.Load())
	}
	owner2, err := ma.Owner()
	mustNil(t, err)
	if owner2 == owner {
		t.Fatal("A joined again under its dead id")
	}
	req.Owner = owner2
	_, err = a.Open(ctx, req)
	mustNil(t, err)
	// That B then forgets the dead member's records is
	// cluster.TestDeadMemberForgotten.
}

// TestMembershipBeatKeepsHandles: an instance that keeps beating keeps its
// handles however long they stay open.
func TestMembershipBeatKeepsHandles(t *testing.T) {
	clk := newFakeClock()
	var lost atomic.Int32
	a, b, ma, mb, ref := twoInstances(t, clk, &lost)
	ctx := context.Background()
	owner, _ := ma.Owner()
	req := openReq(ShareRef{Account: "a", Name: "s"}, "d/f")
	req.Owner = owner
	_, err := a.Open(ctx, req)
	mustNil(t, err)
	for range 60 {
		clk.advance(10 * time.Second)
		mustNil(t, ma.Tick(ctx))
		mustNil(t, mb.Tick(ctx))
	}
	if n := handleCount(t, b, ref); n != 1 || lost.Load() != 0 {
		t.Fatalf("after 10 min of beats: %d handles, lost %d; want 1 and 0", n, lost.Load())
	}
}

// TestMembershipFenceRace: while instance B declares A dead and releases
// its handles, A keeps opening files. Every open either commits before
// A is marked dead (and is released by B's sweep) or fails with
// cluster.ErrInstanceLost: once B's round returns, no handle of A is left.
func TestMembershipFenceRace(t *testing.T) {
	for round := range 20 {
		clk := newFakeClock()
		var lost atomic.Int32
		a, b, ma, mb, ref := twoInstances(t, clk, &lost)
		ctx := context.Background()
		owner, _ := ma.Owner()
		mustNil(t, mb.Tick(ctx))
		var wg sync.WaitGroup
		var opened atomic.Int32
		for g := range 4 {
			wg.Go(func() {
				req := OpenRequest{Share: ShareRef{Account: "a", Name: "s"}, Path: "d/f", Disposition: OpenExist,
					DesiredAccess: FileReadData, ShareAccess: FileShareRead | FileShareWrite | FileShareDelete, Owner: owner}
				if g%2 == 1 {
					req.Path, req.Disposition = "d/g"+strconv.Itoa(g), OpenIf
				}
				for {
					_, err := a.Open(ctx, req)
					if errors.Is(err, cluster.ErrInstanceLost) {
						return
					}
					if e, ok := azerr.As(err); ok && e.Code == azerr.HandleLimitExceeded {
						runtime.Gosched() // B has not run yet
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					opened.Add(1)
				}
			})
		}
		clk.advance(time.Minute)
		mustNil(t, mb.Tick(ctx))
		wg.Wait()
		if n := handleCount(t, b, ref); n != 0 {
			t.Fatalf("round %d: %d handles of the dead instance left (%d opens)", round, n, opened.Load())
		}
	}
}

// TestMembershipExclusiveJoin: joining an engine of one's own (a restart
// of an embedded engine) releases every handle and member left behind.
func TestMembershipExclusiveJoin(t *testing.T) {
	clk := newFakeClock()
	var lost atomic.Int32
	a, b, ma, _, ref := twoInstances(t, clk, &lost)
	ctx := context.Background()
	owner, _ := ma.Owner()
	req := openReq(ShareRef{Account: "a", Name: "s"}, "d/f")
	req.Owner = owner
	_, err := a.Open(ctx, req)
	mustNil(t, err)
	insertHandle(t, a, ctx, ref, Handle{}, true) // unowned, pending delete
	fresh := cluster.New(b.eng, cluster.Config{Holder: b, Clock: clk.now})
	mustNil(t, fresh.Join(ctx, true))
	if n := handleCount(t, b, Ref{Account: "a", Share: "s"}); n != 0 {
		t.Fatalf("%d handles after a restart, want 0", n)
	}
	if _, err := b.Get(ctx, ref, false, ""); err == nil {
		t.Fatal("a file pending deletion survived the restart")
	}
	// That no member record is left but the new one is
	// cluster.TestExclusiveJoin.
}

// TestMembershipLeave: an instance shutting down releases what it holds
// at once and leaves no member record.
func TestMembershipLeave(t *testing.T) {
	clk := newFakeClock()
	var lost atomic.Int32
	a, b, ma, _, ref := twoInstances(t, clk, &lost)
	ctx := context.Background()
	owner, _ := ma.Owner()
	req := openReq(ShareRef{Account: "a", Name: "s"}, "d/f")
	req.Owner = owner
	_, err := a.Open(ctx, req)
	mustNil(t, err)
	mustNil(t, ma.Leave(ctx))
	if n := handleCount(t, b, ref); n != 0 {
		t.Fatalf("%d handles after Leave, want 0", n)
	}
	mustNil(t, ma.Tick(ctx)) // a round after Leave joins nothing
	if _, err := ma.Owner(); !errors.Is(err, cluster.ErrInstanceLost) {
		t.Fatalf("Owner after Leave: %v", err)
	}
}

// putByte is a REST Put Range of one byte at 0 of ref.
func putByte(t *testing.T, svc *Service, ref Ref) error {
	t.Helper()
	ctx := context.Background()
	data, err := svc.Ingest(ctx, bytes.NewReader([]byte{1}), 1, nil)
	mustNil(t, err)
	_, err = svc.PutRange(ctx, PutRangeRequest{Ref: ref, Start: 0, End: 0, Data: data})
	return err
}

// unreachable is an engine whose Updates fail while down is set (a
// database this instance cannot reach).
type unreachable struct {
	storage.Engine
	down atomic.Bool
}

var errDown = errors.New("engine unreachable")

func (u *unreachable) Update(ctx context.Context, fn func(storage.Tx) error) error {
	if u.down.Load() {
		return errDown
	}
	return u.Engine.Update(ctx, fn)
}

// TestMembershipLapsesWhenBeatsFail: an instance that cannot renew its
// membership keeps it until two thirds of Expiry after its last good
// beat, then gives it up (Lost: connections dropped; Owner refuses
// opens), before any other instance may declare it dead; when the engine
// answers again it joins under a new id and its old handles are released.
func TestMembershipLapsesWhenBeatsFail(t *testing.T) {
	clk := newFakeClock()
	eng := memstore.New()
	t.Cleanup(func() { eng.Close() })
	ua := &unreachable{Engine: eng}
	a, b := New(ua, time.Now, newIDString), New(eng, time.Now, newIDString)
	ctx := context.Background()
	ref := setup(t, b, ctx)
	var lost atomic.Int32
	ma := cluster.New(a.eng, cluster.Config{Holder: a, Expiry: time.Minute, Clock: clk.now, Lost: func() { lost.Add(1) }})
	mb := cluster.New(b.eng, cluster.Config{Holder: b, Expiry: time.Minute, Clock: clk.now})
	mustNil(t, ma.Join(ctx, false))
	mustNil(t, mb.Join(ctx, false))
	owner, _ := ma.Owner()
	req := openReq(ShareRef{Account: "a", Name: "s"}, "d/f")
	req.Owner = owner
	_, err := a.Open(ctx, req)
	mustNil(t, err)

	ua.down.Store(true)
	for _, at := range []time.Duration{10, 20, 30} {
		clk.set(at * time.Second)
		if err := ma.Tick(ctx); !errors.Is(err, errDown) {
			t.Fatalf("beat at %v with the engine down: %v", at, err)
		}
		if _, err := ma.Owner(); err != nil || lost.Load() != 0 {
			t.Fatalf("membership at %v s: %v, lost %d; want kept", at, err, lost.Load())
		}
	}
	clk.set(40 * time.Second)
	if _, err := ma.Owner(); !errors.Is(err, cluster.ErrInstanceLost) {
		t.Fatalf("Owner 40 s after the last beat: %v, want cluster.ErrInstanceLost", err)
	}
	ma.Tick(ctx)
	if lost.Load() != 1 {
		t.Fatalf("Lost called %d times at 40 s, want 1", lost.Load())
	}
	if n := handleCount(t, b, ref); n != 1 {
		t.Fatalf("%d handles while A is only unreachable, want 1", n)
	}
	ua.down.Store(false)
	clk.set(50 * time.Second)
	mustNil(t, ma.Tick(ctx))
	if _, err := ma.Owner(); err != nil {
		t.Fatalf("Owner after joining again: %v", err)
	}
	if n := handleCount(t, b, ref); n != 0 {
		t.Fatalf("%d handles of A's old id after it joined again, want 0", n)
	}
}
