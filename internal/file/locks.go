package file

import (
	"context"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/storage"
)

// checkLocks refuses a write over [off, off+n) of n that a byte-range
// lock of another handle than own covers (any lock: writes need the bytes
// unlocked; REST writes, own == 0, need the whole file unlocked).
// Reads (write false) conflict only with other handles' exclusive locks.
func checkLocks(tx storage.Tx, sid uint64, n *Node, off, ln uint64, own uint64, write bool) error {
	if n.Handles == 0 || ln == 0 {
		// Zero bytes read or written meet no lock.
		return nil
	}
	hs, err := loadHandles(tx, sid, n.ID)
	if err != nil {
		return err
	}
	for _, h := range hs {
		for _, l := range h.Locks {
			if h.ID == own {
				// An open's own locks let it read, and write where it
				// holds them exclusively; its shared locks stop its own
				// writes too (MS-FSA 2.1.4.10).
				if write && !l.Exclusive && l.overlaps(off, ln) {
					return azerr.New(azerr.FileLockConflict)
				}
				continue
			}
			if (write || l.Exclusive) && (own == 0 || l.overlaps(off, ln)) {
				return azerr.New(azerr.FileLockConflict)
			}
		}
	}
	return nil
}

// Lock takes a byte-range lock for a handle. A lock overlapping another
// handle's exclusive lock, or an exclusive lock overlapping any other
// lock, is 409 FileLockConflict.
func (s *Service) Lock(ctx context.Context, ref HandleRef, off, n uint64, exclusive bool) error {
	var brks []Break
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		brks = brks[:0]
		h, nd, err := loadOpen(tx, ref)
		if err != nil {
			return err
		}
		hs, err := loadHandles(tx, ref.Share, nd.ID)
		if err != nil {
			return err
		}
		for _, o := range hs {
			for _, l := range o.Locks {
				// A shared lock may stack on the same open's exclusive
				// lock (MS-FSA 2.1.5.7); anything else overlapping an
				// exclusive lock, or an exclusive one overlapping any
				// lock, conflicts.
				if (exclusive || l.Exclusive && o.ID != h.ID) && l.overlaps(off, n) {
					return azerr.New(azerr.FileLockConflict)
				}
			}
		}
		if err := s.staleReaders(tx, ref.Share, nd, h, &brks); err != nil {
			return err
		}
		h.Locks = append(h.Locks, Lock{Off: off, Len: n, Exclusive: exclusive})
		return tx.Set(handleKey(ref.Share, nd.ID, h.ID), encodeHandle(h))
	})
	if err == nil {
		s.deliver(brks)
	}
	return err
}

// Unlock releases a lock the handle holds at exactly off and n
// (404 ResourceNotFound when it holds none there).
func (s *Service) Unlock(ctx context.Context, ref HandleRef, off, n uint64) error {
	return s.eng.Update(ctx, func(tx storage.Tx) error {
		h, nd, err := loadOpen(tx, ref)
		if err != nil {
			return err
		}
		for i, l := range h.Locks {
			if l.Off == off && l.Len == n {
				h.Locks = append(h.Locks[:i], h.Locks[i+1:]...)
				return tx.Set(handleKey(ref.Share, nd.ID, h.ID), encodeHandle(h))
			}
		}
		return azerr.New(azerr.ResourceNotFound)
	})
}
