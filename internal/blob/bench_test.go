package blob

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
)

// BenchmarkPutBlob1K is the domain half of lazuli-bench's blob-put-1k on
// the memory engine, beside file's BenchmarkCreatePutRange1K.
func BenchmarkPutBlob1K(b *testing.B) {
	bs, ctx := New(memstore.New(), time.Now, func() string { return "id" }), context.Background()
	if _, err := bs.CreateContainer(ctx, "a", "ccc", nil, ""); err != nil {
		b.Fatal(err)
	}
	body := bytes.Repeat([]byte{1}, 1024)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		data, err := bs.Ingest(ctx, bytes.NewReader(body), true, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := bs.PutBlob(ctx, PutBlobRequest{Ref: Ref{Account: "a", Container: "ccc", Name: "b" + strconv.Itoa(i)}, Type: BlockBlob, Data: data}); err != nil {
			b.Fatal(err)
		}
	}
}
