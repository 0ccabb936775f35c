// Package file is the File service domain (Azure Files): shares and their
// snapshots, directories, files, ranges, leases, permissions, and the
// open-handle table that REST and SMB both consult, on top of
// storage.Engine. It knows nothing about HTTP or SMB: filehttp decodes REST
// requests into the calls here, and the SMB server turns SMB commands into
// the handle calls below.
//
// # Data model
//
// Names are case-insensitive and case-preserving: nodes are keyed by their
// parent's id and their folded (upper-cased) name and keep the name as
// created, so "A.txt" and "a.TXT" are one file and a file and a directory
// cannot share a name. Files are sparse: a file is a size plus the extents
// written (chunk references or small inline bytes); unwritten bytes read as
// zeros; extents are stored like the pages of a page blob (package blob's
// page store). A share snapshot copies the share's node, extent and
// permission keys under a new share id in one transaction (chunks are
// shared), so it is consistent and immutable. A deleted share's keys are
// purged by Run in the background (or kept for Restore Share while the
// service's share delete retention lasts). Every check (leases, handles,
// quota) runs inside the Update that writes.
//
// # REST and open handles
//
// Every REST operation consults the node's open handles in its own
// transaction, by the table of Azure's "Managing file locks":
// List/Get Properties/Get Metadata need no access; Get File and List
// Ranges need read; Set Properties/Metadata and Put Range need write;
// Create File over a file needs write and delete; Delete File conflicts
// with any open handle. A conflict is 409 SharingViolation; a node an SMB
// client marked for deletion is 409 SMBDeletePending; a byte-range lock in
// the way is 409 FileLockConflict.
//
// # API for the SMB server
//
// Errors are *azerr.Error values with Azure's codes (ResourceNotFound,
// ParentNotFound, ResourceAlreadyExists, ResourceTypeMismatch,
// SharingViolation, SMBDeletePending, FileLockConflict, DirectoryNotEmpty,
// ReadOnlyAttribute, ShareSizeLimitReached, ...) plus ErrHandleClosed and
// ErrAccessDenied; the SMB layer maps them to NT status codes.
//
//	Open(ctx, OpenRequest) (*OpenResult, error)       // SMB CREATE: disposition, desired and share access,
//	                                                  // delete-on-close; returns a HandleRef and CreateAction
//	Close(ctx, HandleRef) (*Node, error)               // last close of a delete-pending node deletes it
//	GetInfo(ctx, HandleRef) (*Node, error)             // sizes, times, attributes, id
//	ReadAt(ctx, HandleRef, off, n) ([]content.Segment, *Node, error); Stream(ctx, segs) io.ReadCloser
//	IngestBytes(ctx, p) (content.Ingested, error) then WriteAt(ctx, HandleRef, off, data)
//	SetEndOfFile(ctx, HandleRef, size)
//	SetBasicInfo(ctx, HandleRef, BasicInfo)            // times and attributes
//	SetDeletePending(ctx, HandleRef, bool)             // FileDispositionInformation
//	RenameHandle(ctx, HandleRef, newPath, replace)     // FileRenameInformation (same share)
//	Lock / Unlock(ctx, HandleRef, off, n[, exclusive]) // byte-range locks
//	ReadDir(ctx, HandleRef, prefix, marker, max)       // QUERY_DIRECTORY
//	ListHandles / ForceCloseHandles(ctx, Ref, ...)     // also served over REST
//	SetSecurity(ctx, HandleRef, sddl)                  // SET_INFO of a security descriptor
//	Watch(HandleRef, tree, filter, capacity) *Watcher  // CHANGE_NOTIFY: the changes REST and SMB make below a
//	                                                  // directory (notify.go); NotifyWritten, Quiet for SMB WRITEs
//	ReleaseOrphans(ctx)                                // Open records the cluster member that opens (Owner,
//	                                                  // fenced by cluster.Alive); the membership has the
//	                                                  // handles of dead members closed through this
//
// Paths given to Open and RenameHandle use '\' or '/' separators.
package file
