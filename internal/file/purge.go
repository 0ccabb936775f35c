package file

import (
	"context"
	"sync"

	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// purgeBatch is how many keys one purge transaction deletes: small enough
// that foreground requests never wait long behind it.
const purgeBatch = 512

// purger removes the keys of deleted shares in the background, one
// goroutine at a time and only while there is work. Tombstones are
// stored, so work left by a stopped process is resumed by Resume.
type purger struct {
	svc     *Service
	mu      sync.Mutex
	running bool
	again   bool
}

func (p *purger) kick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running {
		p.again = true
		return
	}
	p.running = true
	go p.run()
}

func (p *purger) run() {
	for {
		err := p.svc.PurgeDeleted(context.Background())
		p.mu.Lock()
		if p.again && err == nil {
			p.again = false
			p.mu.Unlock()
			continue
		}
		p.running, p.again = false, false
		p.mu.Unlock()
		return
	}
}

// Resume starts purging what deleted shares left behind (call once
// when the service starts).
func (s *Service) Resume() { s.purge.kick() }

// PurgeDeleted removes every key of every deleted share, a batch per
// transaction, then the tombstones.
func (s *Service) PurgeDeleted(ctx context.Context) error {
	tp := root(tagTomb, 0)
	for {
		var sids []uint64
		err := s.eng.View(ctx, func(tx storage.Tx) error {
			it := tx.Scan(tp, keyenc.PrefixEnd(tp), false)
			defer it.Close()
			for it.Next() {
				sid, _, err := keyenc.ReadUint64(it.Key()[len(tp):])
				if err != nil {
					return err
				}
				sids = append(sids, sid)
			}
			return it.Err()
		})
		if err != nil || len(sids) == 0 {
			return err
		}
		for _, sid := range sids {
			if err := s.purgeShare(ctx, sid); err != nil {
				return err
			}
		}
	}
}

func (s *Service) purgeShare(ctx context.Context, sid uint64) error {
	for _, tag := range purgeTags {
		p := sidPrefix(tag, sid)
		for {
			done := false
			err := s.eng.Update(ctx, func(tx storage.Tx) error {
				it := tx.Scan(p, keyenc.PrefixEnd(p), false)
				var keys [][]byte
				for it.Next() && len(keys) < purgeBatch {
					keys = append(keys, append([]byte(nil), it.Key()...))
				}
				err := it.Err()
				it.Close()
				if err != nil {
					return err
				}
				done = len(keys) < purgeBatch
				for _, k := range keys {
					if err := tx.Delete(k); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			if done {
				break
			}
		}
	}
	return s.eng.Update(ctx, func(tx storage.Tx) error { return tx.Delete(tombKey(sid)) })
}
