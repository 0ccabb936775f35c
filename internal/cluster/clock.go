package cluster

import (
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// Clock is lazuli's steerable clock: real time plus an offset that tests
// move forward (lease expiry, visibility timeouts, SAS expiry without
// waiting) or set, and reset back to real time.
//
// With an engine that several instances share, the offset lives in the
// engine under one key and every instance reads it back (Run), so a clock
// moved on one instance moves on all. The clock also keeps a floor: the
// latest time it showed before it was moved back, below which no ETag
// stamp goes (Floor), so that moving the clock back cannot hand out an
// ETag again. Its methods are safe for concurrent use.
type Clock struct {
	base func() time.Time
	eng  storage.Engine // where the offset is shared (nil: this process only)
	mu   sync.Mutex     // serializes moves
	// offset (ns) and floor (Unix ns, 0 for none) are read on every Now
	// and Floor call.
	offset, floor atomic.Int64
}

// NewClock returns a clock reading base (time.Now, or a database's clock)
// with no offset. With a shared engine the offset is kept in it; nil
// keeps it in this process.
func NewClock(base func() time.Time, shared storage.Engine) *Clock {
	return &Clock{base: base, eng: shared}
}

// Now is base plus the offset.
func (c *Clock) Now() time.Time {
	t := c.base()
	if off := c.offset.Load(); off != 0 {
		t = t.Add(time.Duration(off))
	}
	return t
}

// Offset is how far the clock is from real time.
func (c *Clock) Offset() time.Duration { return time.Duration(c.offset.Load()) }

// Floor is the latest time the clock showed before it was last moved
// back (the zero time if it never was). Stamps that must never repeat
// (ETags) take the later of it and Now.
func (c *Clock) Floor() time.Time {
	if f := c.floor.Load(); f != 0 {
		return time.Unix(0, f)
	}
	return time.Time{}
}

// Advance moves the clock by d (negative: back).
func (c *Clock) Advance(ctx context.Context, d time.Duration) error {
	return c.move(ctx, func(off time.Duration) time.Duration { return off + d })
}

// Set moves the clock to t.
func (c *Clock) Set(ctx context.Context, t time.Time) error {
	return c.move(ctx, func(time.Duration) time.Duration { return t.Sub(c.base()) })
}

// Reset returns the clock to real time.
func (c *Clock) Reset(ctx context.Context) error {
	return c.move(ctx, func(time.Duration) time.Duration { return 0 })
}

// clockKey holds the shared offset and floor.
var clockKey = keyenc.AppendString(nil, "clock")

// move applies f to the offset, in the engine when shared, and raises
// the floor when the clock goes back.
func (c *Clock) move(ctx context.Context, f func(time.Duration) time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.eng == nil {
		off, floor := c.next(f, c.Offset(), c.floor.Load())
		c.offset.Store(int64(off))
		c.floor.Store(floor)
		return nil
	}
	var off time.Duration
	var floor int64
	err := c.eng.Update(ctx, func(tx storage.Tx) error {
		cur, curFloor, err := loadClock(tx)
		if err != nil {
			return err
		}
		off, floor = c.next(f, cur, curFloor)
		return tx.Set(clockKey, encodeClock(off, floor))
	})
	if err != nil {
		return err
	}
	c.offset.Store(int64(off))
	c.floor.Store(floor)
	return nil
}

// next is the offset f makes of cur, and the floor: raised to the time
// shown now when the clock goes back.
func (c *Clock) next(f func(time.Duration) time.Duration, cur time.Duration, floor int64) (time.Duration, int64) {
	off := f(cur)
	if off < cur {
		floor = max(floor, c.base().Add(cur).UnixNano())
	}
	return off, floor
}

func loadClock(tx storage.Tx) (time.Duration, int64, error) {
	v, err := tx.Get(clockKey)
	if errors.Is(err, storage.ErrNotFound) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	if len(v) != 16 {
		return 0, 0, errors.New("cluster: malformed clock record")
	}
	return time.Duration(binary.BigEndian.Uint64(v)), int64(binary.BigEndian.Uint64(v[8:])), nil
}

func encodeClock(off time.Duration, floor int64) []byte {
	v := binary.BigEndian.AppendUint64(nil, uint64(off))
	return binary.BigEndian.AppendUint64(v, uint64(floor))
}

// Refresh reads the shared offset and floor from the engine (a no-op for
// a clock of this process only).
func (c *Clock) Refresh(ctx context.Context) error {
	if c.eng == nil {
		return nil
	}
	var off time.Duration
	var floor int64
	err := c.eng.View(ctx, func(tx storage.Tx) error {
		var err error
		off, floor, err = loadClock(tx)
		return err
	})
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.offset.Store(int64(off))
	c.floor.Store(floor)
	c.mu.Unlock()
	return nil
}

// ClockRefresh is how often Run reads the shared offset: another
// instance's move reaches this one within it.
const ClockRefresh = 250 * time.Millisecond

// Run refreshes the shared offset every ClockRefresh until ctx ends.
func (c *Clock) Run(ctx context.Context, log *slog.Logger) error {
	if c.eng == nil {
		return nil
	}
	t := time.NewTicker(ClockRefresh)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		err := c.Refresh(ctx)
		if err != nil && !failing && ctx.Err() == nil {
			log.Warn("clock: read the shared offset", "err", err)
		}
		failing = err != nil
	}
}
