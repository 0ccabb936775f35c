package file

import (
	"cmp"
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/cluster"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/lease"
	"github.com/lazuli-storage/lazuli/storage"
)

// SMB access mask bits (MS-SMB2 2.2.13.1) the sharing rules look at.
const (
	FileReadData    uint32 = 0x00000001
	FileWriteData   uint32 = 0x00000002
	FileAppendData  uint32 = 0x00000004
	FileExecute     uint32 = 0x00000020
	Delete          uint32 = 0x00010000
	MaximumAllowed  uint32 = 0x02000000
	GenericAll      uint32 = 0x10000000
	GenericExecute  uint32 = 0x20000000
	GenericWrite    uint32 = 0x40000000
	GenericRead     uint32 = 0x80000000
	FileShareRead   uint32 = 0x1
	FileShareWrite  uint32 = 0x2
	FileShareDelete uint32 = 0x4
)

func loadHandles(tx storage.Tx, sid, fid uint64) ([]*Handle, error) {
	p := handlesPrefix(sid, fid)
	it := tx.Scan(p, keyenc.PrefixEnd(p), false)
	defer it.Close()
	var out []*Handle
	for it.Next() {
		h, err := decodeHandle(it.Value())
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, it.Err()
}

// ---- the API the SMB server uses ----

// Errors of handle operations that have no REST equivalent.
var (
	// ErrHandleClosed: the handle is not open (closed, force-closed, or
	// its file was deleted).
	ErrHandleClosed = errors.New("file: handle is not open")
	// ErrAccessDenied: the handle was not opened with the access the
	// operation needs.
	ErrAccessDenied = errors.New("file: access denied")
	// ErrCannotDelete: a read-only file or directory was opened to be
	// deleted on close.
	ErrCannotDelete = errors.New("file: read-only, cannot be deleted")
	// ErrParentInUse: an open of the parent directory holds delete access
	// or does not share delete, so nothing in it can be renamed.
	ErrParentInUse = errors.New("file: parent directory in use")
)

// Disposition is the SMB2 CreateDisposition of an open.
type Disposition uint32

// Dispositions (MS-SMB2 2.2.13).
const (
	Supersede   Disposition = 0 // replace if it exists, else create
	OpenExist   Disposition = 1 // open; fail if it does not exist
	CreateNew   Disposition = 2 // create; fail if it exists
	OpenIf      Disposition = 3 // open, or create if it does not exist
	Overwrite   Disposition = 4 // open and truncate; fail if it does not exist
	OverwriteIf Disposition = 5 // open and truncate, or create
)

// CreateAction is what an open did (MS-SMB2 2.2.14 CreateAction).
type CreateAction uint32

// Create actions.
const (
	Superseded  CreateAction = 0
	Opened      CreateAction = 1
	Created     CreateAction = 2
	Overwritten CreateAction = 3
)

// HandleRef identifies an open handle: share id, file id, handle id.
type HandleRef struct {
	Share, File, ID uint64
}

// OpenRequest is an SMB CREATE.
type OpenRequest struct {
	Share ShareRef
	Path  string
	// Disposition says what to do when the name exists or not.
	Disposition Disposition
	// Directory (FILE_DIRECTORY_FILE) requires a directory;
	// NonDirectory (FILE_NON_DIRECTORY_FILE) requires a file.
	Directory, NonDirectory bool
	DesiredAccess           uint32
	ShareAccess             uint32
	DeleteOnClose           bool
	// Attrs are the attributes of a created or overwritten file.
	Attrs Attr
	// Session and ClientIP are reported by List Handles.
	Session  uint64
	ClientIP string
	// Owner is the cluster member id of the instance opening the handle
	// (cluster.Membership.Owner): the open fails with
	// cluster.ErrInstanceLost unless that member is alive in the same
	// transaction. Zero
	// records an unowned handle (tests of this package).
	Owner uint64
	// Cache is the oplock or lease asked for, if any.
	Cache *CacheRequest
	// Waiting, if set, is called when the open starts waiting for other
	// clients to acknowledge cache breaks.
	Waiting func()
}

// OpenResult is what Open returns.
type OpenResult struct {
	Handle HandleRef
	Node   *Node
	Action CreateAction
	// Cache is the oplock or lease granted (nil for none).
	Cache *Caching
}

// Open opens or creates a file or directory and records the handle, all
// in one transaction: the share modes of the handles already open are
// checked with the Windows rules (409 SharingViolation), a node pending
// deletion is 409 SMBDeletePending, a missing parent 404 ParentNotFound,
// a missing node (FILE_OPEN, FILE_OVERWRITE) 404 ResourceNotFound, an
// existing one (FILE_CREATE) 409 ResourceAlreadyExists, a directory
// opened with NonDirectory (or a file with Directory) 409
// ResourceTypeMismatch. Opening a leased file for write or delete is a
// SharingViolation. A snapshot share opens read-only.
func (s *Service) Open(ctx context.Context, req OpenRequest) (*OpenResult, error) {
	parts, err := SplitPath(req.Path)
	if err != nil {
		return nil, err
	}
	want := relevant(req.DesiredAccess)
	if req.Share.Snapshot != "" && (want&(accessWrite|accessDelete) != 0 || req.Disposition != OpenExist && req.Disposition != OpenIf) {
		return nil, azerr.New(azerr.ShareSnapshotOperationNotSupported)
	}
	if req.DeleteOnClose && req.DesiredAccess&(Delete|GenericAll|MaximumAllowed) == 0 {
		return nil, ErrAccessDenied
	}
	hid, fid := newID(), newID()
	var out *OpenResult
	granted := false
	// Caches of other clients in the way are broken first (update runs
	// the transaction again once they are).
	// Breaks the open starts without waiting, and its attempt (the
	// first waits for fewer breaks).
	var brks []Break
	attempt := 0
	try := func(tx storage.Tx) error {
		granted, brks = false, brks[:0]
		var hs []*Handle
		if req.Owner != 0 {
			// The fence: once another instance has declared this one
			// dead, it opens nothing more (see cluster.Membership).
			if ok, err := cluster.Alive(tx, req.Owner); err != nil || !ok {
				return cmp.Or(err, cluster.ErrInstanceLost)
			}
		}
		sid, err := shareID(tx, req.Share)
		if err != nil {
			return err
		}
		sh := &Share{ID: sid}
		access := req.DesiredAccess // what the handle is granted
		parent, n, err := lookup(tx, sh.ID, parts)
		if err != nil {
			return err
		}
		if parent != nil && (!parent.Dir || parent.DeletePending) {
			return azerr.New(azerr.ParentNotFound)
		}
		now := s.now()
		res := &OpenResult{}
		switch {
		case n == nil && (req.Disposition == OpenExist || req.Disposition == Overwrite):
			return azerr.New(azerr.ResourceNotFound)
		case n == nil:
			if req.Share.Snapshot != "" {
				return azerr.New(azerr.ResourceNotFound)
			}
			n = &Node{ID: fid, Parent: parent.ID, Name: parts[len(parts)-1], Dir: req.Directory, Modified: s.written(now), ETag: s.etag(0, now),
				Inline: !req.Directory}
			attrs := req.Attrs &^ AttrNormal
			if attrs&AttrReadOnly != 0 && req.DeleteOnClose {
				// A read-only file cannot be deleted, not even one this
				// open creates (MS-FSA 2.1.5.1.1).
				return ErrCannotDelete
			}
			if !req.Directory {
				// Windows marks every new file for archiving.
				attrs |= AttrArchive
			}
			perm, err := inheritedPerm(tx, sh.ID, parent)
			if err != nil {
				return err
			}
			if err := applySMB(tx, sh.ID, n, SMBProps{Attrs: &attrs}, now, true, perm); err != nil {
				return err
			}
			n.path = JoinPath(parts)
			res.Action = Created
			if err := s.breakParentLeases(tx, sh.ID, parent, cacheClient(req.Cache), cacheParent(req.Cache), &brks); err != nil {
				return err
			}
		default:
			if req.Disposition == CreateNew {
				return azerr.New(azerr.ResourceAlreadyExists)
			}
			if n.DeletePending {
				return azerr.New(azerr.SMBDeletePending)
			}
			if req.Directory && !n.Dir || req.NonDirectory && n.Dir {
				return azerr.New(azerr.ResourceTypeMismatch)
			}
			if n.Attrs&AttrReadOnly != 0 {
				// A read-only file opens for reading only (MS-FSA
				// 2.1.5.1.2.1): writing its data is denied, and it
				// cannot be opened to be deleted on close.
				if !n.Dir && req.DesiredAccess&(FileWriteData|FileAppendData|GenericWrite|GenericAll) != 0 {
					return ErrAccessDenied
				}
				if req.DeleteOnClose {
					return ErrCannotDelete
				}
				if !n.Dir && access&MaximumAllowed != 0 {
					access = access&^MaximumAllowed | FileReadData | FileExecute | Delete
				}
			}
			// Truncating the file is a write, and superseding it a delete
			// too, whatever access the open asks for: share modes and a
			// REST lease must allow them (MS-FSA 2.1.5.1.2).
			check, truncate := access, !n.Dir && (req.Disposition == Supersede || req.Disposition == Overwrite || req.Disposition == OverwriteIf)
			if truncate {
				check |= FileWriteData
				if req.Disposition == Supersede {
					check |= Delete
				}
			}
			if n.Handles > 0 {
				if hs, err = loadHandles(tx, sh.ID, n.ID); err != nil {
					return err
				}
			}
			conflict := s.checkShareModes(tx, sh.ID, n, check, req.ShareAccess)
			e, async := openBreaks(hs, sh.ID, n, &req, check, truncate, conflict != nil, attempt == 1)
			if e != nil {
				return e
			}
			for _, g := range leaseGroups(hs) {
				if to, ok := async[g[0].ID]; ok {
					if _, err := s.startBreak(tx, sh.ID, g, to, &brks); err != nil {
						return err
					}
				}
			}
			if conflict != nil {
				return conflict
			}
			if relevant(check)&(accessWrite|accessDelete) != 0 && n.Lease.Active(now) {
				return azerr.New(azerr.SharingViolation)
			}
			if n.Handles >= MaxHandlesPerFile {
				return azerr.New(azerr.HandleLimitExceeded)
			}
			res.Action = Opened
			if truncate {
				if n.Attrs&AttrReadOnly != 0 {
					return ErrAccessDenied
				}
				// A hidden or system file is overwritten only by a request
				// that keeps the attribute (MS-FSA 2.1.5.1.2.1). Other
				// handles' byte-range locks do not stop the truncation,
				// as on Windows.
				if n.Attrs&^req.Attrs&(AttrHidden|AttrSystem) != 0 {
					return ErrAccessDenied
				}
				if err := resize(tx, sh, n, 0); err != nil {
					return err
				}
				n.Attrs = req.Attrs | AttrArchive
				n.LastWriteTime, n.ChangeTime = now, now
				n.Modified, n.ETag = s.written(now), s.etag(n.ETag, now)
				res.Action = Overwritten
				if req.Disposition == Supersede {
					res.Action = Superseded
				}
				if err := s.breakParentLeases(tx, sh.ID, parent, cacheClient(req.Cache), cacheParent(req.Cache), &brks); err != nil {
					return err
				}
			}
		}
		if n.ID == rootID && req.DeleteOnClose {
			return ErrAccessDenied
		}
		h := &Handle{ID: hid, FileID: n.ID, ParentID: n.Parent, Session: req.Session, ClientIP: req.ClientIP, Opened: now, Owner: req.Owner,
			Access: access, ShareAccess: req.ShareAccess, Dir: n.Dir, DeleteOnClose: req.DeleteOnClose}
		if req.Share.Snapshot == "" {
			if err := bindLease(tx, sh.ID, n, req.Cache); err != nil {
				return err
			}
			if granted, err = grantCache(tx, sh.ID, n, hs, h, req.Cache); err != nil {
				return err
			}
			n.Handles++
			if req.DeleteOnClose && res.Action != Created {
				// Other clients' handle caching breaks as for a delete
				// disposition set later (smbtorture smb2.lease.unlink).
				if err := s.breakHandleCaching(tx, sh.ID, n, h, &brks); err != nil {
					return err
				}
			}
			if err := putNode(tx, sh.ID, n); err != nil {
				return err
			}
		} else if err := putIndex(tx, sh.ID, n); err != nil {
			// A snapshot's node is found by id through its handle too.
			return err
		}
		if err := tx.Set(handleKey(sh.ID, n.ID, hid), encodeHandle(h)); err != nil {
			return err
		}
		n.AsOf = now
		res.Handle, res.Node = HandleRef{Share: sh.ID, File: n.ID, ID: hid}, n
		if h.Cache != nil {
			res.Cache = ptr(*h.Cache)
		}
		out = res
		return nil
	}
	err = s.withBreaks(ctx, req.Waiting, func() error {
		attempt++
		return s.eng.Update(ctx, try)
	})
	if err == nil {
		s.deliver(brks)
	}
	if granted {
		b := s.brk()
		b.mu.Lock()
		b.granted++
		b.mu.Unlock()
	}
	return out, err
}

// loadOpen loads a handle and its node inside tx.
func loadOpen(tx storage.Tx, ref HandleRef) (*Handle, *Node, error) {
	v, err := tx.Get(handleKey(ref.Share, ref.File, ref.ID))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil, ErrHandleClosed
	}
	if err != nil {
		return nil, nil, err
	}
	h, err := decodeHandle(v)
	if err != nil {
		return nil, nil, err
	}
	n, err := nodeByID(tx, ref.Share, ref.File)
	if err != nil {
		return nil, nil, err
	}
	if n == nil {
		return nil, nil, ErrHandleClosed
	}
	return h, n, nil
}

