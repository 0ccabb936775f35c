package content

import (
	"sync/atomic"
	"time"
)

// Clock hands out the written times and ETag stamps of one service.
// Stamps come from the clock but never repeat, so an object deleted and
// created again within one clock reading (a coarse or stepped-back clock)
// does not get the ETag its predecessor had, which an If-Match still
// holds. The zero Clock is ready to use.
type Clock struct {
	// last is the last stamp handed out.
	last atomic.Uint64
	// floor, if set, is the time below which written times and stamps
	// never go (UseFloor).
	floor func() time.Time
}

// UseFloor makes written times (Last-Modified) and ETag stamps never go
// below f(): the latest time a test clock showed before it was moved
// back, so that moving it back neither repeats an ETag nor makes
// Last-Modified go back.
func (c *Clock) UseFloor(f func() time.Time) { c.floor = f }

// Written is the time a write made at now records: now, or the floor.
func (c *Clock) Written(now time.Time) time.Time {
	if c.floor != nil {
		if f := c.floor(); now.Before(f) {
			return f
		}
	}
	return now
}

// ETag returns the stamp for a write of an object whose previous ETag is
// prev (0 for a new object): above prev, above every stamp this clock
// handed out before, and never below the (floored) clock.
func (c *Clock) ETag(prev uint64, now time.Time) uint64 {
	t := nextETag(prev, c.Written(now))
	for {
		last := c.last.Load()
		next := max(t, last+1)
		if c.last.CompareAndSwap(last, next) {
			return next
		}
	}
}

// dotnetEpoch is the Unix epoch in .NET ticks, so ETags look like Azure's.
const dotnetEpoch = 621355968000000000

// nextETag returns a stamp that is never lower than the clock and always
// greater than the previous stamp of the same object, so two writes in one
// clock tick still get distinct ETags.
func nextETag(prev uint64, now time.Time) uint64 {
	t := uint64(now.UnixNano()/100) + dotnetEpoch
	if t <= prev {
		t = prev + 1
	}
	return t
}

// ETagString renders an ETag as Azure does: quoted hex.
func ETagString(e uint64) string {
	var buf [20]byte
	b := appendETagHex(append(buf[:0], '"'), e)
	return string(append(b, '"'))
}

// ETagRaw is the normalized (unquoted) ETag used in condition checks.
func ETagRaw(e uint64) string {
	var buf [18]byte
	return string(appendETagHex(buf[:0], e))
}

// appendETagHex appends 0x and e in upper-case hex.
func appendETagHex(dst []byte, e uint64) []byte {
	const digits = "0123456789ABCDEF"
	dst = append(dst, '0', 'x')
	n := 1
	for v := e >> 4; v != 0; v >>= 4 {
		n++
	}
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, digits[(e>>(4*uint(i)))&0xF])
	}
	return dst
}
