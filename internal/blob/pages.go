package blob

import (
	"context"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/storage"
)

// pageBytes is the size of a page of a page blob.
const pageBytes = 512

// SeqCond holds the x-ms-if-sequence-number-* conditions of Put Page.
type SeqCond struct {
	LE, LT, EQ *int64
}

func (c SeqCond) ok(seq int64) bool {
	return (c.LE == nil || seq <= *c.LE) && (c.LT == nil || seq < *c.LT) && (c.EQ == nil || seq == *c.EQ)
}

// PutPageRequest is Put Page (update or clear).
type PutPageRequest struct {
	Start, End int64 // inclusive end, already validated for 512 alignment
	Clear      bool
	Data       Ingested // update only; Data.Size == End-Start+1
	Seq        SeqCond
	Cond       Cond
	// Source, when set, is Put Page From URL: the page bytes are bytes
	// [SourceOff, SourceOff+End-Start] of a blob on this server.
	Source    *Ref
	SourceOff int64
	SrcCond   Cond
}

// PutPage is Put Page.
func (s *Service) PutPage(ctx context.Context, ref Ref, req PutPageRequest) (*Blob, error) {
	return s.modify(ctx, &ref, req.Cond, checkOpts{guard: true}, func(tx storage.Tx, b *Blob, now time.Time) (bool, error) {
		if b.Type != PageBlob {
			return false, azerr.New(azerr.InvalidBlobType)
		}
		if req.End >= b.Size {
			return false, azerr.New(azerr.InvalidPageRange)
		}
		if !req.Seq.ok(b.Seq) {
			return false, azerr.New(azerr.SequenceNumberConditionNotMet)
		}
		pp := pagesPrefix(ref.Account, ref.Container, b.key, "")
		if err := content.ClearStoredPages(tx, pp, req.Start, req.End+1); err != nil {
			return false, err
		}
		if req.Clear {
			return true, nil
		}
		if req.Source != nil {
			segs, n, err := s.sourceRange(tx, *req.Source, req.SourceOff, req.End-req.Start+1, req.SrcCond, now)
			if err != nil {
				return false, err
			}
			req.Data = Ingested{Segs: segs, Size: n}
		}
		pos := req.Start
		for _, sg := range req.Data.Segs {
			if err := tx.Set(content.PageKey(pp, pos), content.EncodePage(Page{Start: pos, Seg: sg})); err != nil {
				return false, err
			}
			pos += sg.Len
		}
		return true, nil
	})
}

// PageRanges is the result of Get Page Ranges.
type PageRanges struct {
	Blob  *Blob
	Pages []PageRange
	Clear []PageRange
}

// GetPageRanges is Get Page Ranges, optionally limited to [from, to] and
// optionally as a diff against the snapshot prev.
func (s *Service) GetPageRanges(ctx context.Context, ref Ref, from, to int64, prev string, cond Cond) (*PageRanges, error) {
	out := &PageRanges{}
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &ref); err != nil {
			return err
		}
		if err := checkPath(ctx, tx, ref, OpRead); err != nil {
			return err
		}
		b, _, err := s.loadChecked(tx, ref, cond, checkOpts{mustExist: true, read: true}, s.now())
		if err != nil {
			return err
		}
		if b.Type != PageBlob {
			return azerr.New(azerr.InvalidBlobType)
		}
		if err := hydrate(tx, ref.Account, ref.Container, b); err != nil {
			return err
		}
		out.Blob = b
		if from >= b.Size && (from > 0 || to >= 0) {
			// A range that starts past the end of the blob.
			return azerr.New(azerr.InvalidRange)
		}
		if to < 0 || to >= b.Size {
			to = b.Size - 1
		}
		// Azure keeps pages, not bytes: a range that cuts a page reports
		// the whole page (bytes=0-255 over a written first page is 0-511).
		from, to = from/pageBytes*pageBytes, (to/pageBytes+1)*pageBytes-1
		if prev == "" {
			out.Pages = content.ClipRanges(content.MergePages(b.Pages), from, to)
			return nil
		}
		if ref.Snapshot != "" && prev > ref.Snapshot {
			return azerr.New(azerr.PreviousSnapshotCannotBeNewer)
		}
		pb, err := getBlob(tx, ref.Account, ref.Container, ref.key(), ref.Name, prev)
		if err != nil {
			return err
		}
		if pb == nil {
			return azerr.New(azerr.PreviousSnapshotNotFound)
		}
		if err := hydrate(tx, ref.Account, ref.Container, pb); err != nil {
			return err
		}
		changed, cleared := content.DiffPages(b.Pages, pb.Pages)
		out.Pages, out.Clear = content.ClipRanges(changed, from, to), content.ClipRanges(cleared, from, to)
		return nil
	})
	return out, err
}
