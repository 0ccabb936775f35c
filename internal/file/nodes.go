package file

import (
	"context"
	"encoding/binary"
	"errors"
	"strconv"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/lease"
	"github.com/lazuli-storage/lazuli/storage"
)

// Ref names a file or directory: a path below a share (or one of its
// snapshots). Path components are separated by '/' (or '\').
type Ref struct {
	Account, Share, Snapshot, Path string
}

func (r Ref) share() ShareRef {
	return ShareRef{Account: r.Account, Name: r.Share, Snapshot: r.Snapshot}
}

// putNode stores n, new or moved, with its id index entry. Only nodes
// that are looked up by id need one: directories (parents and ancestors)
// and files with open handles; a file gets its entry when its first handle
// opens (Open stores it through here), which saves every create a write.
// A file's entry left from closed handles may be stale after a rename,
// but is only read while a handle is open, and then it is current.
func putNode(tx storage.Tx, sid uint64, n *Node) error {
	f := Fold(n.Name)
	if err := tx.Set(nodeKey(sid, n.Parent, f), encodeNode(n)); err != nil {
		return err
	}
	if !n.Dir && n.Handles == 0 {
		return nil
	}
	return putIndex(tx, sid, n)
}

// putIndex stores n's id index entry.
func putIndex(tx storage.Tx, sid uint64, n *Node) error {
	idx := keyenc.AppendString(binary.BigEndian.AppendUint64(nil, n.Parent), Fold(n.Name))
	return tx.Set(indexKey(sid, n.ID), idx)
}

// saveNode stores an existing node in place (same parent and name, so its
// index entry stands).
func saveNode(tx storage.Tx, sid uint64, n *Node) error {
	return tx.Set(nodeKey(sid, n.Parent, Fold(n.Name)), encodeNode(n))
}

// dropNode removes n, its index entry, its extents and its handles.
func dropNode(tx storage.Tx, sid uint64, n *Node) error {
	if err := tx.Delete(nodeKey(sid, n.Parent, Fold(n.Name))); err != nil {
		return err
	}
	if err := tx.Delete(indexKey(sid, n.ID)); err != nil {
		return err
	}
	if !n.Dir {
		if err := dropExtents(tx, sid, n); err != nil {
			return err
		}
	}
	p := handlesPrefix(sid, n.ID)
	return deleteRange(tx, p, keyenc.PrefixEnd(p))
}

// deleteRange deletes every key in [lo, hi).
func deleteRange(tx storage.Tx, lo, hi []byte) error {
	_, err := storage.DeleteRange(tx, lo, hi, 0)
	return err
}

func getNode(tx storage.Tx, sid, parent uint64, name string) (*Node, error) {
	v, err := tx.Get(nodeKey(sid, parent, Fold(name)))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeNode(v)
}

// nodeByID finds a node through the id index (nil when gone).
func nodeByID(tx storage.Tx, sid, id uint64) (*Node, error) {
	if id == rootID {
		return getNode(tx, sid, rootParent, "")
	}
	v, err := tx.Get(indexKey(sid, id))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(v) < 8 {
		return nil, errors.New("file: corrupt index record")
	}
	parent := binary.BigEndian.Uint64(v)
	folded, _, err := keyenc.ReadString(v[8:])
	if err != nil {
		return nil, err
	}
	nv, err := tx.Get(nodeKey(sid, parent, folded))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeNode(nv)
}

// lookup resolves parts from the root. A missing or non-directory
// ancestor is ParentNotFound; a missing last component returns (parent,
// nil).
func lookup(tx storage.Tx, sid uint64, parts []string) (parent, n *Node, err error) {
	if len(parts) == 0 {
		root, err := getNode(tx, sid, rootParent, "")
		if err == nil && root == nil {
			err = azerr.New(azerr.ShareNotFound)
		}
		return nil, root, err
	}
	// The root's id is fixed: a path of one component needs the root
	// record only as its parent, loaded when the caller needs it.
	cur := &Node{ID: rootID, Dir: true, lazyRoot: true}
	for i, p := range parts {
		next, err := getNode(tx, sid, cur.ID, p)
		if err != nil {
			return nil, nil, err
		}
		if i == len(parts)-1 {
			if next != nil {
				next.path = JoinPath(parts)
			}
			return cur, next, nil
		}
		if next == nil || !next.Dir || next.DeletePending {
			return nil, nil, azerr.New(azerr.ParentNotFound)
		}
		cur = next
	}
	return nil, nil, nil
}

