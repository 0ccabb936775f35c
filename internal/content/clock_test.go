package content

import (
	"fmt"
	"testing"
	"time"
)

func TestETagRendering(t *testing.T) {
	for _, e := range []uint64{0, 1, 0xF, 0x10, 0xABCDEF, 0x8DD0C0FFEE12345, 1<<64 - 1} {
		if got, want := ETagString(e), fmt.Sprintf("\"0x%X\"", e); got != want {
			t.Errorf("ETagString(%d) = %s, want %s", e, got, want)
		}
		if got, want := ETagRaw(e), fmt.Sprintf("0x%X", e); got != want {
			t.Errorf("ETagRaw(%d) = %s, want %s", e, got, want)
		}
	}
}

// TestClockStamps: stamps rise above the previous one of the object and
// above every stamp handed out, even when the clock steps back, and the
// floor holds written times up.
func TestClockStamps(t *testing.T) {
	var c Clock
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	a := c.ETag(0, t0)
	if b := c.ETag(0, t0); b <= a {
		t.Fatalf("same tick: %d after %d", b, a)
	}
	if b := c.ETag(0, t0.Add(-time.Hour)); b <= a {
		t.Fatalf("clock stepped back: %d after %d", b, a)
	}
	if b := c.ETag(1<<62, t0); b != 1<<62+1 {
		t.Fatalf("above prev: %d", b)
	}
	c.UseFloor(func() time.Time { return t0 })
	if w := c.Written(t0.Add(-time.Minute)); !w.Equal(t0) {
		t.Fatalf("floored written time %v", w)
	}
	if w := c.Written(t0.Add(time.Minute)); !w.Equal(t0.Add(time.Minute)) {
		t.Fatalf("written time %v", w)
	}
}
