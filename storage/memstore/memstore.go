// Package memstore is the engine that keeps every key in memory: an ordered
// B-tree with copy-on-write snapshots. Update transactions are serialized by
// one mutex; View transactions read an immutable published snapshot and
// never block.
//
// New gives a store that lives only in memory. Open gives the same store
// made durable by a directory (see Open): each Update's writes are appended
// to a log before anyone can see them, and the log is compacted into
// snapshot files in the background.
package memstore

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"

	"github.com/google/btree"

	"github.com/lazuli-storage/lazuli/storage"
)

type item struct {
	k, v []byte
}

func less(a, b item) bool { return bytes.Compare(a.k, b.k) < 0 }

// Store is the in-memory engine.
type Store struct {
	mu     sync.Mutex // serializes Updates
	tree   *btree.BTreeG[item]
	pub    atomic.Pointer[btree.BTreeG[item]] // immutable snapshot for View
	chunks storage.ChunkStore
	closed atomic.Bool
	log    *wal // nil for a store that lives only in memory
}

// New returns an empty in-memory engine.
func New() *Store {
	chunks := NewChunkStore()
	s := &Store{tree: btree.NewG(32, less), chunks: chunks}
	chunks.closed = &s.closed
	s.pub.Store(s.tree.Clone())
	return s
}

// View implements storage.Engine.
func (s *Store) View(ctx context.Context, fn func(storage.Tx) error) error {
	if s.closed.Load() {
		return storage.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return fn(&tx{t: s.pub.Load(), ro: true})
}

// Update implements storage.Engine. Writes go to a copy-on-write clone that
// replaces the current tree only when fn succeeds.
func (s *Store) Update(ctx context.Context, fn func(storage.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	locked := true
	defer func() {
		if locked {
			s.mu.Unlock()
		}
	}()
	if s.closed.Load() {
		return storage.ErrClosed
	}
	if s.log != nil && s.log.broken != nil {
		return s.log.broken
	}
	work := s.tree.Clone()
	t := &tx{t: work, logged: s.log != nil}
	if err := fn(t); err != nil {
		// The failure may rest on writes not on disk yet.
		if serr := s.awaitRead(&locked); serr != nil {
			return serr
		}
		return err
	}
	if !t.dirty {
		return s.awaitRead(&locked)
	}
	if s.log == nil {
		s.tree = work
		s.pub.Store(work.Clone())
		return nil
	}
	// The writes reach the log before any other transaction can see them.
	seq, err := s.log.append(t.ops, t.live)
	if err != nil {
		return err
	}
	s.tree = work
	if !s.log.sync {
		s.pub.Store(work.Clone())
		s.log.maybeCompact(s)
		return nil
	}
	// With Sync, Views see the writes only once they are on disk; later
	// Updates already build on them, and their records follow in the log.
	s.log.maybeCompact(s)
	s.mu.Unlock()
	locked = false
	return s.log.syncTo(s, seq)
}

// awaitRead lets an Update that wrote nothing answer only once everything
// it may have read is on disk, as a writing Update would. Only a store with
// Sync has writes that others can read before they are on disk. It runs
// under mu and releases it when it has to wait.
func (s *Store) awaitRead(locked *bool) error {
	if s.log == nil || !s.log.sync || s.log.seq == 0 {
		return nil
	}
	seq := s.log.seq
	s.mu.Unlock()
	*locked = false
	return s.log.syncTo(s, seq)
}

// Chunks implements storage.Engine.
func (s *Store) Chunks() storage.ChunkStore { return s.chunks }

// Close implements storage.Engine.
func (s *Store) Close() error {
	s.closed.Store(true)
	if s.log != nil {
		return s.log.close(s)
	}
	return nil
}

type tx struct {
	t      *btree.BTreeG[item]
	ro     bool
	dirty  bool
	logged bool    // the store has a log: record the writes in ops
	ops    []logOp // the writes, in order, when logged
	live   int64   // change in the bytes the tree holds, when logged
}

func (t *tx) Get(key []byte) ([]byte, error) {
	it, ok := t.t.Get(item{k: key})
	if !ok {
		return nil, storage.ErrNotFound
	}
	return it.v, nil
}

func (t *tx) Set(key, value []byte) error {
	if t.ro {
		return storage.ErrReadOnly
	}
	t.dirty = true
	it := item{k: bytes.Clone(key), v: bytes.Clone(value)}
	old, replaced := t.t.ReplaceOrInsert(it)
	if t.logged {
		t.ops = append(t.ops, logOp{k: it.k, v: it.v})
		if replaced {
			t.live += int64(len(it.v) - len(old.v))
		} else {
			t.live += itemSize(it)
		}
	}
	return nil
}

func (t *tx) Delete(key []byte) error {
	if t.ro {
		return storage.ErrReadOnly
	}
	t.dirty = true
	old, found := t.t.Delete(item{k: key})
	if t.logged && found {
		t.ops = append(t.ops, logOp{k: old.k, del: true})
		t.live -= itemSize(old)
	}
	return nil
}

func (t *tx) Scan(lower, upper []byte, reverse bool) storage.Iterator {
	return &iter{t: t.t, lo: bytes.Clone(lower), hi: bytes.Clone(upper), reverse: reverse}
}

// iter pulls items from the tree in small batches so that the tree is never
// held in a callback while the caller runs.
type iter struct {
	t       *btree.BTreeG[item]
	lo, hi  []byte
	reverse bool
	buf     []item
	pos     int
	cur     item
	last    []byte // last key returned; meaningful once started is set
	started bool   // at least one item was returned
	done    bool   // the current batch is the final one
}

const batch = 64

func (it *iter) fill() {
	it.buf = it.buf[:0]
	it.pos = 0
	collect := func(x item) bool {
		if it.started && bytes.Equal(x.k, it.last) {
			return true // resume point: already returned
		}
		it.buf = append(it.buf, x)
		return len(it.buf) < batch
	}
	if !it.reverse {
		from := it.lo
		if it.started {
			from = it.last
		}
		if it.hi == nil {
			it.t.AscendGreaterOrEqual(item{k: from}, collect)
		} else {
			it.t.AscendRange(item{k: from}, item{k: it.hi}, collect)
		}
	} else {
		// Descend from just below hi (or from last) down to lo.
		visit := func(x item) bool {
			if bytes.Compare(x.k, it.lo) < 0 {
				return false
			}
			if it.hi != nil && !it.started && bytes.Compare(x.k, it.hi) >= 0 {
				return true
			}
			return collect(x)
		}
		switch {
		case it.started:
			it.t.DescendLessOrEqual(item{k: it.last}, visit)
		case it.hi != nil:
			it.t.DescendLessOrEqual(item{k: it.hi}, visit)
		default:
			it.t.Descend(visit)
		}
	}
	if len(it.buf) < batch {
		it.done = true
	}
}

func (it *iter) Next() bool {
	if it.pos >= len(it.buf) {
		if it.done {
			return false
		}
		it.fill()
		if len(it.buf) == 0 {
			return false
		}
	}
	it.cur = it.buf[it.pos]
	it.pos++
	it.last = it.cur.k
	it.started = true
	return true
}

func (it *iter) Key() []byte   { return it.cur.k }
func (it *iter) Value() []byte { return it.cur.v }
func (it *iter) Err() error    { return nil }
func (it *iter) Close() error {
	it.done, it.buf, it.pos = true, nil, 0
	return nil
}
