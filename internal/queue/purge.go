package queue

import (
	"context"
	"errors"
	"sync"

	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/worker"
	"github.com/lazuli-storage/lazuli/storage"
)

// purgeBatch is how many keys one purge transaction deletes: small enough
// that foreground requests never wait long behind it.
const purgeBatch = 512

// purger removes the messages of deleted and cleared queues, and expired
// messages of live queues, in passes of Run. Tombstones are stored, so
// work left by a stopped process is done by Run's first pass.
type purger struct {
	loop worker.Loop
	mu   sync.Mutex
	// expired holds queue ids whose expired messages should be reaped.
	expired map[uint64]bool
}

// reap asks for the expired messages of queue id qid to be removed.
func (p *purger) reap(qid uint64) {
	p.mu.Lock()
	if p.expired == nil {
		p.expired = map[uint64]bool{}
	}
	p.expired[qid] = true
	p.mu.Unlock()
	p.loop.Kick()
}

// kick asks for a pass over the tombstoned queue ids.
func (p *purger) kick() { p.loop.Kick() }

// Run is the service's background worker: until ctx ends, it deletes the
// messages of deleted and cleared queues and the expired messages of live
// ones whenever requests leave such work, and once at start for work a
// previous process left. The server runs it; nothing is purged without it.
func (s *Service) Run(ctx context.Context) error {
	return s.purge.loop.Run(ctx, s.purgePass)
}

// purgePass empties every tombstoned queue id, then reaps the queues
// asked for; it stops at the first error (the engine closed, say).
func (s *Service) purgePass(ctx context.Context) {
	if s.PurgeAll(ctx) != nil {
		return
	}
	for {
		s.purge.mu.Lock()
		var qid uint64
		found := false
		for id := range s.purge.expired {
			qid, found = id, true
			delete(s.purge.expired, id)
			break
		}
		s.purge.mu.Unlock()
		if !found || s.ReapExpired(ctx, qid) != nil {
			return
		}
	}
}

// WaitPurged blocks until the purges asked for before the call are done
// (tests use it to observe the store after a delete); it needs Run.
func (s *Service) WaitPurged(ctx context.Context) error { return s.purge.loop.Wait(ctx) }

// PurgeAll deletes the messages of every tombstoned queue id, in batches of
// purgeBatch keys per transaction, and then the tombstones. It is safe to
// run concurrently with itself and with any request.
func (s *Service) PurgeAll(ctx context.Context) error {
	for {
		qid, ok, err := s.nextTombstone(ctx)
		if err != nil || !ok {
			return err
		}
		if err := s.purgeQueue(ctx, qid); err != nil {
			return err
		}
	}
}

func (s *Service) nextTombstone(ctx context.Context) (qid uint64, ok bool, err error) {
	lo := root(tagTomb)
	err = s.engine.View(ctx, func(tx storage.Tx) error {
		it := tx.Scan(lo, keyenc.PrefixEnd(lo), false)
		defer it.Close()
		if it.Next() {
			qid, _, err = keyenc.ReadUint64(it.Key()[len(lo):])
			if err != nil {
				return errCorrupt
			}
			ok = true
		}
		return it.Err()
	})
	return qid, ok, err
}

// purgeQueue empties one tombstoned id and removes its tombstone.
func (s *Service) purgeQueue(ctx context.Context, qid uint64) error {
	for _, prefix := range [][]byte{visPrefix(qid), expPrefix(qid), msgPrefix(qid)} {
		for {
			n, err := s.deleteSome(ctx, prefix)
			if err != nil {
				return err
			}
			if n < purgeBatch {
				break
			}
		}
	}
	return s.engine.Update(ctx, func(tx storage.Tx) error {
		// The live marker and at most countShards count shards.
		stats := statsKey(qid)
		if _, err := storage.DeleteRange(tx, stats, keyenc.PrefixEnd(stats), 0); err != nil {
			return err
		}
		return tx.Delete(tombKey(qid))
	})
}

// deleteSome deletes up to purgeBatch keys under prefix in one Update and
// reports how many it deleted.
func (s *Service) deleteSome(ctx context.Context, prefix []byte) (int, error) {
	var n int
	err := s.engine.Update(ctx, func(tx storage.Tx) error {
		var err error
		n, err = storage.DeleteRange(tx, prefix, keyenc.PrefixEnd(prefix), purgeBatch)
		return err
	})
	return n, err
}

// ReapExpired removes the expired messages of queue id qid, purgeBatch at
// a time, and lowers the queue's count by as many. It stops at once when
// the id is gone (its queue was deleted or cleared: the purge takes over).
func (s *Service) ReapExpired(ctx context.Context, qid uint64) error {
	for {
		n := 0
		err := s.engine.Update(ctx, func(tx storage.Tx) error {
			n = 0
			now := micros(s.now())
			if _, err := tx.Get(statsKey(qid)); err != nil {
				if errors.Is(err, storage.ErrNotFound) {
					return nil
				}
				return err
			}
			var refs []expiredRef
			it := tx.Scan(expPrefix(qid), expiredUpTo(qid, now), false)
			for len(refs) < purgeBatch && it.Next() {
				id, ok := indexedID(it.Key())
				if !ok {
					it.Close()
					return errCorrupt
				}
				refs = append(refs, expiredRef{id: id, expKey: append([]byte(nil), it.Key()...)})
			}
			err := it.Err()
			it.Close()
			if err != nil {
				return err
			}
			for i := range refs {
				v, err := tx.Get(msgKey(qid, refs[i].id))
				if errors.Is(err, storage.ErrNotFound) {
					// Only the index entry is left; drop it alone.
					refs[i].orphan = true
					refs[i].visKey = refs[i].expKey
					continue
				}
				if err != nil {
					return err
				}
				m, err := decodeMessage(v)
				if err != nil {
					return err
				}
				refs[i].visKey = visKey(qid, m.visibleAt, refs[i].id)
			}
			n = len(refs)
			return s.dropExpired(tx, qid, refs)
		})
		if err != nil || n < purgeBatch {
			return err
		}
	}
}
