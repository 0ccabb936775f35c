// Package smbfile is the SMB server's Backend over the File service: each
// SMB operation is one call into package file, which runs it in a storage
// transaction against the same share, node and handle records REST uses,
// so share modes, delete-pending state and byte-range locks are one truth
// for both protocols.
package smbfile

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/cluster"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/file"
	"github.com/lazuli-storage/lazuli/internal/smb"
)

// Backend serves SMB from a File service.
type Backend struct {
	svc    *file.Service
	mem    *cluster.Membership
	caches caches
}

// New returns the Backend of svc; the handles it opens belong to mem,
// this instance's membership (Join it before serving).
func New(svc *file.Service, mem *cluster.Membership) *Backend { return &Backend{svc: svc, mem: mem} }

// Shares lists the account's shares (snapshots are not served over SMB).
func (b *Backend) Shares(ctx context.Context, account string) ([]string, error) {
	var out []string
	marker := ""
	for {
		shares, next, err := b.svc.ListShares(ctx, file.ListSharesRequest{Account: account, Marker: marker, Max: 5000})
		if err != nil {
			return nil, mapErr(err)
		}
		for _, s := range shares {
			out = append(out, s.Name)
		}
		if next == "" || len(out) > 100000 {
			return out, nil
		}
		marker = next
	}
}

// ShareExists answers smb.ErrShareNotFound for a share the account lacks.
func (b *Backend) ShareExists(ctx context.Context, account, share string) error {
	_, err := b.svc.GetShare(ctx, file.ShareRef{Account: account, Name: share}, "")
	return mapErr(err)
}

// ShareSize returns the share's quota and usage (Get Share Stats).
func (b *Backend) ShareSize(ctx context.Context, account, share string) (int64, int64, error) {
	ref := file.ShareRef{Account: account, Name: share}
	sh, err := b.svc.GetShare(ctx, ref, "")
	if err != nil {
		return 0, 0, mapErr(err)
	}
	used, err := b.svc.ShareUsage(ctx, ref)
	if err != nil {
		return 0, 0, mapErr(err)
	}
	return int64(sh.Quota) << 30, used, nil
}

// Open runs an SMB CREATE as file.Open.
func (b *Backend) Open(ctx context.Context, req *smb.OpenRequest) (smb.Handle, smb.Stat, error) {
	ref := file.ShareRef{Account: req.Account, Name: req.Share}
	if !req.Snapshot.IsZero() {
		// Snapshot ids are their times, to the 100 ns a FILETIME holds.
		// A time no snapshot was taken at has no previous version,
		// whatever the open asks (Windows answers that first).
		ref.Snapshot = file.FormatTime(req.Snapshot)
		if _, err := b.svc.GetShare(ctx, ref, ""); code(err) == azerr.ShareNotFound {
			return nil, smb.Stat{}, smb.ErrNotFound
		}
		if req.DesiredAccess&smb.SnapshotChangeRights != 0 {
			return nil, smb.Stat{}, smb.ErrAccessDenied // a previous version is read-only
		}
	}
	owner, err := b.mem.Owner()
	if err != nil {
		return nil, smb.Stat{}, mapErr(err)
	}
	res, err := b.svc.Open(ctx, file.OpenRequest{Share: ref, Path: req.Path, Owner: owner,
		Disposition:   file.Disposition(req.Disposition),
		Directory:     req.CreateOptions&smb.FileDirectoryFile != 0,
		NonDirectory:  req.CreateOptions&smb.FileNonDirectoryFile != 0,
		DesiredAccess: req.DesiredAccess, ShareAccess: req.ShareAccess,
		DeleteOnClose: req.CreateOptions&smb.FileDeleteOnClose != 0,
		// Of the attributes a create may carry, these are kept (as NTFS
		// does); the others (NORMAL, SPARSE, COMPRESSED...) are not.
		Attrs: file.Attr(req.Attributes & (smb.AttrReadOnly | smb.AttrHidden | smb.AttrSystem | smb.AttrArchive |
			smb.AttrTemporary | smb.AttrOffline | smb.AttrNotContentIndexed)),
		Session: req.SessionID, ClientIP: req.ClientIP, Cache: cacheRequest(req.Cache), Waiting: req.Waiting})
	if err != nil {
		if code(err) == azerr.ResourceTypeMismatch {
			if req.CreateOptions&smb.FileDirectoryFile != 0 {
				return nil, smb.Stat{}, smb.ErrNotDirectory
			}
			return nil, smb.Stat{}, smb.ErrIsDirectory
		}
		return nil, smb.Stat{}, mapErr(err)
	}
	h := &handle{svc: b.svc, share: ref, ref: res.Handle, action: uint32(res.Action), b: b}
	if res.Cache != nil {
		h.cache, h.onBreak = cacheOf(res.Cache), req.OnBreak
		b.caches.add(h)
	}
	return h, stat(res.Node), nil
}