// inheritedPerm is the permission key a new child of parent inherits.
func inheritedPerm(tx storage.Tx, sid uint64, parent *Node) (string, error) {
	if !parent.lazyRoot {
		return parent.PermKey, nil
	}
	v, err := tx.Get(nodeKey(sid, rootParent, ""))
	if errors.Is(err, storage.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return decodePermKey(v)
}

// resolve loads the share and the node at ref.Path; a missing node is
// ResourceNotFound.
func (s *Service) resolve(tx storage.Tx, ref Ref, write bool) (*Share, *Node, error) {
	sh, _, n, err := s.resolveIn(tx, ref, write)
	return sh, n, err
}

// resolveIn is resolve that also returns the directory holding the node
// (nil for the root), read on the way.
func (s *Service) resolveIn(tx storage.Tx, ref Ref, write bool) (*Share, *Node, *Node, error) {
	parts, err := SplitPath(ref.Path)
	if err != nil {
		return nil, nil, nil, err
	}
	if write && ref.Snapshot != "" {
		return nil, nil, nil, azerr.New(azerr.ShareSnapshotOperationNotSupported)
	}
	sid, err := shareID(tx, ref.share())
	if err != nil {
		return nil, nil, nil, err
	}
	sh := &Share{ID: sid, Name: ref.Share, Snapshot: ref.Snapshot}
	parent, n, err := lookup(tx, sh.ID, parts)
	if err != nil {
		return nil, nil, nil, err
	}
	if n == nil {
		return nil, nil, nil, azerr.New(azerr.ResourceNotFound)
	}
	n.path = JoinPath(parts)
	n.AsOf = s.now()
	return sh, parent, n, nil
}

// TimeSet is one SMB time header of a create or set: unset means the
// default (now on create, preserve on set); Now takes the clock.
type TimeSet struct {
	Set bool
	Now bool
	T   time.Time
}

// SMBProps are the SMB property headers of a create or set.
type SMBProps struct {
	// Attrs nil: the default (create) or preserve (set).
	Attrs                                 *Attr
	Creation, LastWrite, Change, LastRead TimeSet
	Perm                                  Permission
	// Restore is x-ms-file-property-semantics: Restore: a create leaves
	// the attribute flags as given (no Archive added by default).
	Restore bool
}

func (t TimeSet) apply(cur *time.Time, now time.Time, create bool) {
	switch {
	case t.Set && t.Now:
		*cur = now
	case t.Set:
		*cur = t.T
	case create:
		*cur = now
	}
}

// applySMB sets the SMB properties of n for a create (create) or a set.
func applySMB(tx storage.Tx, sid uint64, n *Node, p SMBProps, now time.Time, create bool, defPerm string) error {
	if p.Attrs != nil {
		// REST cannot set or clear the sparse attribute.
		n.Attrs = *p.Attrs&^AttrSparseFile | n.Attrs&AttrSparseFile
	} else if create && !p.Restore {
		n.Attrs = AttrArchive
	}
	if n.Dir {
		n.Attrs = n.Attrs&^AttrArchive | AttrDirectory
		if p.Attrs != nil && *p.Attrs&AttrArchive != 0 {
			n.Attrs |= AttrArchive
		}
	} else {
		n.Attrs &^= AttrDirectory
	}
	p.Creation.apply(&n.CreationTime, now, create)
	p.LastWrite.apply(&n.LastWriteTime, now, create)
	p.LastRead.apply(&n.LastAccessTime, now, create)
	if p.Change.Set {
		p.Change.apply(&n.ChangeTime, now, false)
	} else {
		n.ChangeTime = now
	}
	key, err := storePermission(tx, sid, p.Perm, n.PermKey)
	if err != nil {
		return err
	}
	if key == "" {
		key = defPerm
	}
	n.PermKey = key
	return nil
}

// DefaultContentType is the Content-Type of a file created without one.
const DefaultContentType = "application/octet-stream"

// CreateRequest is Create Directory or Create File.
type CreateRequest struct {
	Ref   Ref
	Dir   bool
	Size  int64 // files: x-ms-content-length
	Props content.Props
	Meta  []content.KV
	SMB   SMBProps
	// LeaseID guards the file a Create File replaces.
	LeaseID string
	// Data, for a Create File with a request body, is the file's first
	// content (at most Size bytes, from offset 0).
	Data *content.Ingested
}

// Create is Create Directory (an existing name is 409
// ResourceAlreadyExists) and Create File (which replaces and truncates an
// existing file; a directory of that name is 409 ResourceAlreadyExists).
func (s *Service) Create(ctx context.Context, req CreateRequest) (*Node, error) {
	if err := content.ValidateMetadata(req.Meta); err != nil {
		return nil, err
	}
	if req.Size < 0 || req.Size > MaxFileSize {
		return nil, azerr.InvalidValue(InputFileSize, "")
	}
	parts, err := SplitPath(req.Ref.Path)
	if err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return nil, azerr.New(azerr.ResourceAlreadyExists)
	}
	var out *Node
	var brks []Break
	err = s.update(ctx, func(tx storage.Tx) error {
		brks = brks[:0]
		sh, err := writableShareID(tx, req.Ref.share())
		if err != nil {
			return err
		}
		parent, old, err := lookup(tx, sh.ID, parts)
		if err != nil {
			return err
		}
		if !parent.Dir || parent.DeletePending {
			return azerr.New(azerr.ParentNotFound)
		}
		now := s.now()
		n := &Node{ID: newID(), Parent: parent.ID, Name: parts[len(parts)-1], Dir: req.Dir, Modified: s.written(now),
			Size: req.Size, Props: req.Props, Meta: req.Meta, Inline: !req.Dir}
		if !req.Dir && n.Props.ContentType == "" {
			// A new file's type; a later Set File Properties without one
			// clears it for good, as on Azure.
			n.Props.ContentType = DefaultContentType
		}
		if old != nil {
			if req.Dir || old.Dir {
				return azerr.New(azerr.ResourceAlreadyExists)
			}
			if err := s.checkREST(tx, sh.ID, old, accessWrite|accessDelete, 0, 0); err != nil {
				return err
			}
			if _, code := lease.Enforce(old.Lease, req.LeaseID, true, now, lease.FileTarget); code != 0 {
				return azerr.New(code)
			}
			if old.Attrs&AttrReadOnly != 0 {
				return azerr.New(azerr.ReadOnlyAttribute)
			}
			if old.Lease.Active(now) {
				n.Lease = old.Lease
			}
			// The replaced file keeps its id; its bytes are gone.
			n.ID, n.Handles = old.ID, old.Handles
			if err := dropExtents(tx, sh.ID, old); err != nil {
				return err
			}
			if err := addUsage(tx, sh.ID, req.Size-old.Size); err != nil {
				return err
			}
			n.ETag = s.etag(old.ETag, now)
		} else {
			if !req.Dir {
				if err := addUsage(tx, sh.ID, req.Size); err != nil {
					return err
				}
			}
			n.ETag = s.etag(0, now)
		}
		if req.Dir {
			n.Size = 0
		}
		perm, err := inheritedPerm(tx, sh.ID, parent)
		if err != nil {
			return err
		}
		if err := applySMB(tx, sh.ID, n, req.SMB, now, true, perm); err != nil {
			return err
		}
		if d := req.Data; d != nil && d.Size > 0 && !req.Dir {
			if d.Size > n.Size {
				return azerr.InvalidHeader("Content-Length", strconv.FormatInt(d.Size, 10))
			}
			if err := putExtents(tx, sh.ID, n, 0, d.Segs, false); err != nil {
				return err
			}
		}
		if err := putNode(tx, sh.ID, n); err != nil {
			return err
		}
		if err := s.breakParentLeases(tx, sh.ID, parent, [16]byte{}, [16]byte{}, &brks); err != nil {
			return err
		}
		n.path, n.AsOf = JoinPath(parts), now
		out = n
		return nil
	})
	if err == nil {
		s.deliver(brks)
	}
	return out, err
}