// Close closes a handle. If it was the last handle of a node pending
// deletion (or this handle was opened delete-on-close), the node is
// deleted. It returns the node as it was at close.
//
// A close that deletes nothing changes only what a restart undoes anyway
// (the handle, its lease binding and the node's count of handles: a
// restart closes the handles of the instance it replaces), so it commits
// as a transient Update; one that takes a delete to effect is durable.
func (s *Service) Close(ctx context.Context, ref HandleRef) (*Node, error) {
	return s.closeAs(ctx, ref, false)
}

// CloseWritten is Close for a handle the file was written through: it
// also breaks the leases on the directory holding the file, as the close
// does on Windows (the directory's listing shows the file's new size and
// time), in the same transaction.
func (s *Service) CloseWritten(ctx context.Context, ref HandleRef) (*Node, error) {
	return s.closeAs(ctx, ref, true)
}

// closeAs closes transiently, or durably if the close deletes.
func (s *Service) closeAs(ctx context.Context, ref HandleRef, written bool) (*Node, error) {
	out, err := s.close(ctx, ref, true, written)
	if errors.Is(err, errLastingClose) {
		out, err = s.close(ctx, ref, false, written)
	}
	return out, err
}

// errLastingClose ends a transient close that would delete.
var errLastingClose = errors.New("file: the close deletes")

