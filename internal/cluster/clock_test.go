package cluster

import (
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
)

// TestSharedOffsetAndFloor: a move on one clock reaches another reading
// the same engine at its next Refresh, and moving back raises the floor
// to the time shown before.
func TestSharedOffsetAndFloor(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return base }
	eng := memstore.New()
	a, b := NewClock(now, eng), NewClock(now, eng)
	ctx := t.Context()
	if err := a.Advance(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	if !a.Now().Equal(base.Add(time.Hour)) || !b.Now().Equal(base) {
		t.Fatalf("a %v b %v before refresh", a.Now(), b.Now())
	}
	if err := b.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if !b.Now().Equal(base.Add(time.Hour)) {
		t.Fatalf("b after refresh: %v", b.Now())
	}
	if !a.Floor().IsZero() {
		t.Errorf("floor before any move back: %v", a.Floor())
	}
	if err := b.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	a.Refresh(ctx)
	if !a.Now().Equal(base) || !a.Floor().Equal(base.Add(time.Hour)) {
		t.Errorf("after reset: now %v floor %v, want %v and %v", a.Now(), a.Floor(), base, base.Add(time.Hour))
	}
	if err := a.Set(ctx, base.Add(-24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if a.Offset() != -24*time.Hour || !a.Floor().Equal(base.Add(time.Hour)) {
		t.Errorf("after set back a day: offset %v floor %v", a.Offset(), a.Floor())
	}
	// A clock of this process only keeps the same rules.
	l := NewClock(now, nil)
	l.Advance(ctx, time.Minute)
	l.Advance(ctx, -2*time.Minute)
	if l.Offset() != -time.Minute || !l.Floor().Equal(base.Add(time.Minute)) {
		t.Errorf("local: offset %v floor %v", l.Offset(), l.Floor())
	}
}