// Get is Get File/Directory Properties and Metadata. dir says which of
// the two the request addressed: a node of the other kind is
// ResourceNotFound. A supplied lease id must match the file's lease.
func (s *Service) Get(ctx context.Context, ref Ref, dir bool, leaseID string) (*Node, error) {
	var out *Node
	err := s.view(ctx, func(tx storage.Tx) error {
		sh, n, err := s.resolve(tx, ref, false)
		if err != nil {
			return err
		}
		if n.Dir != dir {
			return azerr.New(azerr.ResourceNotFound)
		}
		if err := s.checkREST(tx, sh.ID, n, accessNone, 0, 0); err != nil {
			return err
		}
		if leaseID != "" && ref.Snapshot == "" {
			if _, code := lease.Enforce(n.Lease, leaseID, false, n.AsOf, lease.FileTarget); code != 0 {
				return azerr.New(code)
			}
		}
		if ref.Snapshot != "" {
			n.Lease = lease.State{}
		}
		out = n
		return nil
	})
	return out, err
}

// SetRequest is Set File/Directory Properties or Metadata: nil fields are
// left as they are.
type SetRequest struct {
	Ref     Ref
	Dir     bool
	LeaseID string
	// Size resizes a file (truncating or extending with zeros).
	Size  *int64
	Props *content.Props
	Meta  *[]content.KV
	SMB   *SMBProps
}

