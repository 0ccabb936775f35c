package blob

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/conditional"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/lease"
	"github.com/lazuli-storage/lazuli/storage"
)

// CopyRequest is Copy Blob / Copy Blob From URL / Put Blob From URL with a
// source on this server.
type CopyRequest struct {
	Dst       Ref
	Src       Ref
	SourceURL string
	Meta      []KV // nil: the source's metadata
	Tags      []KV // nil: no tags (copy keeps none unless given)
	CopyTags  bool // x-ms-copy-source-tag-option: COPY
	Cond      Cond // destination conditions → ConditionNotMet, as Azure answers every copy
	SrcCond   Cond // x-ms-source-if-* → SourceConditionNotMet
	// FromURL is Put Blob From URL: the result is a plain block blob, no
	// copy properties, and properties come from the request.
	FromURL bool
	Props   *Props
	Tier    string
	// Seal is x-ms-seal-blob for an append blob destination: nil keeps
	// the source's sealed state.
	Seal *bool
	// Rehydrate lets Copy Blob read an archived source into an online
	// Tier (copy to rehydrate); other copies refuse an archived source.
	Rehydrate bool
	// Incremental is Incremental Copy Blob: Src is a page blob snapshot,
	// newer than the one the destination last copied, and the copy
	// leaves a snapshot of the destination.
	Incremental bool
	// Protect is the immutability policy and legal hold of the new version.
	Protect *Protection
}

// sourceCheck loads and checks a copy source inside tx. An archived
// source is 409 BlobArchived unless rehydrate is set.
func (s *Service) sourceCheck(tx storage.Tx, src Ref, cond Cond, now time.Time, rehydrate bool) (*Blob, error) {
	if err := s.keyed(tx, &src); err != nil {
		return nil, err
	}
	if _, err := getContainer(tx, src.Account, src.Container); err != nil {
		return nil, azerr.New(azerr.BlobNotFound)
	}
	b, err := getBlob(tx, src.Account, src.Container, src.key(), src.Name, src.Snapshot)
	if err != nil {
		return nil, err
	}
	if b == nil || b.expired(now) {
		return nil, azerr.New(azerr.BlobNotFound)
	}
	b.settleRehydration(now)
	st := conditional.State{Exists: true, ETag: content.ETagRaw(b.ETag), LastModified: b.Modified}
	eval := conditional.EvalWrite
	if cond.SourceRead {
		eval = func(c conditional.Conditions, s conditional.State) (conditional.Outcome, error) {
			return conditional.EvalRead(c, s, "")
		}
	}
	out, err := eval(cond.Conditions, st)
	if err != nil {
		return nil, err
	}
	if out == conditional.NotModified {
		return nil, azerr.New(azerr.CannotVerifyCopySource).WithStatus(304)
	}
	if out != conditional.Pass {
		return nil, azerr.New(azerr.SourceConditionNotMet)
	}
	if cond.IfTags != "" {
		ok, err := MatchTags(cond.IfTags, b.Tags, "")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, azerr.New(azerr.SourceConditionNotMet)
		}
	}
	if b.AccessTier == "Archive" && !rehydrate {
		return nil, azerr.New(azerr.BlobArchived)
	}
	if err := checkKey(cond, b); err != nil {
		return nil, err
	}
	if src.Snapshot == "" && cond.LeaseID != "" {
		if _, code := lease.Enforce(b.Lease, cond.LeaseID, false, now, lease.BlobTarget); code != 0 {
			return nil, azerr.New(code)
		}
	}
	if err := hydrate(tx, src.Account, src.Container, b); err != nil {
		return nil, err
	}
	return b, nil
}