type handle struct {
	svc    *file.Service
	share  file.ShareRef
	ref    file.HandleRef
	action uint32
	// written is set by the first WRITE: writes notify change watchers
	// once, at close (as Windows reports them), not one by one.
	written atomic.Bool
	b       *Backend
	// onBreak sends breaks of the open's cache; cache is its state
	// (guarded by mu).
	onBreak func(smb.Break)
	mu      sync.Mutex
	cache   smb.Cache
}

func (h *handle) ID() uint64     { return h.ref.ID }
func (h *handle) Action() uint32 { return h.action }

func stat(n *file.Node) smb.Stat {
	return smb.Stat{Name: n.Name, IsDir: n.Dir, Size: n.Size, FileID: n.ID, ParentID: n.Parent,
		Attributes: uint32(n.Attrs), Creation: n.CreationTime, LastAccess: n.LastAccessTime,
		LastWrite: n.LastWriteTime, Change: n.ChangeTime, DeletePending: n.DeletePending}
}

func (h *handle) Stat(ctx context.Context) (smb.Stat, error) {
	n, err := h.svc.GetInfo(ctx, h.ref)
	if err != nil {
		return smb.Stat{}, mapErr(err)
	}
	return stat(n), nil
}

func (h *handle) ReadAt(ctx context.Context, off, n int64) (int64, io.WriterTo, error) {
	segs, nd, err := h.svc.ReadAt(ctx, h.ref, off, n)
	if err != nil {
		return 0, nil, dataErr(err)
	}
	return min(n, max(nd.Size-off, 0)), segWriter{h.svc, ctx, segs}, nil
}

// segWriter writes the segments of a read.
type segWriter struct {
	svc  *file.Service
	ctx  context.Context
	segs []content.Segment
}

func (w segWriter) WriteTo(dst io.Writer) (int64, error) {
	n, err := w.svc.WriteSegments(w.ctx, dst, w.segs)
	return n, mapErr(err)
}

func (h *handle) WriteAt(ctx context.Context, p []byte, off int64) error {
	data, err := h.svc.IngestBytes(ctx, p)
	if err != nil {
		return mapErr(err)
	}
	h.written.Store(true)
	_, err = h.svc.WriteAt(file.Quiet(ctx), h.ref, off, data)
	return dataErr(err)
}

func (h *handle) Truncate(ctx context.Context, size int64) error {
	_, err := h.svc.SetEndOfFile(ctx, h.ref, size)
	return dataErr(err)
}

func (h *handle) SetBasic(ctx context.Context, sb smb.SetBasic) error {
	var bi file.BasicInfo
	for _, t := range []struct {
		v   time.Time
		dst **time.Time
	}{{sb.Creation, &bi.Creation}, {sb.LastAccess, &bi.LastAccess}, {sb.LastWrite, &bi.LastWrite}, {sb.Change, &bi.Change}} {
		if !t.v.IsZero() {
			v := t.v
			*t.dst = &v
		}
	}
	if sb.Attributes != 0 {
		a := file.Attr(sb.Attributes)
		bi.Attrs = &a
	}
	_, err := h.svc.SetBasicInfo(ctx, h.ref, bi)
	return mapErr(err)
}

func (h *handle) SetDeletePending(ctx context.Context, pending bool) error {
	_, err := h.svc.SetDeletePending(file.WithWaiting(ctx, smb.Waiting(ctx)), h.ref, pending)
	if code(err) == azerr.ReadOnlyAttribute {
		return smb.ErrCannotDelete
	}
	return mapErr(err)
}

func (h *handle) Rename(ctx context.Context, newPath string, replace bool) error {
	_, err := h.svc.RenameHandle(file.WithWaiting(ctx, smb.Waiting(ctx)), h.ref, newPath, replace)
	switch code(err) {
	case azerr.ResourceAlreadyExists:
		return smb.ErrExists
	case azerr.ResourceTypeMismatch, azerr.SharingViolation:
		return smb.ErrAccessDenied
	}
	return mapErr(err)
}

func (h *handle) Lock(ctx context.Context, off, n uint64, exclusive bool) error {
	return mapErr(h.svc.Lock(ctx, h.ref, off, n, exclusive))
}

func (h *handle) Unlock(ctx context.Context, off, n uint64) error {
	err := h.svc.Unlock(ctx, h.ref, off, n)
	if code(err) == azerr.ResourceNotFound {
		return smb.ErrRangeNotLocked
	}
	return mapErr(err)
}

