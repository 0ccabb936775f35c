package blob

import (
	"context"
	"encoding/base64"
	"errors"
	"sort"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/conditional"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// ValidateBlockID checks a block id: Base64 that decodes to at most 64
// bytes.
func ValidateBlockID(id string) error {
	raw, err := base64.StdEncoding.DecodeString(id)
	if err != nil || len(raw) == 0 || len(raw) > MaxBlockIDBytes {
		return azerr.New(azerr.InvalidBlockId)
	}
	return nil
}

// rawIDLen is the length of a (valid) block id once decoded.
func rawIDLen(id string) int {
	raw, _ := base64.StdEncoding.DecodeString(id)
	return len(raw)
}

// StagingLifetime is how long uncommitted blocks live after the last Put
// Block; older ones are treated as gone and removed by the next Put Block.
const StagingLifetime = 7 * 24 * time.Hour

// liveStaging returns the staging record of ref, or nil when there is none
// or it has outlived StagingLifetime.
func liveStaging(tx storage.Tx, ref Ref, now time.Time) (*Staging, error) {
	st, err := getStaging(tx, ref)
	if err != nil || st == nil {
		return st, err
	}
	if now.Sub(st.Touched) > StagingLifetime {
		return nil, nil
	}
	return st, nil
}

func getStaging(tx storage.Tx, ref Ref) (*Staging, error) {
	v, err := tx.Get(stagingKey(ref.Account, ref.Container, ref.key()))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decode[Staging](v)
}

// uncommittedDates evaluates If-Modified-Since and If-Unmodified-Since
// against the uncommitted blob that staged blocks make: Azure keeps its
// last-modified time (the last Put Block), so committing with an
// If-Modified-Since later than that fails with 412 although no blob is
// visible yet.
func uncommittedDates(cond Cond, st *Staging) error {
	c := conditional.Conditions{IfModifiedSince: cond.IfModifiedSince, IfUnmodifiedSince: cond.IfUnmodifiedSince}
	if !c.Any() || cond.IfMatch != nil || cond.IfNoneMatch != nil {
		return nil
	}
	out, err := conditional.EvalWrite(c, conditional.State{Exists: true, LastModified: st.Touched})
	if err != nil {
		return err
	}
	return out.Err(azerr.ConditionNotMet, 0)
}

// PutBlock is Put Block (and Put Block From URL): stages data under id.
// It does not change the blob's ETag or Last-Modified; on a missing blob
// it creates an invisible uncommitted blob.
func (s *Service) PutBlock(ctx context.Context, ref Ref, id string, data Ingested, cond Cond) error {
	return s.putBlock(ctx, ref, id, cond, func(storage.Tx, time.Time) ([]Segment, int64, error) {
		return data.Segs, data.Size, nil
	})
}

// putBlock stages the bytes source gives under id. source runs inside the
// transaction with the operation's one clock reading.
func (s *Service) putBlock(ctx context.Context, ref Ref, id string, cond Cond, source func(tx storage.Tx, now time.Time) ([]Segment, int64, error)) error {
	if err := snapshotWrite(ref); err != nil {
		return err
	}
	if err := ValidateBlockID(id); err != nil {
		return err
	}
	return s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &ref); err != nil {
			return err
		}
		now := s.now()
		if err := checkPath(ctx, tx, ref, OpCreate); err != nil {
			return err
		}
		b, _, err := s.loadChecked(tx, ref, cond, checkOpts{}, now)
		if err != nil {
			return err
		}
		if b != nil && b.Type != BlockBlob {
			return azerr.New(azerr.InvalidBlobType)
		}
		if err := blockWritable(ctx, tx, ref, b); err != nil {
			return err
		}
		segs, size, err := source(tx, now)
		if err != nil {
			return err
		}
		st, err := liveStaging(tx, ref, now)
		if err != nil {
			return err
		}
		if st == nil {
			// No staged blocks, or only expired ones: start afresh.
			if err := dropStaging(tx, ref); err != nil {
				return err
			}
			st = &Staging{IDLen: rawIDLen(id)}
		}
		// Uncommitted ids share one length, that of the decoded id
		// ("1" and "123" both encode to four characters); committed
		// blocks do not count.
		if st.Count > 0 && st.IDLen != rawIDLen(id) {
			return azerr.New(azerr.InvalidBlobOrBlock)
		}
		st.IDLen = rawIDLen(id)
		k := blockKey(ref.Account, ref.Container, ref.key(), id)
		if _, err := tx.Get(k); errors.Is(err, storage.ErrNotFound) {
			if st.Count >= MaxUncommitted {
				return azerr.Newf(azerr.BlockCountExceedsLimit, "The uncommitted block count cannot exceed the maximum limit of 100,000 blocks.")
			}
			st.Count++
		} else if err != nil {
			return err
		}
		st.Touched = now
		if err := tx.Set(k, encodeBlock(&Block{ID: id, Size: size, Segs: segs})); err != nil {
			return err
		}
		return tx.Set(stagingKey(ref.Account, ref.Container, ref.key()), encode(st))
	})
}

