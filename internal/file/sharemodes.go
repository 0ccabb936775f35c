package file

import (
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/storage"
)

// access is what an operation needs of a file, for the sharing rules.
type access uint8

const (
	accessNone  access = 0
	accessRead  access = 1
	accessWrite access = 2
	// accessDelete alone is REST Delete: any open handle conflicts.
	accessDelete access = 4
)

// relevant returns the sharing-relevant access (read, write, delete) a
// desired access mask holds.
func relevant(mask uint32) access {
	var a access
	if mask&(FileReadData|FileExecute|GenericRead|GenericExecute|GenericAll|MaximumAllowed) != 0 {
		a |= accessRead
	}
	if mask&(FileWriteData|FileAppendData|GenericWrite|GenericAll|MaximumAllowed) != 0 {
		a |= accessWrite
	}
	if mask&(Delete|GenericAll|MaximumAllowed) != 0 {
		a |= accessDelete
	}
	return a
}

// shared returns the accesses a share mask lets others have.
func shared(mask uint32) access {
	var a access
	if mask&FileShareRead != 0 {
		a |= accessRead
	}
	if mask&FileShareWrite != 0 {
		a |= accessWrite
	}
	if mask&FileShareDelete != 0 {
		a |= accessDelete
	}
	return a
}

// checkREST applies the open-handle rules to a REST operation needing acc
// on n (the table of "Managing file locks"): a node pending deletion is
// 409 SMBDeletePending; Delete (acc == accessDelete) conflicts with any
// open handle; otherwise each access the operation needs must be shared
// by every handle that holds read, write or delete access (409
// SharingViolation). A read of [off, off+n) (n > 0) also conflicts with
// an exclusive byte-range lock over it (409 FileLockConflict). SMB client
// caches in the operation's way are broken first (restBreaks).
func (s *Service) checkREST(tx storage.Tx, sid uint64, n *Node, acc access, off, ln uint64) error {
	if n.DeletePending {
		return azerr.New(azerr.SMBDeletePending)
	}
	if n.Handles == 0 || acc == accessNone {
		return nil
	}
	hs, err := loadHandles(tx, sid, n.ID)
	if err != nil {
		return err
	}
	if acc == accessDelete {
		// Handles kept open by a client's handle caching may close once
		// it is broken.
		if err := s.restBreaks(tx, hs, sid, n, acc); err != nil {
			return err
		}
		if len(hs) > 0 {
			return azerr.New(azerr.SharingViolation)
		}
		return nil
	}
	for _, h := range hs {
		if relevant(h.Access) == 0 {
			continue
		}
		if acc&^shared(h.ShareAccess) != 0 {
			return azerr.New(azerr.SharingViolation)
		}
	}
	if err := s.restBreaks(tx, hs, sid, n, acc); err != nil {
		return err
	}
	if acc == accessRead && ln > 0 {
		for _, h := range hs {
			for _, l := range h.Locks {
				if l.Exclusive && l.overlaps(off, ln) {
					return azerr.New(azerr.FileLockConflict)
				}
			}
		}
	}
	return nil
}

// checkShareModes is the Windows share-access check of a new open against
// the handles open on n: the new open conflicts when it wants an access
// some counted handle does not share, or when it does not share an access
// some counted handle holds. Opens with no read, write or delete access
// are not counted and never conflict.
func (s *Service) checkShareModes(tx storage.Tx, sid uint64, n *Node, desired, share uint32) error {
	want := relevant(desired)
	if n.Handles == 0 || want == 0 {
		return nil
	}
	hs, err := loadHandles(tx, sid, n.ID)
	if err != nil {
		return err
	}
	mine := shared(share)
	for _, h := range hs {
		held := relevant(h.Access)
		if held == 0 {
			continue
		}
		if want&^shared(h.ShareAccess) != 0 || held&^mine != 0 {
			return azerr.New(azerr.SharingViolation)
		}
	}
	return nil
}
