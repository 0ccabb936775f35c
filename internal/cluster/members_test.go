package cluster

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/storage"
)

// The File domain's tests (internal/file, orphans_test.go) cover what
// the membership is for: a dead instance's SMB handles released, the
// fence against its late opens. These cover the membership's own records.

// fakeClock is a monotonic clock the test moves.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) set(d time.Duration) { c.ns.Store(int64(time.Hour + d)) }

// holder counts the releases asked of it and which members were alive
// at the last one.
type holder struct {
	eng      storage.Engine
	releases atomic.Int32
	alive    map[uint64]bool
}

func (h *holder) ReleaseOrphans(ctx context.Context) error {
	h.releases.Add(1)
	return h.eng.View(ctx, func(tx storage.Tx) error {
		for id := range h.alive {
			ok, err := Alive(tx, id)
			if err != nil {
				return err
			}
			h.alive[id] = ok
		}
		return nil
	})
}

func memberIDs(t *testing.T, eng storage.Engine) []uint64 {
	t.Helper()
	var ids []uint64
	err := eng.View(context.Background(), func(tx storage.Tx) error {
		var err error
		ids, _, err = members(tx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestDeadMemberForgotten: A stops beating; B declares it dead Expiry
// after it last saw A's beat move, asks the holder to release A's
// resources (Alive(A) false by then), and forgets A's records; A's next
// round finds itself dead, calls Lost and joins under a new id.
func TestDeadMemberForgotten(t *testing.T) {
	eng := memstore.New()
	t.Cleanup(func() { eng.Close() })
	ctx := context.Background()
	clk := &fakeClock{}
	clk.set(0)
	var lost atomic.Int32
	h := &holder{eng: eng, alive: map[uint64]bool{}}
	ma := New(eng, Config{Expiry: time.Minute, Clock: clk.now, Lost: func() { lost.Add(1) }})
	mb := New(eng, Config{Expiry: time.Minute, Clock: clk.now, Holder: h})
	mustNil(t, ma.Join(ctx, false))
	mustNil(t, mb.Join(ctx, false))
	a, err := ma.Owner()
	mustNil(t, err)
	h.alive[a] = true

	mustNil(t, mb.Tick(ctx)) // B sees A's beat at 0
	clk.set(59 * time.Second)
	mustNil(t, mb.Tick(ctx))
	if len(memberIDs(t, eng)) != 2 || !h.alive[a] {
		t.Fatalf("A declared dead early: members %v", memberIDs(t, eng))
	}
	before := h.releases.Load()
	clk.set(60 * time.Second)
	mustNil(t, mb.Tick(ctx))
	if h.releases.Load() == before || h.alive[a] {
		t.Fatalf("B's round at 60 s: %d releases, A alive %v; want a release with A dead", h.releases.Load()-before, h.alive[a])
	}
	if ids := memberIDs(t, eng); len(ids) != 1 {
		t.Fatalf("members %v after A died, want B's alone", ids)
	}
	mustNil(t, ma.Tick(ctx))
	if lost.Load() != 1 {
		t.Fatalf("Lost called %d times, want 1", lost.Load())
	}
	a2, err := ma.Owner()
	mustNil(t, err)
	if a2 == a {
		t.Fatal("A joined again under its dead id")
	}
	if ids := memberIDs(t, eng); len(ids) != 2 {
		t.Fatalf("members %v, want A's new id and B's", ids)
	}
}

// TestExclusiveJoin: joining an engine of one's own (a restart of an
// embedded engine) removes every member an earlier process left and has
// the holder release what they held.
func TestExclusiveJoin(t *testing.T) {
	eng := memstore.New()
	t.Cleanup(func() { eng.Close() })
	ctx := context.Background()
	old := New(eng, Config{})
	mustNil(t, old.Join(ctx, false))
	id, _ := old.Owner()
	h := &holder{eng: eng, alive: map[uint64]bool{id: true}}
	fresh := New(eng, Config{Holder: h})
	mustNil(t, fresh.Join(ctx, true))
	if ids := memberIDs(t, eng); len(ids) != 1 {
		t.Fatalf("members %v after an exclusive join, want only the new one", ids)
	}
	if h.releases.Load() != 1 || h.alive[id] {
		t.Fatalf("%d releases, old member alive %v; want 1 and false", h.releases.Load(), h.alive[id])
	}
}

// TestLeave: an instance that leaves is no member any more, takes nothing
// (Owner fails) and joins nothing on its next round.
func TestLeave(t *testing.T) {
	eng := memstore.New()
	t.Cleanup(func() { eng.Close() })
	ctx := context.Background()
	m := New(eng, Config{Expiry: time.Minute})
	mustNil(t, m.Join(ctx, false))
	mustNil(t, m.Leave(ctx))
	mustNil(t, m.Tick(ctx))
	if _, err := m.Owner(); !errors.Is(err, ErrInstanceLost) {
		t.Fatalf("Owner after Leave: %v, want ErrInstanceLost", err)
	}
	if ids := memberIDs(t, eng); len(ids) != 0 {
		t.Fatalf("members %v after Leave, want none", ids)
	}
}

// TestAliveReadsRecord: Alive answers from the member record alone: a
// member is alive until it is marked dead or its record is gone, and a
// corrupt record is an error, not a verdict.
func TestAliveReadsRecord(t *testing.T) {
	eng := memstore.New()
	ctx := context.Background()
	joined := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	mustNil(t, eng.Update(ctx, func(tx storage.Tx) error {
		mustNil(t, tx.Set(memberKey(1), encode(&member{Joined: joined})))
		mustNil(t, tx.Set(memberKey(2), encode(&member{Joined: joined})))
		mustNil(t, tx.Set(memberKey(3), []byte("{")))
		return markDead(tx, 2)
	}))
	mustNil(t, eng.View(ctx, func(tx storage.Tx) error {
		for id, want := range map[uint64]bool{1: true, 2: false, 4: false} {
			ok, err := Alive(tx, id)
			mustNil(t, err)
			if ok != want {
				t.Errorf("Alive(%d) = %v, want %v", id, ok, want)
			}
		}
		if _, err := Alive(tx, 3); err == nil {
			t.Error("Alive on a corrupt record: no error")
		}
		return nil
	}))
}

func BenchmarkAlive(b *testing.B) {
	eng := memstore.New()
	ctx := context.Background()
	err := eng.Update(ctx, func(tx storage.Tx) error {
		return tx.Set(memberKey(1), encode(&member{Joined: time.Now()}))
	})
	if err != nil {
		b.Fatal(err)
	}
	_ = eng.View(ctx, func(tx storage.Tx) error {
		for b.Loop() {
			if ok, err := Alive(tx, 1); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
		return nil
	})
}
