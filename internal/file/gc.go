package file

import (
	"context"

	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// MarkChunks is the storage.ChunkMarker of the File service: it reports
// every chunk referenced by an extent of a file in a share or snapshot
// (including shares deleted but not yet purged).
func MarkChunks(ctx context.Context, e storage.Engine, mark func(storage.ChunkRef)) error {
	p := root(tagExtent, 0)
	return e.View(ctx, func(tx storage.Tx) error {
		it := tx.Scan(p, keyenc.PrefixEnd(p), false)
		defer it.Close()
		for it.Next() {
			ext, err := content.DecodePage(it.Value())
			if err != nil {
				return err
			}
			if ext.Seg.Ref != "" {
				mark(ext.Seg.Ref)
			}
		}
		return it.Err()
	})
}

var _ storage.ChunkMarker = MarkChunks