// CopyBlob copies a blob of this server synchronously: the destination
// shares the source's chunks and reports copy status "success".
func (s *Service) CopyBlob(ctx context.Context, req CopyRequest, copyID string) (*Blob, error) {
	if err := snapshotWrite(req.Dst); err != nil {
		return nil, err
	}
	if err := content.ValidateMetadata(req.Meta); err != nil {
		return nil, err
	}
	if err := ValidateTags(req.Tags); err != nil {
		return nil, err
	}
	var out *Blob
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &req.Dst); err != nil {
			return err
		}
		now := s.now()
		// Copy to rehydrate: lazuli rehydrates at once, as Set Blob Tier
		// does, so the copy completes in this transaction.
		rehydrate := req.Rehydrate && !req.FromURL && req.Tier != "" && req.Tier != "Archive"
		src, err := s.sourceCheck(tx, req.Src, req.SrcCond, now, rehydrate)
		if err != nil {
			return err
		}
		old, ls, err := s.loadChecked(tx, req.Dst, req.Cond, checkOpts{create: true}, now)
		if err != nil {
			return err
		}
		if req.Incremental {
			if err := incrementalCheck(src, old, req.Src.Snapshot); err != nil {
				return err
			}
		}
		if old != nil {
			if !req.FromURL && old.Type != src.Type {
				return azerr.New(azerr.InvalidBlobType)
			}
			if old.Copy != nil && old.Copy.Status == "pending" {
				return azerr.New(azerr.PendingCopyOperation)
			}
			if e := ls.Effective(now); e.Phase == lease.Leased && e.Duration != lease.Infinite {
				return azerr.New(azerr.InfiniteLeaseDurationRequired)
			}
		}
		b := &Blob{Name: req.Dst.Name, Type: src.Type, Created: now, Modified: s.written(now), Props: src.Props,
			Meta: src.Meta, Lease: ls, Blocks: src.Blocks, Pages: src.Pages, Size: src.Size, Seq: src.Seq,
			BlockIDLen: src.BlockIDLen, AppendCount: src.AppendCount, AccessTier: req.Tier, TierChanged: tierSetAt(req.Tier, now), Sealed: src.Sealed,
			KeySHA256: req.Cond.KeySHA256, EncryptionScope: req.Cond.EncryptionScope, key: req.Dst.key()}
		if req.Seal != nil && b.Type == AppendBlob {
			b.Sealed = *req.Seal
		}
		if req.FromURL {
			b.Type = BlockBlob
			if src.Type != BlockBlob {
				b.Blocks = []Block{{Size: src.Size, Segs: allSegs(src)}}
				b.Pages, b.Seq, b.AppendCount, b.Sealed = nil, 0, 0, false
			}
			if req.Props != nil {
				md5 := src.Props.ContentMD5
				b.Props = *req.Props
				if len(b.Props.ContentMD5) == 0 {
					b.Props.ContentMD5 = md5
				}
			}
			b.Meta = req.Meta
		} else if req.Meta != nil {
			b.Meta = req.Meta
		}
		switch {
		case req.Tags != nil:
			b.Tags = req.Tags
		case req.CopyTags:
			b.Tags = src.Tags
		}
		var prev uint64
		if old != nil {
			prev = old.ETag
			b.Created = old.Created
		}
		b.ETag = s.etag(prev, now)
		if !req.FromURL {
			b.Copy = &CopyInfo{ID: copyID, Source: req.SourceURL, Status: "success",
				Progress: strconv.FormatInt(src.Size, 10) + "/" + strconv.FormatInt(src.Size, 10), Completion: now}
		}
		if err := dropStaging(tx, req.Dst); err != nil {
			return err
		}
		if err := s.checkOverwrite(tx, req.Dst, old, req.Protect, now); err != nil {
			return err
		}
		req.Protect.apply(b)
		if err := s.beforeReplace(ctx, tx, req.Dst, old, b, policyRead{}, now); err != nil {
			return err
		}
		b.replacing(old)
		out = b
		if req.Incremental {
			return s.incrementalSnapshot(tx, req, b, now)
		}
		return putBlob(tx, req.Dst.Account, req.Dst.Container, b)
	})
	return out, err
}

