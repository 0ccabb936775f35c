package file

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/lease"
	"github.com/lazuli-storage/lazuli/storage"
)

// PageSize is the granularity Clear Range deallocates in.
const PageSize = 512

// A file's extents live in its node record while they are few, small and
// hold no chunk reference (Node.Inline: every file starts so); the first
// write that would take them past that moves them all to extent keys
// (file r <sid> <file id> <offset>), where they stay until the file is
// replaced. A small file is then one key: in the 1 KiB create + Put Range
// benchmark the extent key's scans and write took 7% of the server's CPU.
// Only files under extent keys hold chunk references, which is where
// MarkChunks looks for them.
const (
	inlineExtentsMax   = 16      // extents at most
	inlineExtentsBytes = 8 << 10 // inline bytes at most
)

// fitsInline reports whether exts may stay in a node record.
func fitsInline(exts []Extent) bool {
	if len(exts) > inlineExtentsMax {
		return false
	}
	var n int64
	for _, e := range exts {
		if e.Seg.Ref != "" {
			return false
		}
		n += int64(len(e.Seg.Data))
	}
	return n <= inlineExtentsBytes
}

// fileExtents returns the extents of file n that overlap [start, end), in
// order.
func fileExtents(tx storage.Tx, sid uint64, n *Node, start, end int64) ([]Extent, error) {
	if !n.Inline {
		return loadExtents(tx, extentsPrefix(sid, n.ID), start, end)
	}
	var out []Extent
	for _, e := range n.Exts {
		if e.Start < end && e.Start+e.Seg.Len > start {
			out = append(out, e)
		}
	}
	return out, nil
}

// putExtents stores segs (those of non-zero length, and with skipZero
// only those that hold bytes) at start of file n, replacing what was
// there. The caller saves n.
func putExtents(tx storage.Tx, sid uint64, n *Node, start int64, segs []content.Segment, skipZero bool) error {
	var total int64
	for _, sg := range segs {
		total += sg.Len
	}
	if err := clearExtents(tx, sid, n, start, start+total); err != nil {
		return err
	}
	exts := n.Exts
	if !n.Inline {
		exts = nil
	}
	pos := start
	for _, sg := range segs {
		if sg.Len > 0 && !(skipZero && sg.Ref == "" && sg.Data == nil) {
			exts = append(exts, Extent{Start: pos, Seg: sg})
		}
		pos += sg.Len
	}
	if n.Inline {
		slices.SortFunc(exts, func(a, b Extent) int { return cmp.Compare(a.Start, b.Start) })
		if fitsInline(exts) {
			n.Exts = exts
			return nil
		}
		// Too many or too large: every extent moves to keys.
		n.Inline, n.Exts = false, nil
	}
	p := extentsPrefix(sid, n.ID)
	for _, e := range exts {
		if err := tx.Set(content.PageKey(p, e.Start), content.EncodePage(e)); err != nil {
			return err
		}
	}
	return nil
}

// clearExtents removes [start, end) from the extents of file n, splitting
// those that straddle either edge. The caller saves n.
func clearExtents(tx storage.Tx, sid uint64, n *Node, start, end int64) error {
	if n.Inline {
		n.Exts = content.ClearPages(n.Exts, start, end)
		return nil
	}
	return content.ClearStoredPages(tx, extentsPrefix(sid, n.ID), start, end)
}

// dropExtents removes every extent of file n, whose extents are then
// inline (and none).
func dropExtents(tx storage.Tx, sid uint64, n *Node) error {
	if !n.Inline {
		p := extentsPrefix(sid, n.ID)
		if err := deleteRange(tx, p, keyenc.PrefixEnd(p)); err != nil {
			return err
		}
	}
	n.Inline, n.Exts = true, nil
	return nil
}

