package storage

import (
	"context"
	"errors"
	"io"
)

// DeleteRange deletes the keys k with lower <= k < upper (nil upper: no
// bound) inside tx, in key order, at most limit of them when limit > 0,
// and reports how many it deleted. Callers that clear ranges of unbounded
// size pass a limit and call again in a fresh Update until fewer than
// limit were deleted, so that no transaction grows with the data.
func DeleteRange(tx Tx, lower, upper []byte, limit int) (int, error) {
	var keys [][]byte
	it := tx.Scan(lower, upper, false)
	for (limit <= 0 || len(keys) < limit) && it.Next() {
		keys = append(keys, append([]byte(nil), it.Key()...))
	}
	err := it.Err()
	it.Close()
	if err != nil {
		return 0, err
	}
	// Deleting while the iterator is open has no defined effect on it
	// (see Tx.Scan), hence the keys are gathered first.
	for i, k := range keys {
		if err := tx.Delete(k); err != nil {
			return i, err
		}
	}
	return len(keys), nil
}

// MultiGetter is implemented by the Tx of engines whose every read is a
// round trip to a server (pgstore): GetMany reads several keys in one.
type MultiGetter interface {
	// GetMany returns the values stored at keys, in the order of keys,
	// with nil for an absent key (an empty value is a non-nil empty
	// slice). It MUST read exactly what a Get of each key would, in the
	// same transaction, and observe the transaction's earlier writes.
	GetMany(keys [][]byte) ([][]byte, error)
}

// GetMany reads keys in tx: in one call when tx is a MultiGetter, else by
// one Get per key. Values are as MultiGetter.GetMany returns them. Callers
// use it where they know several keys they need before reading any, so
// that on a server engine the reads cost one round trip instead of many.
func GetMany(tx Tx, keys [][]byte) ([][]byte, error) {
	if m, ok := tx.(MultiGetter); ok {
		return m.GetMany(keys)
	}
	out := make([][]byte, len(keys))
	for i, k := range keys {
		v, err := tx.Get(k)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if v == nil {
			v = []byte{}
		}
		out[i] = v
	}
	return out, nil
}

// Inserter is implemented by the Tx of engines for which creating a key
// known to be new costs less than Set (pgstore: a plain INSERT).
type Inserter interface {
	// Insert stores value at key, which the caller guarantees is absent
	// (a key made unique by construction, such as one embedding a
	// fresh random id). On an absent key it MUST behave exactly as Set;
	// on a present key the engine MAY fail the Update instead.
	Insert(key, value []byte) error
}

// Insert stores value at a key the caller guarantees is absent: through
// Inserter when tx has it, else by Set.
func Insert(tx Tx, key, value []byte) error {
	if i, ok := tx.(Inserter); ok {
		return i.Insert(key, value)
	}
	return tx.Set(key, value)
}

// TransientUpdater is implemented by engines for which committing state
// that ends with the process anyway (open SMB handles and the counts and
// leases that go with them: a restart closes every handle of the instance
// it replaces) can cost less than a durable Update: the log engine skips
// the wait for an fsync.
type TransientUpdater interface {
	// UpdateTransient is Update, except that once it returns nil its
	// writes are visible to every later View and Update but MAY be lost
	// if the process ends before a later Update (or Close) puts them on
	// disk. It never exposes another Update's writes before they are as
	// durable as Update promises. The writes of fn MUST be ones a restart
	// makes moot; fn decides nothing that must outlive the process.
	UpdateTransient(ctx context.Context, fn func(Tx) error) error
}

// UpdateTransient runs fn as TransientUpdater.UpdateTransient where eng
// has it, else as a plain Update.
func UpdateTransient(ctx context.Context, eng Engine, fn func(Tx) error) error {
	if t, ok := eng.(TransientUpdater); ok {
		return t.UpdateTransient(ctx, fn)
	}
	return eng.Update(ctx, fn)
}

// DeferredPutter is implemented by chunk stores whose durable Put waits for
// the disk (filestore with sync). PutDeferred writes a chunk as Put does
// but returns once its bytes are written, before they are durable, with
// wait, which returns once the chunk is as durable as Put makes it (or the
// error that kept it from being so; the chunk is then gone). A caller
// MUST see wait return nil before it commits a reference to the chunk,
// and MUST call wait exactly once. Writing the next chunk while the disk
// flushes the last one is what it is for: an ingest of several chunks
// waits for the disk once, not once per chunk.
type DeferredPutter interface {
	PutDeferred(ctx context.Context, r io.Reader) (ref ChunkRef, n int64, wait func() error, err error)
}

// PutDeferred runs DeferredPutter.PutDeferred where cs has it, else Put
// with a wait that has nothing left to wait for.
func PutDeferred(ctx context.Context, cs ChunkStore, r io.Reader) (ChunkRef, int64, func() error, error) {
	if d, ok := cs.(DeferredPutter); ok {
		return d.PutDeferred(ctx, r)
	}
	ref, n, err := cs.Put(ctx, r)
	return ref, n, noWait, err
}

func noWait() error { return nil }
