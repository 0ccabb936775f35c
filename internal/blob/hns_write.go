package blob

// The hierarchical namespace's part in Blob API writes.
//
// A blob written at a/b/c.txt on an account with a hierarchical namespace
// makes the directories a and a/b, as on Azure. That happens in the
// write's own transaction (namespaceWrite, called from beforeReplace), so
// no reader sees the blob without its parents and a racing directory
// delete or rename is ordered wholly before or after the write. The same
// transaction checks the caller's ACL permissions and gives a new file
// its access control: the parent's default ACL when it has one, and the
// OAuth caller as owner.

import (
	"context"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/storage"
)

// namespaceWrite runs in the transaction of a write that replaces the
// whole blob b (Put Blob, Put Block List, Copy Blob) over old (nil when
// new). A missing parent directory is made; a name whose type the write
// would change, or an ancestor that is a file, is 409 PathConflict.
func (s *Service) namespaceWrite(ctx context.Context, tx storage.Tx, ref Ref, old, b *Blob, now time.Time) error {
	if !s.HierarchicalNamespace(ref.Account) {
		return nil
	}
	caller := callerOf(ctx)
	z := &authz{c: caller, tx: tx, acct: ref.Account, fs: ref.Container}
	if !caller.unchecked() {
		if err := z.create(ref.Name, old); err != nil {
			return err
		}
	}
	// A caller the ACLs refuse learns nothing of what is there.
	if err := namespaceConflict(tx, ref, old, b); err != nil {
		return err
	}
	existed, err := existingAncestors(tx, ref.Account, ref.Container, ref.Name)
	if err != nil {
		return err
	}
	if parentOf(ref.Name) != "" {
		if err := s.ensureParents(tx, ref.Account, ref.Container, ref.Name, now); err != nil {
			return err
		}
		// The parents may be new: the blob's records go under them (an
		// old record was found under the same key, as its parents were
		// there).
		if err := s.keyed(tx, &ref); err != nil {
			return err
		}
		b.key = ref.key()
	}
	if err := s.indexFolderMeta(tx, ref, old != nil && old.IsDir(), b.IsDir()); err != nil {
		return err
	}
	if caller != nil && caller.OID != "" {
		if err := z.ownMade(ref.Name, existed); err != nil {
			return err
		}
	}
	if old != nil {
		// An overwrite keeps the file's access control.
		return nil
	}
	a := defaultACL(false)
	parent, ok, err := parentACL(tx, ref.Account, ref.Container, ref.Name)
	if err != nil {
		return err
	}
	if ok {
		a.Group = parent.Group
		if in, ok := inherit(parent, false, ""); ok {
			a = in
		}
	}
	if caller != nil && caller.OID != "" {
		a.Owner = caller.OID
	}
	a.Created = b.Created
	return putACL(tx, ref.Account, ref.Container, ref.key(), a)
}

// indexFolderMeta keeps the name index in step with a write that sets the
// metadata of the path ref: a blob with hdi_isfolder=true is a directory
// (wasDir and isDir say whether it was and is one).
func (s *Service) indexFolderMeta(tx storage.Tx, ref Ref, wasDir, isDir bool) error {
	switch {
	case isDir:
		_, _, _, err := s.indexDir(tx, ref.Account, ref.Container, ref.Name)
		return err
	case wasDir:
		return s.unindexDir(tx, ref.Account, ref.Container, ref.Name)
	}
	return nil
}

// namespaceDelete runs in the transaction of Delete Blob on b, after its
// checkPath: a directory goes only when it is empty, as Azure's Blob API
// deletes no directory recursively (409 DirectoryNotEmpty; the dfs API's
// Path - Delete with recursive=true does).
func (s *Service) namespaceDelete(ctx context.Context, tx storage.Tx, ref Ref, b *Blob) error {
	if !s.HierarchicalNamespace(ref.Account) || ref.Snapshot != "" {
		return nil
	}
	if !b.IsDir() {
		return nil
	}
	kids, err := hasChildren(tx, true, ref.Account, ref.Container, ref.Name)
	if err != nil {
		return err
	}
	if kids {
		return azerr.New(azerr.DirectoryNotEmpty)
	}
	return s.unindexDir(tx, ref.Account, ref.Container, ref.Name)
}