func (s *Service) close(ctx context.Context, ref HandleRef, transient, written bool) (*Node, error) {
	var out *Node
	var brks []Break
	update := s.eng.Update
	if transient {
		update = func(ctx context.Context, fn func(storage.Tx) error) error {
			return storage.UpdateTransient(ctx, s.eng, fn)
		}
	}
	err := update(ctx, func(tx storage.Tx) error {
		brks = brks[:0]
		h, n, err := loadOpen(tx, ref)
		if err != nil {
			return err
		}
		if transient && (h.DeleteOnClose || n.DeletePending) {
			return errLastingClose
		}
		out = n
		if err := s.closeHandle(tx, ref.Share, h, n); err != nil {
			return err
		}
		if written || n.DeletePending && n.Handles == 0 {
			// The file's entry in its directory's listing changed, or
			// it is gone from it.
			return s.breakParentOf(tx, ref.Share, n, h, &brks)
		}
		return nil
	})
	if err == nil {
		s.deliver(brks)
	}
	if err == nil && out.Handles > 0 {
		// A break may wait for this handle to close.
		s.brk().wake()
	}
	return out, err
}

func (s *Service) closeHandle(tx storage.Tx, sid uint64, h *Handle, n *Node) error {
	if err := unbindLease(tx, sid, h); err != nil {
		return err
	}
	if err := tx.Delete(handleKey(sid, n.ID, h.ID)); err != nil {
		return err
	}
	if h.DeleteOnClose {
		n.DeletePending = true
	}
	n.Handles = max(n.Handles-1, 0)
	if n.DeletePending && n.Handles == 0 {
		if n.Dir {
			has, err := hasChildren(tx, sid, n.ID)
			if err != nil {
				return err
			}
			if has {
				// A directory that gained entries stays.
				n.DeletePending = false
				return saveNode(tx, sid, n)
			}
		} else if err := addUsage(tx, sid, -n.Size); err != nil {
			return err
		}
		return dropNode(tx, sid, n)
	}
	return saveNode(tx, sid, n)
}