// Set is Set File/Directory Properties and Set File/Directory Metadata.
func (s *Service) Set(ctx context.Context, req SetRequest) (*Node, error) {
	if req.Meta != nil {
		if err := content.ValidateMetadata(*req.Meta); err != nil {
			return nil, err
		}
	}
	if req.Size != nil && (*req.Size < 0 || *req.Size > MaxFileSize) {
		return nil, azerr.InvalidValue(InputFileSize, "")
	}
	var out *Node
	var brks []Break
	err := s.update(ctx, func(tx storage.Tx) error {
		brks = brks[:0]
		sh, parent, n, err := s.resolveIn(tx, req.Ref, true)
		if err != nil {
			return err
		}
		if n.Dir != req.Dir {
			return azerr.New(azerr.ResourceNotFound)
		}
		now := n.AsOf
		if !n.Dir {
			if err := s.checkREST(tx, sh.ID, n, accessWrite, 0, 0); err != nil {
				return err
			}
			if req.Size != nil && *req.Size != n.Size {
				if err := checkLocks(tx, sh.ID, n, 0, ^uint64(0), 0, true); err != nil {
					return err
				}
			}
			ls, code := lease.Enforce(n.Lease, req.LeaseID, true, now, lease.FileTarget)
			if code != 0 {
				return azerr.New(code)
			}
			n.Lease = ls
		} else if err := s.checkREST(tx, sh.ID, n, accessNone, 0, 0); err != nil {
			return err
		}
		if req.Meta != nil && n.Attrs&AttrReadOnly != 0 && !n.Dir {
			return azerr.New(azerr.ReadOnlyAttribute)
		}
		if req.Size != nil && *req.Size != n.Size {
			if err := resize(tx, sh, n, *req.Size); err != nil {
				return err
			}
		}
		if req.Props != nil {
			n.Props = *req.Props
		}
		if req.Meta != nil {
			n.Meta = *req.Meta
		}
		if req.SMB != nil {
			def := n.PermKey
			if parent != nil && def == "" {
				def = parent.PermKey
			}
			if err := applySMB(tx, sh.ID, n, *req.SMB, now, false, def); err != nil {
				return err
			}
		} else {
			n.ChangeTime = now
		}
		n.Modified, n.ETag = s.written(now), s.etag(n.ETag, now)
		if err := saveNode(tx, sh.ID, n); err != nil {
			return err
		}
		if err := s.breakParentLeases(tx, sh.ID, parent, [16]byte{}, [16]byte{}, &brks); err != nil {
			return err
		}
		out = n
		return nil
	})
	if err == nil {
		s.deliver(brks)
	}
	return out, err
}

// resize changes a file's size: bytes past a smaller size are dropped.
func resize(tx storage.Tx, sh *Share, n *Node, size int64) error {
	if err := addUsage(tx, sh.ID, size-n.Size); err != nil {
		return err
	}
	if size < n.Size {
		if err := clearExtents(tx, sh.ID, n, size, n.Size); err != nil {
			return err
		}
	}
	n.Size = size
	return nil
}

// Delete is Delete File and Delete Directory (a directory must be empty:
// 409 DirectoryNotEmpty). It commits at once: REST never leaves a node
// pending deletion.
func (s *Service) Delete(ctx context.Context, ref Ref, dir bool, leaseID string) error {
	var brks []Break
	err := s.update(ctx, func(tx storage.Tx) error {
		brks = brks[:0]
		sh, n, err := s.resolve(tx, ref, true)
		if err != nil {
			return err
		}
		if n.Dir != dir {
			return azerr.New(azerr.ResourceNotFound)
		}
		if n.ID == rootID {
			return azerr.New(azerr.InvalidResourceName)
		}
		if err := s.checkREST(tx, sh.ID, n, accessDelete, 0, 0); err != nil {
			return err
		}
		if dir {
			if err := checkEmpty(tx, sh.ID, n.ID); err != nil {
				return err
			}
		} else {
			if _, code := lease.Enforce(n.Lease, leaseID, true, n.AsOf, lease.FileTarget); code != 0 {
				return azerr.New(code)
			}
			if n.Attrs&AttrReadOnly != 0 {
				return azerr.New(azerr.ReadOnlyAttribute)
			}
			if err := addUsage(tx, sh.ID, -n.Size); err != nil {
				return err
			}
		}
		if err := s.breakParentOf(tx, sh.ID, n, nil, &brks); err != nil {
			return err
		}
		return dropNode(tx, sh.ID, n)
	})
	if err == nil {
		s.deliver(brks)
	}
	return err
}

