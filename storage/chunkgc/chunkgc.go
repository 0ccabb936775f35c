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
// chunk only when (a) it was written at least Grace ago, and (b) an earlier
// collection, at least Grace ago, already found it unreferenced, and it is
// still unreferenced now. Rule (b) covers the second window: whoever read
// the reference did so before that earlier collection, so with Grace longer
// than the longest request they are done. The memory of (b) lives in the
// Collector; a restart only delays removal by one Grace.
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
	DefaultGrace    = time.Hour
	DefaultInterval = 10 * time.Minute
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

	mu sync.Mutex
	// unreferencedSince maps a chunk to the time of the first collection
	// that found it unreferenced (and every later one did too).
	unreferencedSince map[storage.ChunkRef]time.Time
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
		unreferencedSince: map[storage.ChunkRef]time.Time{},
	}
}

// Collect runs one mark-and-sweep pass and reports how many chunks it
// removed. If any marker fails, nothing is removed.
func (c *Collector) Collect(ctx context.Context) (removed int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.Now()
	cs := c.engine.Chunks()

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
		since, seen := c.unreferencedSince[ref]
		if !seen {
			c.unreferencedSince[ref] = now
			continue
		}
		if now.Sub(since) >= c.grace && now.Sub(w) >= c.grace {
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

// Run collects every interval until ctx ends, logging failures. Zero grace
// or interval select DefaultGrace and DefaultInterval.
func Run(ctx context.Context, engine storage.Engine, markers []storage.ChunkMarker, grace, interval time.Duration, log *slog.Logger) {
	New(engine, markers, grace).Run(ctx, interval, log)
}

// Run collects every interval (zero: DefaultInterval) until ctx ends,
// logging failures.
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
		removed, err := c.Collect(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("chunk garbage collection", "err", err, "removed", removed)
		case removed > 0:
			log.Info("chunk garbage collection", "removed", removed)
		}
	}
}