// loadExtents returns the extents stored under prefix p that overlap
// [start, end), in order. One descending scan from end finds them all:
// extents never overlap, so the first one starting at or before start is
// the last that can reach into the range.
func loadExtents(tx storage.Tx, p []byte, start, end int64) ([]Extent, error) {
	var out []Extent
	it := tx.Scan(p, content.PageKey(p, end), true)
	defer it.Close()
	for it.Next() {
		e, err := content.DecodePage(it.Value())
		if err != nil {
			return nil, err
		}
		if e.Start <= start {
			if e.Start+e.Seg.Len > start {
				out = append(out, e)
			}
			break
		}
		out = append(out, e)
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	slices.Reverse(out)
	return out, nil
}

// Ingest writes a request body to the chunk store before any transaction
// (bodies of up to 64 KiB stay inline) and computes its MD5, which Put
// Range returns (it returns no CRC-64); a wantMD5 that differs is 400
// Md5Mismatch.
func (s *Service) Ingest(ctx context.Context, body io.Reader, size int64, wantMD5 []byte) (content.Ingested, error) {
	// A body known to be too large to inline streams straight to chunks.
	inline := size < 0 || size <= content.InlineMax
	return s.chunks.IngestSize(ctx, body, size, inline, wantMD5, content.SumMD5)
}

// IngestBytes writes bytes held in memory to the chunk store before any
// transaction (up to 64 KiB stay inline, copied), computing no checksums:
// for SMB WRITE, which has no Content-MD5 to check or return.
func (s *Service) IngestBytes(ctx context.Context, p []byte) (content.Ingested, error) {
	return s.chunks.IngestBytes(ctx, p, true)
}

// PutRangeRequest is Put Range (update or clear) and Put Range From URL.
type PutRangeRequest struct {
	Ref        Ref
	Start, End int64 // inclusive
	Clear      bool
	Data       content.Ingested // update: Data.Size == End-Start+1
	LeaseID    string
	// LastWrite is x-ms-file-last-write-time (now unless preserve).
	PreserveLastWrite bool
	// Source, when set, is Put Range From URL: the bytes are
	// [SourceOff, SourceOff+End-Start] of another file on this server.
	Source    *Ref
	SourceOff int64
}

// PutRange is Put Range: the bytes land atomically (a reader sees all of
// them or none), disjoint ranges written at once both land, and Clear
// frees whole 512-byte pages and zeroes the unaligned edges.
func (s *Service) PutRange(ctx context.Context, req PutRangeRequest) (*Node, error) {
	if req.Start < 0 || req.End < req.Start {
		return nil, azerr.New(azerr.InvalidRange)
	}
	var out *Node
	var brks []Break
	err := s.update(ctx, func(tx storage.Tx) error {
		brks = brks[:0]
		sh, parent, n, err := s.resolveIn(tx, req.Ref, true)
		if err != nil {
			return err
		}
		if n.Dir {
			return azerr.New(azerr.ResourceNotFound)
		}
		if err := s.checkREST(tx, sh.ID, n, accessWrite, 0, 0); err != nil {
			return err
		}
		if err := checkLocks(tx, sh.ID, n, 0, ^uint64(0), 0, true); err != nil {
			return err
		}
		now := n.AsOf
		ls, code := lease.Enforce(n.Lease, req.LeaseID, true, now, lease.FileTarget)
		if code != 0 {
			return azerr.New(code)
		}
		n.Lease = ls
		if n.Attrs&AttrReadOnly != 0 {
			return azerr.New(azerr.ReadOnlyAttribute)
		}
		if req.End >= n.Size {
			return azerr.New(azerr.InvalidRange)
		}
		switch {
		case req.Clear:
			if err := clearRange(tx, sh.ID, n, req.Start, req.End+1); err != nil {
				return err
			}
		case req.Source != nil:
			segs, err := s.sourceRange(tx, *req.Source, req.SourceOff, req.End-req.Start+1)
			if err != nil {
				return err
			}
			if err := putExtents(tx, sh.ID, n, req.Start, segs, false); err != nil {
				return err
			}
			n.Written = segs
		default:
			if err := putExtents(tx, sh.ID, n, req.Start, req.Data.Segs, false); err != nil {
				return err
			}
			n.Written = req.Data.Segs
		}
		if !req.PreserveLastWrite {
			n.LastWriteTime = now
		}
		n.ChangeTime = now
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

// clearRange deallocates the whole 512-byte pages of [start, end) of file
// n and writes zeros over the unaligned head and tail.
func clearRange(tx storage.Tx, sid uint64, n *Node, start, end int64) error {
	lo := (start + PageSize - 1) / PageSize * PageSize
	hi := end / PageSize * PageSize
	if lo >= hi {
		return putExtents(tx, sid, n, start, []content.Segment{{Len: end - start}}, false)
	}
	if err := clearExtents(tx, sid, n, lo, hi); err != nil {
		return err
	}
	if start < lo {
		if err := putExtents(tx, sid, n, start, []content.Segment{{Len: lo - start}}, false); err != nil {
			return err
		}
	}
	if hi < end {
		return putExtents(tx, sid, n, hi, []content.Segment{{Len: end - hi}}, false)
	}
	return nil
}

// sourceRange returns the segments of n bytes at off of a source file on
// this server (for Put Range From URL and Copy File).
func (s *Service) sourceRange(tx storage.Tx, src Ref, off, n int64) ([]content.Segment, error) {
	sh, sn, err := s.resolve(tx, src, false)
	if err != nil {
		return nil, azerr.Newf(azerr.CannotVerifyCopySource, "The source file could not be read: %v", err).WithStatus(404)
	}
	if sn.Dir {
		return nil, azerr.New(azerr.CannotVerifyCopySource).WithStatus(404)
	}
	if err := s.checkREST(tx, sh.ID, sn, accessRead, uint64(off), uint64(n)); err != nil {
		return nil, err
	}
	if off+n > sn.Size {
		return nil, azerr.New(azerr.InvalidRange)
	}
	return segments(tx, sh.ID, sn, off, n)
}

// segments returns the content [off, off+n) of file node n (zeros where
// nothing was written).
func segments(tx storage.Tx, sid uint64, n *Node, off, ln int64) ([]content.Segment, error) {
	end := off + ln
	exts, err := fileExtents(tx, sid, n, off, end)
	if err != nil {
		return nil, err
	}
	var out []content.Segment
	pos := off
	for _, e := range exts {
		lo, hi := max(e.Start, off), min(e.Start+e.Seg.Len, end)
		if lo >= hi {
			continue
		}
		if lo > pos {
			out = append(out, content.Segment{Len: lo - pos})
		}
		out = append(out, content.CutSegment(e.Seg, lo-e.Start, hi-lo))
		pos = hi
	}
	if pos < end {
		out = append(out, content.Segment{Len: end - pos})
	}
	return out, nil
}

// ReadResult is what Get File streams.
type ReadResult struct {
	Node *Node
	// Start and Count are the bytes sent (after clipping to the size).
	Start, Count int64
	Segs         []content.Segment
}

// RangeError is Read's 416 InvalidRange: the range starts at or past the
// end of the file. It carries the file's size, which the REST layer
// reports (Content-Range: bytes */size), and is the Azure error
// InvalidRange to everyone else.
type RangeError struct{ Size int64 }

func (e *RangeError) Error() string {
	return fmt.Sprintf("InvalidRange: the file has %d bytes", e.Size)
}

// Unwrap makes the error InvalidRange to errors.As.
func (e *RangeError) Unwrap() error { return azerr.New(azerr.InvalidRange) }

// Read is Get File: the node and the segments of [start, start+count)
// (count < 0: to the end), read in one snapshot. A start at or past the
// end of a non-empty file is 416 InvalidRange.
func (s *Service) Read(ctx context.Context, ref Ref, start, count int64, ranged bool, leaseID string) (*ReadResult, error) {
	out := &ReadResult{}
	err := s.view(ctx, func(tx storage.Tx) error {
		sh, n, err := s.resolve(tx, ref, false)
		if err != nil {
			return err
		}
		if n.Dir {
			return azerr.New(azerr.ResourceNotFound)
		}
		if leaseID != "" && ref.Snapshot == "" {
			if _, code := lease.Enforce(n.Lease, leaseID, false, n.AsOf, lease.FileTarget); code != 0 {
				return azerr.New(code)
			}
		}
		if ranged && start >= n.Size && !(start == 0 && n.Size == 0) {
			return &RangeError{Size: n.Size}
		}
		if count < 0 || count > n.Size-start {
			count = n.Size - start
		}
		count = max(count, 0)
		if err := s.checkREST(tx, sh.ID, n, accessRead, uint64(start), uint64(count)); err != nil {
			return err
		}
		if ref.Snapshot != "" {
			n.Lease = lease.State{}
		}
		out.Node, out.Start, out.Count = n, start, count
		out.Segs, err = segments(tx, sh.ID, n, start, count)
		return err
	})
	return out, err
}

// Stream streams segments returned by Read or ReadAt.
func (s *Service) Stream(ctx context.Context, segs []content.Segment) io.ReadCloser {
	return s.chunks.OpenSegments(ctx, segs)
}

// WriteSegments writes the bytes of segs (from ReadAt) to w, letting the
// chunk store hand its files to w where it can (sendfile(2) to a socket);
// it returns the bytes written.
func (s *Service) WriteSegments(ctx context.Context, w io.Writer, segs []content.Segment) (int64, error) {
	return s.chunks.WriteSegments(ctx, w, segs)
}

// Range is an inclusive byte range.
type Range = content.PageRange

// RangeList is the result of List Ranges.
type RangeList struct {
	Node   *Node
	Ranges []Range
	Clear  []Range
}

// ListRanges is List Ranges, limited to [from, to] (to < 0: the whole
// file), or with prev the ranges changed since that share snapshot
// (written or cleared).
func (s *Service) ListRanges(ctx context.Context, ref Ref, from, to int64, prev string, supportRename bool, leaseID string) (*RangeList, error) {
	out := &RangeList{}
	err := s.view(ctx, func(tx storage.Tx) error {
		sh, n, err := s.resolve(tx, ref, false)
		if err != nil {
			return err
		}
		if n.Dir {
			return azerr.New(azerr.ResourceNotFound)
		}
		if leaseID != "" && ref.Snapshot == "" {
			if _, code := lease.Enforce(n.Lease, leaseID, false, n.AsOf, lease.FileTarget); code != 0 {
				return azerr.New(code)
			}
		}
		if err := s.checkREST(tx, sh.ID, n, accessRead, 0, 0); err != nil {
			return err
		}
		out.Node = n
		if to < 0 || to >= n.Size {
			to = n.Size - 1
		}
		cur, err := fileExtents(tx, sh.ID, n, 0, n.Size)
		if err != nil {
			return err
		}
		if prev == "" {
			out.Ranges = content.ClipRanges(content.MergePages(cur), from, to)
			return nil
		}
		pref := ref
		pref.Snapshot = prev
		psh, pn, err := s.resolve(tx, pref, false)
		if e, ok := azerr.As(err); ok && e.Code == azerr.ResourceNotFound && supportRename {
			// x-ms-file-support-rename: the file is found by its id
			// wherever it was then (a scan of the snapshot, only here).
			var sid uint64
			if sid, err = shareID(tx, pref.share()); err == nil {
				if pn, err = nodeWithID(tx, sid, n.ID); err == nil && pn == nil {
					err = azerr.New(azerr.ResourceNotFound)
				}
				psh = &Share{ID: sid}
			}
		}
		if err != nil {
			// No such snapshot, or no file at this path in it (Azure:
			// also when the file was renamed since, unless asked to
			// follow renames).
			if e, ok := azerr.As(err); ok && (e.Code == azerr.ShareNotFound || e.Code == azerr.ResourceNotFound) {
				return azerr.New(azerr.PreviousSnapshotNotFound)
			}
			return err
		}
		old, err := fileExtents(tx, psh.ID, pn, 0, max(pn.Size, n.Size))
		if err != nil {
			return err
		}
		changed, cleared := content.DiffPages(cur, old)
		out.Ranges, out.Clear = content.ClipRanges(changed, from, to), content.ClipRanges(cleared, from, to)
		return nil
	})
	return out, err
}

// nodeWithID finds the file or directory with this id in share sid by
// scanning its nodes (the id index does not cover every file); nil when
// there is none.
func nodeWithID(tx storage.Tx, sid, id uint64) (*Node, error) {
	p := sidPrefix(tagNode, sid)
	it := tx.Scan(p, keyenc.PrefixEnd(p), false)
	defer it.Close()
	for it.Next() {
		n, err := decodeNode(it.Value())
		if err != nil {
			return nil, err
		}
		if n.ID == id {
			return n, nil
		}
	}
	return nil, it.Err()
}