// BlockListItem is one entry of a Put Block List body.
type BlockListItem struct {
	ID   string
	Kind string // "Committed", "Uncommitted" or "Latest"
}

// PutBlockListRequest is Put Block List.
type PutBlockListRequest struct {
	Ref
	Blocks []BlockListItem
	Props  Props
	Meta   []KV
	Tags   []KV
	Cond   Cond
	Tier   string
	// Protect is the immutability policy and legal hold of the new version.
	Protect *Protection
}

// PutBlockList is Put Block List: the blob's content becomes the listed
// blocks (chunk references are moved, no data is copied); properties and
// metadata are replaced; snapshots and an active lease are kept; staged
// blocks not used are dropped.
func (s *Service) PutBlockList(ctx context.Context, req PutBlockListRequest) (*Blob, error) {
	if err := snapshotWrite(req.Ref); err != nil {
		return nil, err
	}
	if len(req.Blocks) > MaxCommittedBlocks {
		return nil, azerr.New(azerr.BlockListTooLong)
	}
	for _, it := range req.Blocks {
		if err := ValidateBlockID(it.ID); err != nil {
			return nil, azerr.New(azerr.InvalidBlockList)
		}
	}
	if err := content.ValidateMetadata(req.Meta); err != nil {
		return nil, err
	}
	if err := ValidateTags(req.Tags); err != nil {
		return nil, err
	}
	var out *Blob
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &req.Ref); err != nil {
			return err
		}
		now := s.now()
		old, ls, err := s.loadChecked(tx, req.Ref, req.Cond, checkOpts{create: true}, now)
		if err != nil {
			return err
		}
		if err := blockWritable(ctx, tx, req.Ref, old); err != nil {
			return err
		}
		committed := map[string]Block{}
		if old != nil && old.Type == BlockBlob {
			if err := hydrate(tx, req.Account, req.Container, old); err != nil {
				return err
			}
			for _, bl := range old.Blocks {
				if bl.ID != "" {
					committed[bl.ID] = bl
				}
			}
		}
		staged := map[string]Block{}
		st, err := liveStaging(tx, req.Ref, now)
		if err != nil {
			return err
		}
		if old == nil && st != nil {
			if err := uncommittedDates(req.Cond, st); err != nil {
				return err
			}
		}
		if st != nil {
			p := blocksPrefix(req.Account, req.Container, req.key())
			it := tx.Scan(p, keyenc.PrefixEnd(p), false)
			for it.Next() {
				bl, err := decodeBlock(it.Value())
				if err != nil {
					it.Close()
					return err
				}
				staged[bl.ID] = *bl
			}
			err = it.Err()
			it.Close()
			if err != nil {
				return err
			}
		}
		b := &Blob{Name: req.Name, Type: BlockBlob, Created: now, Modified: s.written(now), Props: req.Props,
			Meta: req.Meta, Tags: req.Tags, Lease: ls, AccessTier: req.Tier, TierChanged: tierSetAt(req.Tier, now), KeySHA256: req.Cond.KeySHA256,
			EncryptionScope: req.Cond.EncryptionScope, key: req.key()}
		var prev uint64
		if old != nil {
			prev = old.ETag
			b.Created = old.Created
		}
		b.ETag = s.etag(prev, now)
		for _, item := range req.Blocks {
			var bl Block
			var ok bool
			switch item.Kind {
			case "Committed":
				bl, ok = committed[item.ID]
			case "Uncommitted":
				bl, ok = staged[item.ID]
			default:
				if bl, ok = staged[item.ID]; !ok {
					bl, ok = committed[item.ID]
				}
			}
			if !ok {
				return azerr.New(azerr.InvalidBlockList)
			}
			if b.BlockIDLen != 0 && b.BlockIDLen != len(item.ID) {
				return azerr.New(azerr.InvalidBlockList)
			}
			b.BlockIDLen = len(item.ID)
			b.Blocks = append(b.Blocks, bl)
			b.Size += bl.Size
		}
		if err := dropStaging(tx, req.Ref); err != nil {
			return err
		}
		if err := s.checkOverwrite(tx, req.Ref, old, req.Protect, now); err != nil {
			return err
		}
		req.Protect.apply(b)
		if err := s.beforeReplace(ctx, tx, req.Ref, old, b, policyRead{}, now); err != nil {
			return err
		}
		b.replacing(old)
		out = b
		return putBlob(tx, req.Account, req.Container, b)
	})
	return out, err
}

// BlockInfo is one entry of Get Block List.
type BlockInfo struct {
	Name string
	Size int64
}

// BlockList is the result of Get Block List.
type BlockList struct {
	Blob        *Blob // nil when only uncommitted blocks exist
	Committed   []BlockInfo
	Uncommitted []BlockInfo
}

