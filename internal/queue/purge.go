package queue

import (
	"context"
	"errors"
	"sync"

	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// purgeBatch is how many keys one purge transaction deletes: small enough
// that foreground requests never wait long behind it.
const purgeBatch = 512

// purger removes the messages of deleted and cleared queues, and expired
// messages of live queues, in the background. It runs one goroutine at a
// time, only while there is work: kick and reap start it (or ask the
// running one for another pass) and it exits when no work is left or the
// engine is closed. Tombstones are stored,
// so work left by a stopped process is picked up by the first kick after a
// restart (Resume, called when the service is built).
type purger struct {
	svc     *Service
	mu      sync.Mutex
	running bool
	again   bool
	done    chan struct{} // closed when the current run ends
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
	p.kick()
}

func (p *purger) kick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running {
		p.again = true
		return
	}
	p.running = true
	p.done = make(chan struct{})
	go p.run(p.done)
}

func (p *purger) run(done chan struct{}) {
	defer close(done)
	for {
		err := p.svc.PurgeAll(context.Background())
		for err == nil {
			p.mu.Lock()
			var qid uint64
			found := false
			for id := range p.expired {
				qid, found = id, true
				delete(p.expired, id)
				break
			}
			p.mu.Unlock()
			if !found {
				break
			}
			err = p.svc.ReapExpired(context.Background(), qid)
		}
		p.mu.Lock()
		if p.again && err == nil {
			p.again = false
			p.mu.Unlock()
			continue
		}
		p.running = false
		p.again = false
		p.mu.Unlock()
		return
	}
}

// Resume starts purging whatever deleted or cleared queues a previous run
// left behind.
func (s *Service) Resume() { s.purge.kick() }

// WaitPurged blocks until the background purge is idle (tests use it to
// observe the store after a delete).
func (s *Service) WaitPurged(ctx context.Context) error {
	for {
		s.purge.mu.Lock()
		running, done := s.purge.running, s.purge.done
		s.purge.mu.Unlock()
		if !running {
			return nil
		}
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

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
		if err := tx.Delete(statsKey(qid)); err != nil {
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
