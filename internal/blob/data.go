package blob

import (
	"context"
	"io"

	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/storage"
)

// allSegs returns the content of b as segments (zeros for unwritten pages).
func allSegs(b *Blob) []Segment {
	if b.Type == PageBlob {
		var out []Segment
		pos := int64(0)
		for _, p := range b.Pages {
			if p.Start > pos {
				out = append(out, Segment{Len: p.Start - pos})
			}
			out = append(out, p.Seg)
			pos = p.Start + p.Seg.Len
		}
		if b.Size > pos {
			out = append(out, Segment{Len: b.Size - pos})
		}
		return out
	}
	var out []Segment
	for _, bl := range b.Blocks {
		out = append(out, bl.Segs...)
	}
	return out
}

// Segments returns the segments holding bytes [off, off+n) of b.
func Segments(b *Blob, off, n int64) []Segment { return content.SliceSegments(allSegs(b), off, n) }

// Open streams bytes [off, off+n) of b. The caller loaded b in a View, so
// the content is that of one version: chunks are immutable and outlive any
// request by the garbage collector's grace period.
func (s *Service) Open(ctx context.Context, b *Blob, off, n int64) io.ReadCloser {
	return s.OpenSegments(ctx, Segments(b, off, n))
}

// MarkChunks is the storage.ChunkMarker of the Blob service: it reports
// every chunk referenced by blobs, snapshots and staged blocks.
func MarkChunks(ctx context.Context, e storage.Engine, mark func(storage.ChunkRef)) error {
	return e.View(ctx, func(tx storage.Tx) error {
		for _, kind := range []byte{kindBlob, kindBlock, kindAppend, kindPage, kindBlockList, kindDeleted, kindDeletedPath, kindDeletedTree} {
			it := tx.Scan([]byte{kind}, []byte{kind + 1}, false)
			for it.Next() {
				if kind == kindBlob || kind == kindBlockList || kind == kindDeleted || kind == kindDeletedPath || kind == kindDeletedTree {
					var b *Blob
					var err error
					switch kind {
					case kindDeleted:
						b, _, err = decodeDeleted(it.Value())
					case kindDeletedPath, kindDeletedTree:
						b, _, _, err = decodeDeletedPath(it.Value())
					default:
						b, err = decodeBlob(it.Value())
					}
					if err != nil {
						it.Close()
						return err
					}
					for _, sg := range allSegs(b) {
						if sg.Ref != "" {
							mark(sg.Ref)
						}
					}
					continue
				}
				bl, err := decodeBlock(it.Value())
				if err != nil {
					it.Close()
					return err
				}
				for _, sg := range bl.Segs {
					if sg.Ref != "" {
						mark(sg.Ref)
					}
				}
			}
			err := it.Err()
			it.Close()
			if err != nil {
				return err
			}
		}
		return markMoved(tx, mark)
	})
}

var _ storage.ChunkMarker = MarkChunks
