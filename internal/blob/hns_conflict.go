package blob

// Blob writes against the shape of a hierarchical namespace.
//
// On an account with a hierarchical namespace a name is a file or a
// directory, never both, and every ancestor of a path is a directory. A
// Blob API write that would break that (a file over a directory, a
// directory marker over a file, a blob under a file) answers 409
// PathConflict, as the dfs API does for the same request; the check runs
// in the write's transaction, so two racing writes that would together
// break it cannot both succeed.

import (
	"context"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/storage"
)

// namespaceConflict checks that b, written by the Blob API at ref over
// old (nil when there is no record), keeps the resource type of the
// name: a file stays a file and a directory (a record with hdi_isfolder,
// or a name with paths under it) stays a directory. A page blob is not
// offered on such an account (409 BlobOperationNotSupported).
func namespaceConflict(tx storage.Tx, ref Ref, old, b *Blob) error {
	if b.Type == PageBlob {
		// A copy from an account without a namespace would make one
		// (Put Blob of a page blob is refused before it gets here).
		return azerr.New(azerr.BlobOperationNotSupported)
	}
	if old != nil {
		if old.IsDir() != b.IsDir() {
			return azerr.New(azerr.PathConflict)
		}
		return nil
	}
	if b.IsDir() {
		// A directory marker over an implied directory gives it a record.
		return nil
	}
	kids, err := hasChildren(tx, true, ref.Account, ref.Container, ref.Name)
	if err != nil {
		return err
	}
	if kids {
		return azerr.New(azerr.PathConflict)
	}
	return nil
}

// namespaceMeta is the metadata Set Blob Metadata stores on b when the
// caller sends meta: on an account with a hierarchical namespace the
// directory marker is the resource type, which metadata does not change,
// so a directory keeps hdi_isfolder and a file never gains it.
func (s *Service) namespaceMeta(ref Ref, b *Blob, meta []KV) []KV {
	if !s.HierarchicalNamespace(ref.Account) || ref.Snapshot != "" {
		return meta
	}
	if b.IsDir() {
		return append([]KV{{FolderMeta, "true"}}, withoutFolder(meta)...)
	}
	return withoutFolder(meta)
}

// blockWritable refuses Put Block and Put Block List on b, the current
// record of the blob they write, when the dfs API made it (Path -
// Create): Azure's known issues of Data Lake Storage say such a file
// can be overwritten by Put Blob but not by Put Block or Put Block List,
// and its Blob error catalog names the answer, 409
// BlobOperationNotSupported. Only an account with a hierarchical
// namespace has such records. The caller's ACL check comes first, so
// that one the ACLs refuse learns nothing of how the file was made.
func blockWritable(ctx context.Context, tx storage.Tx, ref Ref, b *Blob) error {
	if b == nil || !b.PathCreated {
		return nil
	}
	if err := checkPath(ctx, tx, ref, OpCreate); err != nil {
		return err
	}
	return azerr.New(azerr.BlobOperationNotSupported)
}

// namespaceRestore runs in the transaction of Undelete Blob before b, a
// soft-deleted blob, comes back at ref over live (nil when no live blob
// is there; otherwise b comes back as its snapshot): on an account with
// a hierarchical namespace b must be of the type the name now has (409
// PathConflict: no file where a directory now is, nor the reverse), and
// the parents of a blob that comes back as the live one are made as a
// Blob write makes them (PathConflict when one is now a file).
func (s *Service) namespaceRestore(tx storage.Tx, ref Ref, live, b *Blob, now time.Time) error {
	if !s.HierarchicalNamespace(ref.Account) {
		return nil
	}
	if err := namespaceConflict(tx, ref, live, b); err != nil {
		return err
	}
	if live != nil || parentOf(ref.Name) == "" {
		return nil
	}
	return s.ensureParents(tx, ref.Account, ref.Container, ref.Name, now)
}