func (h *handle) ReadDir(ctx context.Context, after string, max int) ([]smb.Stat, error) {
	// The service's marker is the first name returned: ask one more and
	// drop after itself when it is still there.
	nodes, _, err := h.svc.ReadDir(ctx, h.ref, "", after, max+1)
	if err != nil {
		if code(err) == azerr.ResourceTypeMismatch {
			return nil, smb.ErrNotDirectory
		}
		return nil, mapErr(err)
	}
	out := make([]smb.Stat, 0, len(nodes))
	for _, n := range nodes {
		if after != "" && file.Fold(n.Name) == file.Fold(after) {
			continue
		}
		out = append(out, stat(n))
	}
	if len(out) > max {
		out = out[:max]
	}
	return out, nil
}

func (h *handle) SDDL(ctx context.Context) (string, error) {
	n, err := h.svc.GetInfo(ctx, h.ref)
	if err != nil {
		return "", mapErr(err)
	}
	if n.PermKey == "" {
		return "", nil
	}
	sddl, err := h.svc.GetPermission(ctx, h.share, n.PermKey)
	if err != nil {
		return "", nil // a missing permission reads as the default descriptor
	}
	return sddl, nil
}

func (h *handle) SetSDDL(ctx context.Context, sddl string) error {
	_, err := h.svc.SetSecurity(ctx, h.ref, sddl)
	if code(err) == azerr.FileInvalidPermission {
		return smb.ErrInvalidParameter
	}
	return mapErr(err)
}

func (h *handle) Close(ctx context.Context) error {
	written := h.written.Load()
	if written {
		// Best effort: the close matters more.
		h.svc.NotifyWritten(ctx, h.ref)
	}
	h.b.caches.remove(h)
	closeFn := h.svc.Close
	if written {
		closeFn = h.svc.CloseWritten
	}
	_, err := closeFn(ctx, h.ref)
	return mapErr(err)
}

func code(err error) azerr.Code {
	var ae *azerr.Error
	if errors.As(err, &ae) {
		return ae.Code
	}
	return 0
}

// dataErr maps errors of reads and writes, where a type mismatch means
// the handle is a directory's.
func dataErr(err error) error {
	if code(err) == azerr.ResourceTypeMismatch {
		return smb.ErrIsDirectory
	}
	return mapErr(err)
}

// mapErr turns the File service's errors into the SMB layer's.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, context.Canceled):
		return err // a CANCEL ended the wait for breaks
	case errors.Is(err, file.ErrHandleClosed):
		return smb.ErrFileClosed
	case errors.Is(err, file.ErrAccessDenied):
		return smb.ErrAccessDenied
	case errors.Is(err, file.ErrCannotDelete):
		return smb.ErrCannotDelete
	case errors.Is(err, file.ErrParentInUse):
		return smb.ErrSharingViolation
	case errors.Is(err, cluster.ErrInstanceLost):
		return smb.ErrUnavailable
	case errors.Is(err, file.ErrLeaseKeyInUse):
		return smb.ErrInvalidParameter
	}
	// Engine failures a client may retry take the one domain mapping
	// REST uses too (ServerBusy), then SMB's retryable status.
	switch code(azerr.FromEngine(err)) {
	case azerr.ServerBusy:
		return smb.ErrUnavailable
	case azerr.ResourceNotFound:
		return smb.ErrNotFound
	case azerr.ParentNotFound:
		return smb.ErrPathNotFound
	case azerr.ShareNotFound, azerr.ShareBeingDeleted:
		return smb.ErrShareNotFound
	case azerr.ResourceAlreadyExists:
		return smb.ErrExists
	case azerr.ResourceTypeMismatch:
		return smb.ErrInvalidParameter
	case azerr.SharingViolation, azerr.LeaseIdMissing, azerr.LeaseAlreadyPresent:
		return smb.ErrSharingViolation
	case azerr.SMBDeletePending, azerr.DeletePending:
		return smb.ErrDeletePending
	case azerr.FileLockConflict:
		return smb.ErrLockConflict
	case azerr.DirectoryNotEmpty:
		return smb.ErrNotEmpty
	case azerr.ReadOnlyAttribute, azerr.ShareSnapshotOperationNotSupported, azerr.CannotDeleteFileOrDirectory:
		return smb.ErrAccessDenied
	case azerr.ShareSizeLimitReached:
		return smb.ErrDiskFull
	case azerr.InvalidResourceName, azerr.InvalidFileOrDirectoryPathName:
		return smb.ErrInvalidName
	case azerr.InvalidRange, azerr.OutOfRangeInput, azerr.InvalidHeaderValue:
		return smb.ErrInvalidParameter
	}
	return err
}
