package chunkgc_test

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/chunkgc"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/storage"
)

// A service stores chunk refs in its metadata values and registers a marker
// that reports every ref it still holds. The collector removes the rest
// once they have been unreferenced for the grace period.
func Example() {
	ctx := context.Background()
	e := memstore.New()
	defer e.Close()

	// The service writes the bytes first, then the metadata pointing at them.
	put := func(name, body string) {
		ref, _, _ := e.Chunks().Put(ctx, bytes.NewReader([]byte(body)))
		e.Update(ctx, func(tx storage.Tx) error { return tx.Set([]byte("blob/"+name), []byte(ref)) })
	}
	put("a", "first")
	put("a", "second") // overwrite: the first chunk is now unreferenced

	marker := func(ctx context.Context, e storage.Engine, mark func(storage.ChunkRef)) error {
		return e.View(ctx, func(tx storage.Tx) error {
			it := tx.Scan([]byte("blob/"), []byte("blob0"), false)
			defer it.Close()
			for it.Next() {
				mark(storage.ChunkRef(it.Value()))
			}
			return it.Err()
		})
	}

	now := time.Now().Add(time.Hour) // pretend the chunks are old
	c := chunkgc.New(e, []storage.ChunkMarker{marker}, time.Minute)
	c.Now = func() time.Time { return now }
	first, _ := c.Collect(ctx) // notes the unreferenced chunk
	now = now.Add(time.Minute)
	second, _ := c.Collect(ctx) // a grace period later: removes it
	fmt.Println(first, second)
	// Output: 0 1
}