// incrementalCheck applies the rules of Incremental Copy Blob: the source
// is a page blob snapshot (409 InvalidBlobType otherwise), the destination
// is absent or an earlier incremental copy (409 InvalidBlobType), and the
// snapshot is not older than the one last copied (409
// IncrementalCopyOfEarlierSnapshotNotAllowed).
func incrementalCheck(src, old *Blob, snapshot string) error {
	if src.Type != PageBlob {
		return azerr.New(azerr.InvalidBlobType)
	}
	if old == nil {
		return nil
	}
	if old.CopySnapshot == "" {
		return azerr.New(azerr.InvalidBlobType)
	}
	if snapshot < old.CopySnapshot {
		return azerr.New(azerr.IncrementalCopyOfEarlierSnapshotNotAllowed)
	}
	return nil
}

// incrementalSnapshot stores the destination of an incremental copy and
// the snapshot of it the copy makes, named in x-ms-copy-destination-snapshot.
func (s *Service) incrementalSnapshot(tx storage.Tx, req CopyRequest, b *Blob, now time.Time) error {
	t := now
	for {
		id := SnapshotTime(t)
		if _, err := tx.Get(blobKey(req.Dst.Account, req.Dst.Container, req.Dst.key(), id)); errors.Is(err, storage.ErrNotFound) {
			b.DestSnapshot = id
			break
		} else if err != nil {
			return err
		}
		t = t.Add(100 * time.Nanosecond)
	}
	b.CopySnapshot = req.Src.Snapshot
	if err := putBlob(tx, req.Dst.Account, req.Dst.Container, b); err != nil {
		return err
	}
	snap := *b
	snap.loaded, snap.tagsKnown, snap.replaced = false, false, nil
	snap.Lease = lease.State{}
	snap.Snapshot = b.DestSnapshot
	return putBlob(tx, req.Dst.Account, req.Dst.Container, &snap)
}

// AbortCopy is Abort Copy Blob. Copies on this server complete
// synchronously, so there is never a pending copy to abort.
func (s *Service) AbortCopy(ctx context.Context, ref Ref, copyID string, cond Cond) error {
	return s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &ref); err != nil {
			return err
		}
		if err := checkPath(ctx, tx, ref, OpWrite); err != nil {
			return err
		}
		b, _, err := s.loadChecked(tx, ref, Cond{LeaseID: cond.LeaseID}, checkOpts{mustExist: true, read: true}, s.now())
		if err != nil {
			return err
		}
		if b.Copy == nil || b.Copy.Status != "pending" {
			return azerr.New(azerr.NoPendingCopyOperation)
		}
		if b.Copy.ID != copyID {
			return azerr.New(azerr.CopyIdMismatch)
		}
		return nil
	})
}

// PutBlockFromURL stages bytes [off, off+n) (n < 0: to the end) of a blob
// on this server as block id, sharing its chunks.
func (s *Service) PutBlockFromURL(ctx context.Context, ref Ref, id string, src Ref, off, n int64, srcCond, cond Cond) error {
	return s.putBlock(ctx, ref, id, cond, func(tx storage.Tx, now time.Time) ([]Segment, int64, error) {
		return s.sourceRange(tx, src, off, n, srcCond, now)
	})
}

// sourceRange checks a copy source and returns the segments of bytes
// [off, off+n) (n < 0: to the end).
func (s *Service) sourceRange(tx storage.Tx, src Ref, off, n int64, srcCond Cond, now time.Time) ([]Segment, int64, error) {
	b, err := s.sourceCheck(tx, src, srcCond, now, false)
	if err != nil {
		return nil, 0, err
	}
	if n < 0 {
		n = b.Size - off
	}
	if off < 0 || n < 0 || off+n > b.Size {
		return nil, 0, azerr.New(azerr.InvalidRange)
	}
	return Segments(b, off, n), n, nil
}