// GetInfo returns the node a handle is open on.
func (s *Service) GetInfo(ctx context.Context, ref HandleRef) (*Node, error) {
	var out *Node
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		_, n, err := loadOpen(tx, ref)
		if err == nil {
			n.AsOf = s.now()
		}
		out = n
		return err
	})
	return out, err
}

// ReadAt returns the segments of up to n bytes at off of the file a
// handle is open on (cut at the end of the file) and the node; stream them
// with (*Service).Stream. The handle needs read access; another handle's
// exclusive lock over the bytes is 409 FileLockConflict.
func (s *Service) ReadAt(ctx context.Context, ref HandleRef, off, n int64) ([]content.Segment, *Node, error) {
	var segs []content.Segment
	var node *Node
	err := s.viewReadable(ctx, ref, func(tx storage.Tx, h *Handle, nd *Node) error {
		if off >= nd.Size {
			node = nd
			return nil
		}
		n = min(n, nd.Size-off)
		if err := checkLocks(tx, ref.Share, nd, uint64(off), uint64(n), h.ID, false); err != nil {
			return err
		}
		node = nd
		var err error
		segs, err = segments(tx, ref.Share, nd, off, n)
		return err
	})
	return segs, node, err
}

// WriteAt writes data (ingested with (*Service).Ingest) at off through a
// handle with write access, growing the file when the write ends past it
// (within the share quota). Another handle's lock over the bytes is 409
// FileLockConflict; a leased file cannot be written through a handle.
func (s *Service) WriteAt(ctx context.Context, ref HandleRef, off int64, data content.Ingested) (*Node, error) {
	if off < 0 || off+data.Size > MaxFileSize {
		return nil, azerr.New(azerr.InvalidRange)
	}
	return s.updateWritable(ctx, ref, func(tx storage.Tx, h *Handle, n *Node, now time.Time, brks *[]Break) error {
		if err := checkLocks(tx, ref.Share, n, uint64(off), uint64(data.Size), h.ID, true); err != nil {
			return err
		}
		if err := s.staleReaders(tx, ref.Share, n, h, brks); err != nil {
			return err
		}
		if end := off + data.Size; end > n.Size {
			if err := addUsage(tx, ref.Share, end-n.Size); err != nil {
				return err
			}
			n.Size = end
		}
		if err := putExtents(tx, ref.Share, n, off, data.Segs, false); err != nil {
			return err
		}
		touch(h, n, now)
		n.Attrs |= AttrArchive
		n.Modified, n.ETag = s.written(now), s.etag(n.ETag, now)
		return nil
	})
}

// SetEndOfFile truncates or extends the file of a handle with write
// access (FileEndOfFileInformation).
func (s *Service) SetEndOfFile(ctx context.Context, ref HandleRef, size int64) (*Node, error) {
	if size < 0 || size > MaxFileSize {
		return nil, azerr.New(azerr.InvalidRange)
	}
	return s.updateWritable(ctx, ref, func(tx storage.Tx, h *Handle, n *Node, now time.Time, brks *[]Break) error {
		// Even a size that does not change breaks read caching
		// (MS-FSA 2.1.5.15.4).
		if err := s.staleReaders(tx, ref.Share, n, h, brks); err != nil {
			return err
		}
		if size == n.Size {
			return nil
		}
		if size < n.Size {
			if err := checkLocks(tx, ref.Share, n, uint64(size), uint64(n.Size-size), h.ID, true); err != nil {
				return err
			}
		}
		if err := resize(tx, &Share{ID: ref.Share}, n, size); err != nil {
			return err
		}
		touch(h, n, now)
		n.Modified, n.ETag = s.written(now), s.etag(n.ETag, now)
		return nil
	})
}

