package file

import (
	"context"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/logstore"
)

// patternReader yields n bytes of a cheap non-constant pattern.
type patternReader struct{ n, off int64 }

func (r *patternReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	for i := range p {
		p[i] = byte((r.off + int64(i)) * 31)
	}
	r.off += int64(len(p))
	r.n -= int64(len(p))
	return len(p), nil
}

// BenchmarkFile1GiBInRanges writes a 1 GiB file in 4 MiB Put Ranges on the
// durable log engine and reads it back in 4 MiB ranges, reporting the
// largest heap seen: memory stays flat whatever the file size, since
// bodies stream to chunk files and reads stream from them.
//
//	go test -run '^$' -bench File1GiB -benchtime 1x ./internal/file/
func BenchmarkFile1GiBInRanges(b *testing.B) {
	const size, piece = 1 << 30, 4 << 20
	for i := 0; i < b.N; i++ {
		eng, err := logstore.Open(logstore.Options{Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		svc := New(eng, time.Now, func() string { return "id" })
		ctx := context.Background()
		_, err = svc.CreateShare(ctx, CreateShareRequest{Ref: ShareRef{Account: "a", Name: "s"}})
		if err != nil {
			b.Fatal(err)
		}
		ref := Ref{Account: "a", Share: "s", Path: "big"}
		if _, err := svc.Create(ctx, CreateRequest{Ref: ref, Size: size}); err != nil {
			b.Fatal(err)
		}
		var peak uint64
		sample := func() {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
		for off := int64(0); off < size; off += piece {
			data, err := svc.Ingest(ctx, &patternReader{n: piece, off: off}, piece, nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := svc.PutRange(ctx, PutRangeRequest{Ref: ref, Start: off, End: off + piece - 1, Data: data}); err != nil {
				b.Fatal(err)
			}
			if off%(64<<20) == 0 {
				sample()
			}
		}
		for off := int64(0); off < size; off += piece {
			res, err := svc.Read(ctx, ref, off, piece, true, "")
			if err != nil {
				b.Fatal(err)
			}
			rc := svc.Stream(ctx, res.Segs)
			n, err := io.Copy(io.Discard, rc)
			rc.Close()
			if err != nil || n != piece {
				b.Fatalf("read %d: %v", n, err)
			}
			if off%(64<<20) == 0 {
				sample()
			}
		}
		eng.Close()
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		b.SetBytes(2 * size)
	}
}
