package file

import (
	"context"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/storage"
)

// AttrSparseFile marks a file whose unwritten ranges SMB clients see as
// holes (FSCTL_SET_SPARSE). Only SMB sets it; REST's x-ms-file-attributes
// neither shows nor sets it, and a file's ranges are stored sparsely
// whatever it says: the attribute changes what FSCTL_QUERY_ALLOCATED_RANGES
// reports, not how bytes are kept.
const AttrSparseFile Attr = 0x200

// SetSparse sets or clears the sparse attribute of the file a handle is
// open on (FSCTL_SET_SPARSE; the SMB layer checks the handle's access).
// A directory is 400 InvalidInput, as NTFS refuses it.
func (s *Service) SetSparse(ctx context.Context, ref HandleRef, sparse bool) (*Node, error) {
	return s.updateOpen(ctx, ref, func(tx storage.Tx, h *Handle, n *Node, now time.Time) error {
		if n.Dir {
			return azerr.New(azerr.InvalidInput)
		}
		if (n.Attrs&AttrSparseFile != 0) == sparse {
			return nil
		}
		n.Attrs ^= AttrSparseFile
		if h.UserSet&UserSetChange == 0 {
			n.ChangeTime = now
		}
		n.Modified, n.ETag = s.written(now), s.etag(n.ETag, now)
		return nil
	})
}

// ZeroRange zeroes [start, end) of the file a handle with write access is
// open on (FSCTL_SET_ZERO_DATA) as Clear Range does: whole 512-byte pages
// are deallocated, unaligned edges written with zeros. Bytes past the end
// of the file are left alone (the size never changes). Another handle's
// byte-range lock over the bytes is 409 FileLockConflict.
func (s *Service) ZeroRange(ctx context.Context, ref HandleRef, start, end int64) (*Node, error) {
	if start < 0 || end < start {
		return nil, azerr.New(azerr.InvalidRange)
	}
	return s.updateWritable(ctx, ref, func(tx storage.Tx, h *Handle, n *Node, now time.Time, brks *[]Break) error {
		end := min(end, n.Size)
		if start >= end {
			return nil
		}
		if err := checkLocks(tx, ref.Share, n, uint64(start), uint64(end-start), h.ID, true); err != nil {
			return err
		}
		if err := s.staleReaders(tx, ref.Share, n, h, brks); err != nil {
			return err
		}
		if err := clearRange(tx, ref.Share, n, start, end); err != nil {
			return err
		}
		touch(h, n, now)
		n.Attrs |= AttrArchive
		n.Modified, n.ETag = s.written(now), s.etag(n.ETag, now)
		return nil
	})
}

// AllocatedRanges returns the allocated ranges of [off, off+n) of the
// file a handle with read access is open on, cut at the end of the file
// (FSCTL_QUERY_ALLOCATED_RANGES): for a sparse file the ranges written and
// not cleared (those List Ranges reports), for any other file the whole
// range, as NTFS reports a file that is not sparse.
func (s *Service) AllocatedRanges(ctx context.Context, ref HandleRef, off, n int64) ([]Range, error) {
	if off < 0 || n < 0 || off > MaxFileSize || n > MaxFileSize {
		return nil, azerr.New(azerr.InvalidRange)
	}
	var out []Range
	err := s.viewReadable(ctx, ref, func(tx storage.Tx, h *Handle, nd *Node) error {
		end := min(off+n, nd.Size)
		out = nil
		if off >= end {
			return nil
		}
		if nd.Attrs&AttrSparseFile == 0 {
			out = []Range{{Start: off, End: end - 1}}
			return nil
		}
		exts, err := fileExtents(tx, ref.Share, nd, off, end)
		if err != nil {
			return err
		}
		out = content.ClipRanges(content.MergePages(exts), off, end-1)
		return nil
	})
	return out, err
}