// viewReadable runs fn in one View on the handle and node of ref: a
// directory is 409 ResourceTypeMismatch and a handle without read access
// ErrAccessDenied before fn runs.
func (s *Service) viewReadable(ctx context.Context, ref HandleRef, fn func(tx storage.Tx, h *Handle, n *Node) error) error {
	return s.eng.View(ctx, func(tx storage.Tx) error {
		h, n, err := loadOpen(tx, ref)
		if err != nil {
			return err
		}
		if n.Dir {
			return azerr.New(azerr.ResourceTypeMismatch)
		}
		if relevant(h.Access)&accessRead == 0 {
			return ErrAccessDenied
		}
		return fn(tx, h, n)
	})
}

// updateWritable is updateOpen for a change to a file's bytes or size
// through a handle: a directory is 409 ResourceTypeMismatch and a handle
// without write access ErrAccessDenied before fn runs, and the oplock and
// lease breaks fn adds to brks are delivered once the change commits.
func (s *Service) updateWritable(ctx context.Context, ref HandleRef, fn func(tx storage.Tx, h *Handle, n *Node, now time.Time, brks *[]Break) error) (*Node, error) {
	var brks []Break
	out, err := s.updateOpen(ctx, ref, func(tx storage.Tx, h *Handle, n *Node, now time.Time) error {
		brks = brks[:0] // Update may run fn again
		if n.Dir {
			return azerr.New(azerr.ResourceTypeMismatch)
		}
		if relevant(h.Access)&accessWrite == 0 {
			return ErrAccessDenied
		}
		return fn(tx, h, n, now, &brks)
	})
	if err == nil {
		s.deliver(brks)
	}
	return out, err
}

// touch moves the last-write and change times of n written through h,
// except those h set explicitly.
func touch(h *Handle, n *Node, now time.Time) {
	if h.UserSet&UserSetLastWrite == 0 {
		n.LastWriteTime = now
	}
	if h.UserSet&UserSetChange == 0 {
		n.ChangeTime = now
	}
}

// BasicInfo is FileBasicInformation: nil fields are left as they are.
type BasicInfo struct {
	Creation, LastAccess, LastWrite, Change *time.Time
	Attrs                                   *Attr
}

// SetBasicInfo sets times and attributes through a handle.
func (s *Service) SetBasicInfo(ctx context.Context, ref HandleRef, bi BasicInfo) (*Node, error) {
	return s.updateOpen(ctx, ref, func(tx storage.Tx, h *Handle, n *Node, now time.Time) error {
		for _, t := range []struct {
			src *time.Time
			dst *time.Time
		}{{bi.Creation, &n.CreationTime}, {bi.LastAccess, &n.LastAccessTime}, {bi.LastWrite, &n.LastWriteTime}, {bi.Change, &n.ChangeTime}} {
			if t.src != nil {
				*t.dst = t.src.UTC()
			}
		}
		if bi.Attrs != nil {
			// Sparse is set by FSCTL_SET_SPARSE only (MS-FSA 2.1.5.14.2).
			a := *bi.Attrs&^(AttrDirectory|AttrNormal|AttrSparseFile) | n.Attrs&AttrSparseFile
			if n.Dir {
				a |= AttrDirectory
			}
			n.Attrs = a
		}
		before := h.UserSet
		if bi.LastWrite != nil {
			h.UserSet |= UserSetLastWrite
		}
		if bi.Change != nil {
			h.UserSet |= UserSetChange
		} else if h.UserSet&UserSetChange == 0 && (bi.Creation != nil || bi.LastAccess != nil || bi.LastWrite != nil || bi.Attrs != nil) {
			// Changing something moves the change time; a request
			// that changes nothing (all zero) does not.
			n.ChangeTime = now
		}
		n.Modified, n.ETag = s.written(now), s.etag(n.ETag, now)
		if h.UserSet != before {
			return tx.Set(handleKey(ref.Share, n.ID, h.ID), encodeHandle(h))
		}
		return nil
	})
}

// SetSecurity replaces the security descriptor (SDDL) of the node a
// handle is open on (SMB SET_INFO of security information; the SMB layer
// checks the handle's WRITE_OWNER or WRITE_DAC access). The SDDL is
// stored once per share like a REST x-ms-file-permission; the node's
// change time and ETag move. A malformed SDDL is 400
// FileInvalidPermission.
func (s *Service) SetSecurity(ctx context.Context, ref HandleRef, sddl string) (*Node, error) {
	if err := ValidateSDDL(sddl); err != nil {
		return nil, err
	}
	return s.updateOpen(ctx, ref, func(tx storage.Tx, h *Handle, n *Node, now time.Time) error {
		key, err := storePermission(tx, ref.Share, Permission{SDDL: sddl}, n.PermKey)
		if err != nil {
			return err
		}
		n.PermKey, n.ChangeTime = key, now
		n.Modified, n.ETag = s.written(now), s.etag(n.ETag, now)
		return nil
	})
}

// SetDeletePending sets or clears the delete disposition of the node a
// handle (with DELETE access) is open on: while set, REST sees 409
// SMBDeletePending and listings leave the node out; the last close
// deletes it. A non-empty directory is 409 DirectoryNotEmpty.
func (s *Service) SetDeletePending(ctx context.Context, ref HandleRef, pending bool) (*Node, error) {
	var out *Node
	err := s.withBreaks(ctx, waitingOf(ctx), func() error {
		var err error
		out, err = s.setDeletePending(ctx, ref, pending)
		return err
	})
	return out, err
}

