package file

import (
	"context"

	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// purgeBatch is how many keys one purge transaction deletes: small enough
// that foreground requests never wait long behind it.
const purgeBatch = 512

// Run is the service's background worker: until ctx ends, it removes the
// keys of deleted shares whenever a delete leaves such work, and once at
// start for work a previous process left (tombstones are stored). The
// server runs it; nothing is purged without it.
func (s *Service) Run(ctx context.Context) error {
	return s.purge.Run(ctx, func(ctx context.Context) { s.PurgeDeleted(ctx) })
}

// PurgeDeleted removes every key of every deleted share, a batch per
// transaction, then the tombstones.
func (s *Service) PurgeDeleted(ctx context.Context) error {
	if err := s.expireDeleted(ctx); err != nil {
		return err
	}
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
