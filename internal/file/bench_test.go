package file

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
)

// BenchmarkCreatePutRange1K is the domain half of lazuli-bench's
// file-put-1k (Create File + 1 KiB Put Range) on the memory engine, beside
// blob's BenchmarkPutBlob1K, the domain half of blob-put-1k, for the ratio.
func BenchmarkCreatePutRange1K(b *testing.B) {
	svc, ctx := New(memstore.New(), time.Now, func() string { return "id" }), context.Background()
	if _, err := svc.CreateShare(ctx, CreateShareRequest{Ref: ShareRef{Account: "a", Name: "s"}}); err != nil {
		b.Fatal(err)
	}
	body := bytes.Repeat([]byte{1}, 1024)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ref := Ref{Account: "a", Share: "s", Path: "f" + strconv.Itoa(i)}
		if _, err := svc.Create(ctx, CreateRequest{Ref: ref, Size: 1024}); err != nil {
			b.Fatal(err)
		}
		data, err := svc.Ingest(ctx, bytes.NewReader(body), 1024, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := svc.PutRange(ctx, PutRangeRequest{Ref: ref, Start: 0, End: 1023, Data: data}); err != nil {
			b.Fatal(err)
		}
	}
}