// setDeletePending is one attempt of SetDeletePending: other clients'
// handle caching is broken first, and waited for (an errBreak).
func (s *Service) setDeletePending(ctx context.Context, ref HandleRef, pending bool) (*Node, error) {
	return s.updateOpen(ctx, ref, func(tx storage.Tx, h *Handle, n *Node, now time.Time) error {
		if relevant(h.Access)&accessDelete == 0 {
			return ErrAccessDenied
		}
		if n.ID == rootID {
			return ErrAccessDenied
		}
		if pending && n.Attrs&AttrReadOnly != 0 {
			return azerr.New(azerr.ReadOnlyAttribute)
		}
		if pending && n.Dir {
			if err := checkEmpty(tx, ref.Share, n.ID); err != nil {
				return err
			}
		}
		if pending {
			if e, err := handleBreaks(tx, ref.Share, n, h); e != nil || err != nil {
				if err != nil {
					return err
				}
				return e
			}
		}
		n.DeletePending = pending
		return nil
	})
}

// updateOpen runs fn on the handle and node of ref in one Update and
// stores the node.
func (s *Service) updateOpen(ctx context.Context, ref HandleRef, fn func(tx storage.Tx, h *Handle, n *Node, now time.Time) error) (*Node, error) {
	var out *Node
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		h, n, err := loadOpen(tx, ref)
		if err != nil {
			return err
		}
		now := s.now()
		if err := fn(tx, h, n, now); err != nil {
			return err
		}
		if err := saveNode(tx, ref.Share, n); err != nil {
			return err
		}
		n.AsOf = now
		out = n
		return nil
	})
	return out, err
}

// ReadDir lists the directory a handle is open on: entries whose names
// start (case-insensitively) with prefix, from marker on, at most max,
// and the marker of the next page ("" at the end). Unlike REST listings,
// it keeps entries pending deletion: an SMB client still sees a name
// until its last handle closes, as on Windows.
func (s *Service) ReadDir(ctx context.Context, ref HandleRef, prefix, marker string, max int) ([]*Node, string, error) {
	var out []*Node
	next := ""
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		_, d, err := loadOpen(tx, ref)
		if err != nil {
			return err
		}
		if !d.Dir {
			return azerr.New(azerr.ResourceTypeMismatch)
		}
		return scanChildren(tx, ref.Share, d.ID, prefix, marker, true, func(n *Node) bool {
			if len(out) >= max {
				next = n.Name
				return false
			}
			out = append(out, n)
			return true
		})
	})
	return out, next, err
}

// RenameHandle renames the node a handle (with DELETE access) is open on
// to newPath in the same share; replace allows replacing an existing file.
func (s *Service) RenameHandle(ctx context.Context, ref HandleRef, newPath string, replace bool) (*Node, error) {
	dst, err := SplitPath(newPath)
	if err != nil {
		return nil, err
	}
	var out *Node
	var brks []Break
	err = s.withBreaks(ctx, waitingOf(ctx), func() error {
		return s.eng.Update(ctx, func(tx storage.Tx) error {
			brks = brks[:0]
			var err error
			out, err = s.renameHandle(tx, ref, dst, replace, &brks)
			return err
		})
	})
	if err == nil {
		s.deliver(brks)
	}
	return out, err
}

