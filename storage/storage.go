// Package storage defines the narrow contract every lazuli storage engine
// implements: an ordered key/value store with serializable Update
// transactions and snapshot View transactions, plus an immutable chunk store
// for bytes.
//
// Engines know nothing about Azure. All Azure semantics (ETags, leases,
// conditions, pop receipts) live in the domain packages and run inside a
// single Update so that every check is atomic with the write it guards.
package storage

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"
)

// Engine sentinels. Domain packages translate them into Azure error codes.
var (
	// ErrNotFound is returned by Tx.Get when the key is absent, and by
	// ChunkStore.Open when the chunk does not exist.
	ErrNotFound = errors.New("storage: not found")
	// ErrConflict is returned by Update when a transaction could not be
	// committed because of a concurrent transaction and retries ran out.
	ErrConflict = errors.New("storage: transaction conflict")
	// ErrClosed is returned by every method after Close.
	ErrClosed = errors.New("storage: engine closed")
	// ErrReadOnly is returned by Set and Delete inside a View.
	ErrReadOnly = errors.New("storage: write in read-only transaction")
	// ErrUnavailable is returned (wrapped) by an engine on a database
	// server it cannot reach for now; the caller may retry later. An
	// Update failing with it may or may not have committed.
	ErrUnavailable = errors.New("storage: database unavailable")
)

// Engine is an ordered key/value store with transactions and a chunk store.
type Engine interface {
	// View runs fn against a consistent snapshot of the store. fn MUST NOT
	// write: Set and Delete return ErrReadOnly. Every read inside one View
	// MUST observe the same point in time, which includes every Update that
	// returned nil before View was called. The Tx MUST NOT be used after fn
	// returns.
	View(ctx context.Context, fn func(Tx) error) error

	// Update runs fn in a serializable read-write transaction. If fn
	// returns an error nothing it wrote is applied and Update returns that
	// error unchanged. If fn returns nil, Update returns nil only once the
	// writes are durable to the degree the engine was configured for (at
	// least: they survive the process being killed). Update MAY call fn
	// more than once after a conflict, so fn MUST have no effects outside
	// the Tx other than ones that are safe to repeat. fn MUST NOT block on
	// anything but the Tx, and MUST NOT call Update on the same engine.
	//
	// An engine MAY run fn on a goroutine other than the caller's (group
	// commit does); a panic in fn MUST then be re-raised in the caller
	// with nothing fn wrote applied. If ctx is done before fn starts,
	// Update returns ctx.Err() without running fn; once fn has run,
	// Update reports the real outcome of the commit.
	Update(ctx context.Context, fn func(Tx) error) error

	// Chunks returns the engine's chunk store.
	Chunks() ChunkStore

	// Close releases all resources. Pending Updates either complete or
	// return ErrClosed.
	Close() error
}

// Tx is a transaction handle. Keys and values are arbitrary byte strings,
// including empty ones; the caller MUST NOT modify a slice after passing it
// to Set, and MUST NOT modify slices returned by Get or an Iterator. A
// slice returned by Get or an Iterator MUST stay valid and unchanged after
// the transaction ends. A Tx is used by one goroutine at a time.
type Tx interface {
	// Get returns the value stored at key, or ErrNotFound. Inside Update it
	// observes the transaction's own earlier writes.
	Get(key []byte) ([]byte, error)
	// Set stores value at key, replacing any previous value.
	Set(key, value []byte) error
	// Delete removes key. Deleting an absent key is not an error.
	Delete(key []byte) error
	// Scan iterates keys k with lower <= k < upper in bytewise order
	// (descending when reverse is set). A nil upper means no upper bound.
	// Inside Update the iterator reflects writes made before Scan was
	// called; the effect of writes made while iterating is unspecified.
	Scan(lower, upper []byte, reverse bool) Iterator
}

// Iterator walks a key range. Typical use:
//
//	it := tx.Scan(lo, hi, false)
//	defer it.Close()
//	for it.Next() { use(it.Key(), it.Value()) }
//	if err := it.Err(); err != nil { ... }
type Iterator interface {
	Next() bool
	Key() []byte
	Value() []byte
	Err() error
	Close() error
}

// ChunkRef names an immutable chunk. It is opaque to callers and safe to
// store in metadata values.
type ChunkRef string

// ChunkStore holds immutable byte chunks. Chunks are written before the
// metadata that points at them, so a chunk can exist without references;
// the garbage collector removes such chunks once they are older than a
// grace period.
type ChunkStore interface {
	// Put stores everything read from r as a new chunk and returns its
	// reference and size. The chunk is durable to the engine's configured
	// degree before Put returns. Durable engines MUST stream r to storage
	// without holding it whole in memory. If Put fails, no chunk remains.
	Put(ctx context.Context, r io.Reader) (ChunkRef, int64, error)
	// Open returns a reader for n bytes of the chunk starting at off
	// (n < 0 means to the end). A range past the end is cut short: an off
	// at or beyond the end yields an empty reader. A ref the store does
	// not hold, or could never have produced, yields ErrNotFound. The
	// reader MUST NOT allocate in proportion to n (stream, do not buffer).
	Open(ctx context.Context, ref ChunkRef, off, n int64) (io.ReadCloser, error)
	// Delete removes chunks. Absent chunks are ignored. A reader opened
	// before Delete either keeps reading the chunk's bytes or fails; it
	// never returns other bytes.
	Delete(ctx context.Context, refs []ChunkRef) error
	// Walk calls fn for every stored chunk with the time it was written,
	// and stops at the first error fn returns. Chunks put or deleted
	// while Walk runs may or may not be reported.
	Walk(ctx context.Context, fn func(ref ChunkRef, written time.Time) error) error
}

// GetValue reads one key in its own View. The returned slice belongs to
// the caller.
func GetValue(ctx context.Context, e Engine, key []byte) ([]byte, error) {
	var out []byte
	err := e.View(ctx, func(tx Tx) error {
		v, err := tx.Get(key)
		if err != nil {
			return err
		}
		out = append([]byte(nil), v...)
		return nil
	})
	return out, err
}

// ChunkMarker reports every chunk a service still references. The chunk
// garbage collector calls each registered marker and removes chunks that no
// marker reported and that are older than its grace period.
type ChunkMarker func(ctx context.Context, e Engine, mark func(ChunkRef)) error

// Pinger is an optional interface of engines that depend on something
// outside the process, such as a database server: Ping reports whether it
// answers now. The admin listener's readiness check calls it.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Shared is an optional interface of engines that several lazuli
// instances may use at once (a database server): their data, including
// the test clock's offset and open SMB handles, is not this process's
// alone. SharedByInstances only marks the capability.
type Shared interface {
	SharedByInstances()
}

// Summarizer is an optional interface of engines with figures worth one
// log line when they stop (the log engine's group commit): the server
// logs Summary's message and attributes once the engine is closed. An
// empty message means there is nothing to report.
type Summarizer interface {
	Summary() (msg string, attrs []slog.Attr)
}

// Stat is one figure an engine keeps about its own work.
type Stat struct {
	// Name is a snake_case name without unit prefix or engine name
	// ("fsyncs_total", "log_bytes"); Help says what it counts.
	Name, Help string
	// Counter is true for a count that only grows, false for a level.
	Counter bool
	Value   float64
}

// StatsReporter is an optional interface of engines that keep figures
// about their own work (fsyncs, retries, compactions): EngineStats
// returns them as of now, always the same names in the same order.
type StatsReporter interface {
	EngineStats() []Stat
}
