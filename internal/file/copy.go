package file

import (
	"context"
	"strconv"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/lease"
	"github.com/lazuli-storage/lazuli/storage"
)

// CopySMB says which SMB properties a copy takes from its source.
type CopySMB struct {
	Permission, Attributes, Creation, LastWrite, Change bool
	// SetArchive adds Archive to the attributes whatever they are
	// (x-ms-file-copy-set-archive).
	SetArchive bool
	// IgnoreReadOnly lets the copy replace a ReadOnly destination
	// (x-ms-file-copy-ignore-readonly); otherwise that is 409
	// ReadOnlyAttribute.
	IgnoreReadOnly bool
}

// BlobSource is a blob read as the source of Copy File: it reads as a file
// with the blob's content headers and metadata.
type BlobSource struct {
	Size  int64
	Props content.Props
	Meta  []content.KV
	// Segs hold the blob's Size bytes.
	Segs []content.Segment
}

// CopyRequest is Copy File.
type CopyRequest struct {
	Source Ref
	// FromBlob, when set, is the source instead of Source: a blob of this
	// server, read by the caller (its segments stay readable for the
	// chunk collector's grace period).
	FromBlob  *BlobSource
	SourceURL string
	Dest      Ref
	// Meta replaces the source's metadata when set.
	Meta    *[]content.KV
	SMB     SMBProps
	CopySMB CopySMB
	LeaseID string
}

// CopyFile is Copy File between files of this server. It completes in
// one transaction: the destination (created or replaced) points at the
// source's chunks, so nothing is copied and the status is "success".
func (s *Service) CopyFile(ctx context.Context, req CopyRequest) (*Node, error) {
	if req.Meta != nil {
		if err := content.ValidateMetadata(*req.Meta); err != nil {
			return nil, err
		}
	}
	parts, err := SplitPath(req.Dest.Path)
	if err != nil {
		return nil, err
	}
	copyID := s.newID()
	var out *Node
	var brks []Break
	err = s.update(ctx, func(tx storage.Tx) error {
		brks = brks[:0]
		var ssh *Share
		var src *Node
		var segs []content.Segment
		if b := req.FromBlob; b != nil {
			// A blob source reads as a file with its content headers and
			// metadata; it has no SMB properties of its own.
			ssh, src = &Share{}, &Node{Size: b.Size, Props: b.Props, Meta: b.Meta}
			segs = b.Segs
		} else {
			var err error
			ssh, src, err = s.resolve(tx, req.Source, false)
			if e, ok := azerr.As(err); ok && e.Status == 404 && req.Source.Account == req.Dest.Account {
				// A missing source of the caller's own account is its
				// own 404 (ResourceNotFound), as Azure answers.
				return err
			}
			if err != nil {
				return azerr.Newf(azerr.CannotVerifyCopySource, "The copy source could not be read: %v", err).WithStatus(404)
			}
			if src.Dir {
				return azerr.New(azerr.CannotVerifyCopySource).WithStatus(404)
			}
			if err := s.checkREST(tx, ssh.ID, src, accessRead, 0, 0); err != nil {
				return err
			}
			if segs, err = segments(tx, ssh.ID, src, 0, src.Size); err != nil {
				return err
			}
		}
		sh, err := writableShareID(tx, req.Dest.share())
		if err != nil {
			return err
		}
		parent, old, err := lookup(tx, sh.ID, parts)
		if err != nil {
			return err
		}
		if parent == nil || !parent.Dir {
			return azerr.New(azerr.ParentNotFound)
		}
		now := s.now()
		n := &Node{ID: newID(), Parent: parent.ID, Name: parts[len(parts)-1], Modified: s.written(now), Size: src.Size,
			Props: src.Props, Meta: src.Meta, Inline: true}
		if req.Meta != nil {
			n.Meta = *req.Meta
		}
		delta := src.Size
		if old != nil {
			if old.Dir {
				return azerr.New(azerr.ResourceAlreadyExists)
			}
			if err := s.checkREST(tx, sh.ID, old, accessWrite|accessDelete, 0, 0); err != nil {
				return err
			}
			ls, code := lease.Enforce(old.Lease, req.LeaseID, true, now, lease.FileTarget)
			if code != 0 {
				return azerr.New(code)
			}
			if old.Attrs&AttrReadOnly != 0 && !req.CopySMB.IgnoreReadOnly {
				return azerr.New(azerr.ReadOnlyAttribute)
			}
			if ls.Active(now) {
				n.Lease = ls
			}
			n.ID, n.Handles, n.ETag = old.ID, old.Handles, old.ETag
			if err := dropExtents(tx, sh.ID, old); err != nil {
				return err
			}
			delta -= old.Size
		} else if req.LeaseID != "" {
			return azerr.New(azerr.LeaseNotPresentWithFileOperation)
		}
		if err := addUsage(tx, sh.ID, delta); err != nil {
			return err
		}
		smb := req.SMB
		if req.CopySMB.Attributes {
			a := src.Attrs
			smb.Attrs = &a
		}
		if req.CopySMB.Creation {
			smb.Creation = TimeSet{Set: true, T: src.CreationTime}
		}
		if req.CopySMB.LastWrite {
			smb.LastWrite = TimeSet{Set: true, T: src.LastWriteTime}
		}
		if req.CopySMB.Change {
			smb.Change = TimeSet{Set: true, T: src.ChangeTime}
		}
		defPerm, err := inheritedPerm(tx, sh.ID, parent)
		if err != nil {
			return err
		}
		if req.CopySMB.Permission && smb.Perm == (Permission{}) && req.FromBlob == nil && ssh.ID == sh.ID {
			defPerm = src.PermKey
		}
		if err := applySMB(tx, sh.ID, n, smb, now, true, defPerm); err != nil {
			return err
		}
		if req.CopySMB.SetArchive {
			n.Attrs |= AttrArchive
		}
		n.ETag = s.etag(n.ETag, now)
		n.Copy = &CopyInfo{ID: copyID, Source: req.SourceURL, Status: "success", Progress: strconv.FormatInt(src.Size, 10) + "/" + strconv.FormatInt(src.Size, 10), Completion: now}
		// Zero segments of the source are gaps, not written ranges.
		if err := putExtents(tx, sh.ID, n, 0, segs, true); err != nil {
			return err
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