// renameHandle is RenameHandle in tx. Other clients' handle caching is
// broken first, and waited for (an errBreak); a rename that fails for
// another reason breaks nothing.
func (s *Service) renameHandle(tx storage.Tx, ref HandleRef, dst []string, replace bool, brks *[]Break) (*Node, error) {
	h, n, err := loadOpen(tx, ref)
	if err != nil {
		return nil, err
	}
	if relevant(h.Access)&accessDelete == 0 {
		return nil, ErrAccessDenied
	}
	wait, err := handleBreaks(tx, ref.Share, n, h)
	if err != nil {
		return nil, err
	}
	from, err := nodeByID(tx, ref.Share, n.Parent)
	if err != nil {
		return nil, err
	}
	out, err := s.renameChecked(tx, ref, h, n, dst, replace)
	if err != nil {
		return nil, err
	}
	if wait != nil {
		return nil, wait
	}
	// Both directories' listings change.
	client, parent := parentKeyOf(h)
	if err := s.breakParentLeases(tx, ref.Share, from, client, parent, brks); err != nil {
		return nil, err
	}
	if from == nil || out.Parent != from.ID {
		to, err := nodeByID(tx, ref.Share, out.Parent)
		if err != nil {
			return nil, err
		}
		if err := s.breakParentLeases(tx, ref.Share, to, client, parent, brks); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// renameChecked checks and makes the rename of n through h.
func (s *Service) renameChecked(tx storage.Tx, ref HandleRef, h *Handle, n *Node, dst []string, replace bool) (*Node, error) {
	if n.Dir {
		// A directory with anything open below it does not move
		// (Windows and Azure Files answer access denied).
		below := false
		if err := walkHandles(tx, ref.Share, n, true, func(o *Handle, _ string) bool {
			below = o.FileID != n.ID
			return !below
		}); err != nil {
			return nil, err
		}
		if below {
			return nil, ErrAccessDenied
		}
	}
	{
		// Windows renames through an open of the destination's parent
		// directory that asks to add an entry (write access) and shares
		// read and write only: an open of that directory holding delete
		// access, or not sharing write, refuses the rename
		// (smbtorture smb2.rename.*_delete_*, smb2.notify.rec).
		if parent, _, err := lookup(tx, ref.Share, dst); err == nil && parent != nil {
			ps, err := loadHandles(tx, ref.Share, parent.ID)
			if err != nil {
				return nil, err
			}
			for _, p := range ps {
				if held := relevant(p.Access); held != 0 && (held&accessDelete != 0 || p.ShareAccess&FileShareWrite == 0) {
					return nil, ErrParentInUse
				}
			}
		}
	}
	return s.move(tx, &Share{ID: ref.Share}, n, dst, replace, false, h.ID)
}

// move renames n to the path dst within share sh. An existing
// destination is replaced only with replace (a directory never); a
// destination inside n's own subtree is 400 InvalidResourceName. own is
// the handle doing the rename (0 for REST), whose own open does not
// count against it.
func (s *Service) move(tx storage.Tx, sh *Share, n *Node, dst []string, replace, ignoreReadOnly bool, own uint64) (*Node, error) {
	if len(dst) == 0 || n.ID == rootID {
		return nil, azerr.New(azerr.InvalidResourceName)
	}
	parent, old, err := lookup(tx, sh.ID, dst)
	if err != nil {
		return nil, err
	}
	if !parent.Dir || parent.DeletePending {
		return nil, azerr.New(azerr.ParentNotFound)
	}
	// The destination must not lie inside the node being moved.
	for p := parent; p != nil && p.ID != rootID; {
		if p.ID == n.ID {
			return nil, azerr.New(azerr.InvalidResourceName)
		}
		if p, err = nodeByID(tx, sh.ID, p.Parent); err != nil {
			return nil, err
		}
	}
	now := s.now()
	if old != nil && old.ID != n.ID {
		if !replace || old.Dir {
			return nil, azerr.New(azerr.ResourceAlreadyExists)
		}
		if old.Attrs&AttrReadOnly != 0 && !ignoreReadOnly {
			return nil, azerr.New(azerr.ReadOnlyAttribute)
		}
		if old.Handles > 0 || old.DeletePending {
			return nil, azerr.New(azerr.SharingViolation)
		}
		if old.Lease.Active(now) {
			return nil, azerr.New(azerr.LeaseIdMissing)
		}
		if err := addUsage(tx, sh.ID, -old.Size); err != nil {
			return nil, err
		}
		if err := dropNode(tx, sh.ID, old); err != nil {
			return nil, err
		}
	}
	if err := tx.Delete(nodeKey(sh.ID, n.Parent, Fold(n.Name))); err != nil {
		return nil, err
	}
	n.Parent, n.Name = parent.ID, dst[len(dst)-1]
	n.ChangeTime = now
	n.Modified, n.ETag = s.written(now), s.etag(n.ETag, now)
	if err := putNode(tx, sh.ID, n); err != nil {
		return nil, err
	}
	// Handles record their parent for List Handles.
	hs, err := loadHandles(tx, sh.ID, n.ID)
	if err != nil {
		return nil, err
	}
	for _, h := range hs {
		h.ParentID = n.Parent
		if err := tx.Set(handleKey(sh.ID, n.ID, h.ID), encodeHandle(h)); err != nil {
			return nil, err
		}
	}
	n.path, n.AsOf = JoinPath(dst), now
	return n, nil
}

// RenameRequest is Rename File / Rename Directory.
type RenameRequest struct {
	Source, Dest   Ref
	Dir            bool
	Replace        bool
	IgnoreReadOnly bool
	SourceLeaseID  string
	DestLeaseID    string
	SMB            *SMBProps
	Meta           *[]content.KV
	ContentType    *string
}

// Rename is Rename File and Rename Directory (within one share). The
// source needs delete access under the handle rules; a leased source
// needs its lease id.
func (s *Service) Rename(ctx context.Context, req RenameRequest) (*Node, error) {
	dst, err := SplitPath(req.Dest.Path)
	if err != nil {
		return nil, err
	}
	if req.Meta != nil {
		if err := content.ValidateMetadata(*req.Meta); err != nil {
			return nil, err
		}
	}
	var out *Node
	var brks []Break
	err = s.update(ctx, func(tx storage.Tx) error {
		brks = brks[:0]
		sh, n, err := s.resolve(tx, req.Source, true)
		if err != nil {
			return err
		}
		from := n.Parent
		if n.Dir != req.Dir {
			return azerr.New(azerr.ResourceNotFound)
		}
		if err := s.checkREST(tx, sh.ID, n, accessDelete, 0, 0); err != nil {
			return err
		}
		if n.Dir {
			// A directory moves with everything in it: no handle may be
			// open below it either.
			open := false
			if err := walkHandles(tx, sh.ID, n, true, func(*Handle, string) bool { open = true; return false }); err != nil {
				return err
			}
			if open {
				return azerr.New(azerr.SharingViolation)
			}
		} else {
			if _, code := lease.Enforce(n.Lease, req.SourceLeaseID, true, n.AsOf, lease.FileTarget); code != 0 {
				return azerr.New(code)
			}
		}
		if req.DestLeaseID != "" {
			if _, d, err := lookup(tx, sh.ID, dst); err == nil && d != nil {
				if _, code := lease.Enforce(d.Lease, req.DestLeaseID, true, n.AsOf, lease.FileTarget); code != 0 {
					return azerr.New(code)
				}
				d.Lease = lease.State{}
				if err := saveNode(tx, sh.ID, d); err != nil {
					return err
				}
			}
		}
		m, err := s.move(tx, sh, n, dst, req.Replace, req.IgnoreReadOnly, 0)
		if err != nil {
			return err
		}
		if req.SMB != nil {
			if err := applySMB(tx, sh.ID, m, *req.SMB, m.AsOf, false, m.PermKey); err != nil {
				return err
			}
		}
		if req.Meta != nil {
			m.Meta = *req.Meta
		}
		if req.ContentType != nil {
			m.Props.ContentType = *req.ContentType
		}
		if err := saveNode(tx, sh.ID, m); err != nil {
			return err
		}
		// Both directories' listings change.
		for _, d := range []uint64{from, m.Parent} {
			dn, err := nodeByID(tx, sh.ID, d)
			if err != nil {
				return err
			}
			if err := s.breakParentLeases(tx, sh.ID, dn, [16]byte{}, [16]byte{}, &brks); err != nil {
				return err
			}
			if from == m.Parent {
				break
			}
		}
		out = m
		return nil
	})
	if err == nil {
		s.deliver(brks)
	}
	return out, err
}

// HandleInfo is one entry of List Handles.
type HandleInfo struct {
	Handle
	Path string
}

// ListHandles is List Handles: the handles open on the file or directory
// at ref (with recursive, on everything below a directory too), from
// marker (a handle id) on, at most max.
func (s *Service) ListHandles(ctx context.Context, ref Ref, recursive bool, marker uint64, max int) ([]HandleInfo, uint64, error) {
	var out []HandleInfo
	var next uint64
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		sh, n, err := s.resolve(tx, ref, false)
		if err != nil {
			return err
		}
		return walkHandles(tx, sh.ID, n, recursive, func(h *Handle, path string) bool {
			if h.ID < marker {
				return true
			}
			if len(out) >= max {
				next = h.ID
				return false
			}
			out = append(out, HandleInfo{Handle: *h, Path: path})
			return true
		})
	})
	return out, next, err
}