// ListRequest is List Directories and Files.
type ListRequest struct {
	Ref            Ref
	Prefix, Marker string
	Max            int
}

// ListResult is one page of a directory listing.
type ListResult struct {
	Dir     *Node
	Entries []*Node
	Next    string
}

// List is List Directories and Files: one level, files and directories
// together in name order (case-insensitive), each counting toward Max;
// nodes pending deletion are left out.
func (s *Service) List(ctx context.Context, req ListRequest) (*ListResult, error) {
	out := &ListResult{}
	err := s.view(ctx, func(tx storage.Tx) error {
		sh, d, err := s.resolve(tx, req.Ref, false)
		if err != nil {
			return err
		}
		if !d.Dir {
			return azerr.New(azerr.ResourceNotFound)
		}
		out.Dir = d
		return scanDir(tx, sh.ID, d.ID, req.Prefix, req.Marker, func(n *Node) bool {
			if len(out.Entries) >= req.Max {
				out.Next = n.Name
				return false
			}
			out.Entries = append(out.Entries, n)
			return true
		})
	})
	return out, err
}

// scanDir calls fn for the children of dir whose folded names start with
// prefix's, from marker on, until fn returns false. Nodes pending
// deletion are skipped.
func scanDir(tx storage.Tx, sid, dir uint64, prefix, marker string, fn func(*Node) bool) error {
	return scanChildren(tx, sid, dir, prefix, marker, false, fn)
}

// scanChildren is scanDir, with nodes pending deletion when pending is set.
func scanChildren(tx storage.Tx, sid, dir uint64, prefix, marker string, pending bool, fn func(*Node) bool) error {
	p := keyenc.AppendPrefix(childrenPrefix(sid, dir), Fold(prefix))
	lo := p
	if marker != "" {
		if m := nodeKey(sid, dir, Fold(marker)); string(m) > string(lo) {
			lo = m
		}
	}
	it := tx.Scan(lo, keyenc.PrefixEnd(p), false)
	defer it.Close()
	for it.Next() {
		n, err := decodeNode(it.Value())
		if err != nil {
			return err
		}
		if (n.DeletePending && !pending) || n.ID == rootID {
			continue
		}
		if !fn(n) {
			return nil
		}
	}
	return it.Err()
}

// LeaseFile is Lease File: acquire (infinite only), change, release and
// break (always immediate). It changes neither ETag nor Last-Modified.
func (s *Service) LeaseFile(ctx context.Context, ref Ref, a lease.Action) (*Node, lease.Result, error) {
	var out *Node
	var res lease.Result
	err := s.update(ctx, func(tx storage.Tx) error {
		if ref.Snapshot != "" {
			return azerr.New(azerr.ShareSnapshotOperationNotSupported)
		}
		sh, n, err := s.resolve(tx, ref, true)
		if err != nil {
			return err
		}
		if n.Dir {
			return azerr.New(azerr.ResourceNotFound)
		}
		if err := s.checkREST(tx, sh.ID, n, accessNone, 0, 0); err != nil {
			return err
		}
		if a.Kind == lease.Acquire && n.Handles > 0 {
			// A REST lease stops SMB writes and deletes: clients caching
			// writes or handles flush and close first.
			hs, err := loadHandles(tx, sh.ID, n.ID)
			if err != nil {
				return err
			}
			if err := s.restBreaks(tx, hs, sh.ID, n, accessDelete); err != nil {
				return err
			}
		}
		if a.Kind == lease.Break {
			zero := 0
			a.BreakPeriod = &zero
		}
		st, r, code := lease.Apply(n.Lease, a, n.AsOf)
		if code != 0 {
			return azerr.New(code)
		}
		n.Lease, res = st, r
		if err := saveNode(tx, sh.ID, n); err != nil {
			return err
		}
		out = n
		return nil
	})
	return out, res, err
}

// checkEmpty is 409 DirectoryNotEmpty when the directory id of the share
// has anything in it.
func checkEmpty(tx storage.Tx, share, id uint64) error {
	has, err := hasChildren(tx, share, id)
	if err != nil {
		return err
	}
	if has {
		return azerr.New(azerr.DirectoryNotEmpty)
	}
	return nil
}

// hasChildren reports whether the directory id of the share has an entry.
func hasChildren(tx storage.Tx, share, id uint64) (bool, error) {
	p := childrenPrefix(share, id)
	it := tx.Scan(p, keyenc.PrefixEnd(p), false)
	defer it.Close()
	has := it.Next()
	return has, it.Err()
}