// GetBlockList is Get Block List. which is "committed", "uncommitted" or
// "all".
func (s *Service) GetBlockList(ctx context.Context, ref Ref, which string, cond Cond) (*BlockList, error) {
	out := &BlockList{}
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &ref); err != nil {
			return err
		}
		now := s.now()
		if err := checkPath(ctx, tx, ref, OpRead); err != nil {
			return err
		}
		b, _, err := s.loadChecked(tx, ref, cond, checkOpts{read: true}, now)
		if err != nil {
			return err
		}
		if b != nil {
			switch b.Type {
			case PageBlob:
				return azerr.New(azerr.InvalidBlobType).WithStatus(400)
			case AppendBlob:
				return azerr.New(azerr.InvalidBlobType)
			}
		}
		var st *Staging
		if ref.Snapshot == "" {
			if st, err = liveStaging(tx, ref, now); err != nil {
				return err
			}
		}
		if b == nil && st == nil {
			return azerr.New(azerr.BlobNotFound)
		}
		if b != nil {
			if err := hydrate(tx, ref.Account, ref.Container, b); err != nil {
				return err
			}
		}
		out.Blob = b
		if b != nil && which != "uncommitted" {
			out.Committed = []BlockInfo{}
			for _, bl := range b.Blocks {
				out.Committed = append(out.Committed, BlockInfo{bl.ID, bl.Size})
			}
		}
		if which != "committed" {
			out.Uncommitted = []BlockInfo{}
			if st != nil {
				p := blocksPrefix(ref.Account, ref.Container, ref.key())
				it := tx.Scan(p, keyenc.PrefixEnd(p), false)
				for it.Next() {
					bl, err := decodeBlock(it.Value())
					if err != nil {
						it.Close()
						return err
					}
					out.Uncommitted = append(out.Uncommitted, BlockInfo{bl.ID, bl.Size})
				}
				err := it.Err()
				it.Close()
				if err != nil {
					return err
				}
				sort.Slice(out.Uncommitted, func(i, j int) bool { return out.Uncommitted[i].Name < out.Uncommitted[j].Name })
			}
		}
		return nil
	})
	return out, err
}

// AppendRequest is Append Block (or Append Block From URL when Source is
// set: bytes [SourceOff, SourceOff+SourceLen) of a blob on this server).
type AppendRequest struct {
	Data      Ingested
	Source    *Ref
	SourceOff int64
	SourceLen int64 // < 0: to the end of the source
	SrcCond   Cond
	AppendPos *int64
	MaxSize   *int64
	Cond      Cond
}

// AppendBlock is Append Block: it returns the blob and the offset where
// the block landed. Appends serialize in the Update, so concurrent
// appends never overlap.
func (s *Service) AppendBlock(ctx context.Context, ref Ref, req AppendRequest) (*Blob, int64, error) {
	var off int64
	b, err := s.modify(ctx, &ref, req.Cond, checkOpts{guard: true}, func(tx storage.Tx, b *Blob, now time.Time) (bool, error) {
		if b.Type != AppendBlob {
			return false, azerr.New(azerr.InvalidBlobType)
		}
		if b.Sealed {
			return false, azerr.New(azerr.BlobIsSealed)
		}
		if req.Source != nil {
			segs, n, err := s.sourceRange(tx, *req.Source, req.SourceOff, req.SourceLen, req.SrcCond, now)
			if err != nil {
				return false, err
			}
			req.Data = Ingested{Segs: segs, Size: n}
		}
		if req.MaxSize != nil && b.Size+req.Data.Size > *req.MaxSize {
			return false, azerr.New(azerr.MaxBlobSizeConditionNotMet)
		}
		if req.AppendPos != nil && b.Size != *req.AppendPos {
			return false, azerr.New(azerr.AppendPositionConditionNotMet)
		}
		if b.AppendCount >= MaxCommittedBlocks {
			return false, azerr.New(azerr.BlockCountExceedsLimit)
		}
		off = b.Size
		// The block goes to its own key: the record does not grow.
		if req.Data.Size > 0 {
			k := appendKey(ref.Account, ref.Container, b.key, "", b.AppendCount)
			if err := tx.Set(k, encodeBlock(&Block{Size: req.Data.Size, Segs: req.Data.Segs})); err != nil {
				return false, err
			}
		}
		b.Size += req.Data.Size
		b.AppendCount++
		return true, nil
	})
	return b, off, err
}

// SealBlob is Append Blob Seal: the append blob takes no more appends.
// Sealing a sealed blob succeeds; neither ETag nor Last-Modified change.
// appendPos, when set, must equal the blob's length.
func (s *Service) SealBlob(ctx context.Context, ref Ref, appendPos *int64, cond Cond) (*Blob, error) {
	return s.modify(ctx, &ref, cond, checkOpts{}, func(tx storage.Tx, b *Blob, now time.Time) (bool, error) {
		if b.Type != AppendBlob {
			return false, azerr.New(azerr.InvalidBlobType)
		}
		if appendPos != nil && b.Size != *appendPos {
			return false, azerr.New(azerr.AppendPositionConditionNotMet)
		}
		b.Sealed = true
		return false, nil
	})
}
