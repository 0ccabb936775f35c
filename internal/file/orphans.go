package file

import (
	"context"
	"errors"

	"github.com/lazuli-storage/lazuli/internal/cluster"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// ReleaseOrphans closes every handle whose owner is not a live member of
// the cluster (a dead instance's, or an unowned one left by an earlier
// process) as if its client had gone: delete-on-close and pending deletes
// take effect. The membership calls it (cluster.Holder); each handle is
// decided in the transaction that closes it, a batch per transaction.
func (s *Service) ReleaseOrphans(ctx context.Context) error {
	p := root(tagHandle, 0)
	from := p
	for {
		var keys [][]byte
		err := s.eng.View(ctx, func(tx storage.Tx) error {
			keys = keys[:0]
			it := tx.Scan(from, keyenc.PrefixEnd(p), false)
			defer it.Close()
			for it.Next() && len(keys) < purgeBatch {
				keys = append(keys, append([]byte(nil), it.Key()...))
			}
			return it.Err()
		})
		if err != nil || len(keys) == 0 {
			return err
		}
		err = s.eng.Update(ctx, func(tx storage.Tx) error {
			alive := map[uint64]bool{}
			for _, k := range keys {
				v, err := tx.Get(k)
				if errors.Is(err, storage.ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				h, err := decodeHandle(v)
				if err != nil {
					return err
				}
				ok, known := alive[h.Owner]
				if !known {
					if h.Owner != 0 {
						if ok, err = cluster.Alive(tx, h.Owner); err != nil {
							return err
						}
					}
					alive[h.Owner] = ok
				}
				if ok {
					continue
				}
				sid, _, err := keyenc.ReadUint64(k[len(p):])
				if err != nil {
					return err
				}
				n, err := nodeByID(tx, sid, h.FileID)
				if err != nil {
					return err
				}
				if n == nil {
					if err := tx.Delete(k); err != nil {
						return err
					}
					continue
				}
				if err := s.closeHandle(tx, sid, h, n); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		last := keys[len(keys)-1]
		from = append(last[:len(last):len(last)], 0)
	}
}
