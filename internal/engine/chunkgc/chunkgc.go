// Package chunkgc removes chunks that no metadata references any more, by
// mark and sweep over an engine's chunk store.
//
// Chunks are written before the metadata that points at them and are
// shared by snapshots and copies, so nothing deletes a chunk when a blob is
// overwritten or deleted. Instead each service registers a
// storage.ChunkMarker that reports every chunk it still references, and the
// collector periodically removes the rest.
//
// # Safety
//
// Two windows make a chunk that looks unreferenced still needed:
//
//   - A chunk has been Put but the Update that will reference it has not
//     committed yet.
//   - A request read a chunk reference from a snapshot taken just before an
//     overwrite or delete, and opens the chunk a moment later.
//
// Both last no longer than one request. The collector therefore removes a
// chunk only when an earlier collection found it unreferenced, it is still
// unreferenced now, and every request that was in flight when that earlier
// collection ended its marking has ended since. That earlier collection
// saw every reference made before it; a reference made later can only
// come from a request that already held the chunk's reference (chunks are
// immutable and Put returns fresh references), that is, one that was in
// flight; and once such a request has ended, its references are in the
// metadata this collection marks.
//
// The server reports its requests to an Activity, so garbage goes within
// two collection intervals of the last request that could use it. Without
// an Activity the collector cannot tell which requests were in flight and
// assumes none lasts longer than Grace: the earlier collection must be at
// least Grace old, and the chunk written at least Grace ago. The memory of
// earlier collections lives in the Collector; a restart only delays
// removal by one interval (or one Grace).
package chunkgc

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/lazuli-storage/lazuli/storage"
)

// Defaults used by Run when zero values are passed.
const (
	DefaultGrace = time.Hour
	// DefaultInterval is the time between collections. A collection
	// only runs when requests were made since the last one or earlier
	// collections left chunks to remove, and only marks when the chunk
	// store holds chunks.
	DefaultInterval = 15 * time.Second
)

// deleteBatch bounds how many refs one ChunkStore.Delete call receives.
const deleteBatch = 1000

// Collector runs collections against one engine. It is safe for concurrent
// use; collections are serialized.
type Collector struct {
	engine  storage.Engine
	markers []storage.ChunkMarker
	grace   time.Duration

	// Now is the clock (tests may replace it before the first Collect).
	Now func() time.Time
	// Activity, when set before the first Collect, tells which requests
	// were in flight; Grace then plays no part.
	Activity *Activity

	mu sync.Mutex
	// unreferencedSince maps a chunk to the first collection that found
	// it unreferenced (and every later one did too).
	unreferencedSince map[storage.ChunkRef]pass
	lastOps           uint64 // Activity's operation count at the last collection
	collected         bool   // a collection has run
}

// pass is the end of a collection's marking.
type pass struct {
	at  time.Time
	gen uint64 // Activity's generation; operations of it and older were in flight
}

// New returns a collector for engine's chunk store. grace (zero:
// DefaultGrace) must exceed the longest request; markers must together
// report every chunk any service references.
func New(engine storage.Engine, markers []storage.ChunkMarker, grace time.Duration) *Collector {
	if grace <= 0 {
		grace = DefaultGrace
	}
	return &Collector{
		engine:            engine,
		markers:           markers,
		grace:             grace,
		Now:               time.Now,
		unreferencedSince: map[storage.ChunkRef]pass{},
	}
}

// settled reports, at the start of a collection, whether every request in
// flight at the end of collection p's marking has ended (or, without an
// Activity, whether p is Grace old).
func (c *Collector) settled(p pass, now time.Time) bool {
	if c.Activity != nil {
		return c.Activity.endedBy(p.gen)
	}
	return now.Sub(p.at) >= c.grace
}

// Collect runs one mark-and-sweep pass and reports how many chunks it
// removed. If any marker fails, nothing is removed.
func (c *Collector) Collect(ctx context.Context) (removed int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.Now()
	cs := c.engine.Chunks()
	c.collected = true
	if c.Activity != nil {
		c.lastOps = c.Activity.ops()
	}
	// Judged before marking: a request that has ended by now made its
	// references before the marking below starts.
	ripe := map[storage.ChunkRef]bool{}
	for ref, p := range c.unreferencedSince {
		if c.settled(p, now) {
			ripe[ref] = true
		}
	}

	// List first, mark second: a chunk written after the listing is not a
	// candidate, and one listed is either marked or truly unreferenced at
	// marking time.
	written := map[storage.ChunkRef]time.Time{}
	if err := cs.Walk(ctx, func(ref storage.ChunkRef, t time.Time) error {
		written[ref] = t
		return nil
	}); err != nil {
		return 0, fmt.Errorf("chunkgc: walk: %w", err)
	}

	if len(written) == 0 {
		clear(c.unreferencedSince)
		return 0, nil
	}
	var markMu sync.Mutex
	live := map[storage.ChunkRef]bool{}
	mark := func(ref storage.ChunkRef) {
		markMu.Lock()
		if _, ok := written[ref]; ok {
			live[ref] = true
		}
		markMu.Unlock()
	}
	for i, m := range c.markers {
		if err := m(ctx, c.engine, mark); err != nil {
			return 0, fmt.Errorf("chunkgc: marker %d: %w", i, err)
		}
	}
	this := pass{at: now}
	if c.Activity != nil {
		this.gen = c.Activity.checkpoint()
	}

	// Forget chunks that are gone.
	for ref := range c.unreferencedSince {
		if _, ok := written[ref]; !ok {
			delete(c.unreferencedSince, ref)
		}
	}
	var doomed []storage.ChunkRef
	for ref, w := range written {
		if live[ref] {
			delete(c.unreferencedSince, ref)
			continue
		}
		if _, seen := c.unreferencedSince[ref]; !seen {
			c.unreferencedSince[ref] = this
			continue
		}
		if ripe[ref] && (c.Activity != nil || now.Sub(w) >= c.grace) {
			doomed = append(doomed, ref)
		}
	}
	for len(doomed) > 0 {
		n := min(len(doomed), deleteBatch)
		if err := cs.Delete(ctx, doomed[:n]); err != nil {
			return removed, fmt.Errorf("chunkgc: delete: %w", err)
		}
		for _, ref := range doomed[:n] {
			delete(c.unreferencedSince, ref)
		}
		removed += n
		doomed = doomed[n:]
	}
	return removed, nil
}

// Run collects every interval until ctx ends, logging failures; a zero
// interval selects DefaultInterval. It skips a collection when nothing can
// have changed: with an Activity, no request was made since the last
// collection and none left chunks waiting for removal.
func (c *Collector) Run(ctx context.Context, interval time.Duration, log *slog.Logger) {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if c.idle() {
			continue
		}
		removed, err := c.Collect(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("chunk garbage collection", "err", err, "removed", removed)
		case removed > 0:
			log.Info("chunk garbage collection", "removed", removed)
		}
	}
}

// idle reports whether a collection now would find nothing new.
func (c *Collector) idle() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Activity != nil && c.collected && len(c.unreferencedSince) == 0 && c.Activity.ops() == c.lastOps
}