// walkHandles calls fn for the handles on n and (recursive) below it.
func walkHandles(tx storage.Tx, sid uint64, n *Node, recursive bool, fn func(*Handle, string) bool) error {
	type item struct {
		n    *Node
		path string
	}
	stack := []item{{n, n.path}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.n.Handles > 0 {
			hs, err := loadHandles(tx, sid, it.n.ID)
			if err != nil {
				return err
			}
			for _, h := range hs {
				if !fn(h, it.path) {
					return nil
				}
			}
		}
		if !recursive || !it.n.Dir {
			continue
		}
		var kids []item
		if err := scanChildren(tx, sid, it.n.ID, "", "", true, func(c *Node) bool {
			p := c.Name
			if it.path != "" {
				p = it.path + "/" + c.Name
			}
			kids = append(kids, item{c, p})
			return true
		}); err != nil {
			return err
		}
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, kids[i])
		}
	}
	return nil
}

// closeShareHandles closes every handle open in share sid, as Delete
// Share does: the share's opens end with it (their next operation answers
// ErrHandleClosed), and a soft-deleted share comes back with none.
func (s *Service) closeShareHandles(tx storage.Tx, sid uint64) error {
	p := sidPrefix(tagHandle, sid)
	it := tx.Scan(p, keyenc.PrefixEnd(p), false)
	var hs []*Handle
	for it.Next() {
		h, err := decodeHandle(it.Value())
		if err != nil {
			it.Close()
			return err
		}
		hs = append(hs, h)
	}
	err := it.Err()
	it.Close()
	if err != nil {
		return err
	}
	for _, h := range hs {
		n, err := nodeByID(tx, sid, h.FileID)
		if err != nil {
			return err
		}
		if n == nil {
			if err := tx.Delete(handleKey(sid, h.FileID, h.ID)); err != nil {
				return err
			}
			continue
		}
		if err := s.closeHandle(tx, sid, h, n); err != nil {
			return err
		}
	}
	return nil
}

// ForceCloseHandles is Force Close Handles: id "*" closes every handle on
// ref (and below it with recursive), otherwise the handle with that id.
// Unknown ids close nothing.
func (s *Service) ForceCloseHandles(ctx context.Context, ref Ref, id string, recursive bool) (int, error) {
	var want uint64
	if id != "*" {
		v, err := strconv.ParseUint(id, 10, 64)
		if err != nil {
			return 0, azerr.InvalidValue(InputHandleID, id)
		}
		want = v
	}
	closed := 0
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		closed = 0
		sh, n, err := s.resolve(tx, ref, false)
		if err != nil {
			return err
		}
		type victim struct{ h *Handle }
		var vs []victim
		if err := walkHandles(tx, sh.ID, n, recursive, func(h *Handle, _ string) bool {
			if id == "*" || h.ID == want {
				vs = append(vs, victim{h})
			}
			return true
		}); err != nil {
			return err
		}
		for _, v := range vs {
			nd, err := nodeByID(tx, sh.ID, v.h.FileID)
			if err != nil {
				return err
			}
			if nd == nil {
				continue
			}
			if err := s.closeHandle(tx, sh.ID, v.h, nd); err != nil {
				return err
			}
			closed++
		}
		return nil
	})
	if closed > 0 {
		s.brk().wake()
	}
	return closed, err
}
