package logstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/engine/filestore"
	"github.com/lazuli-storage/lazuli/internal/engine/logstore"
	"github.com/lazuli-storage/lazuli/storage"
)

// BenchmarkDiskFsync measures the disk beneath the test's temporary
// directory: append 200 bytes to a file and fsync it (fdatasync on
// Linux), one at a time. ns/op is the latency of one durable append.
func BenchmarkDiskFsync(b *testing.B) {
	f, err := filestore.OS.OpenFile(filepath.Join(b.TempDir(), "f"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 200)
	for b.Loop() {
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdateSync runs small Updates (one 200-byte Set each) from 16
// and 64 goroutines, with and without Sync, and reports how many Updates
// each fsync served and how long the fsyncs took.
func BenchmarkUpdateSync(b *testing.B) {
	for _, sync := range []bool{false, true} {
		for _, par := range []int{16, 64} {
			b.Run(fmt.Sprintf("sync=%v/clients=%d", sync, par), func(b *testing.B) {
				s, err := logstore.Open(logstore.Options{Dir: b.TempDir(), Sync: sync})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				val := make([]byte, 200)
				var n atomic.Int64
				b.SetParallelism((par + 1) / 2)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						k := []byte(fmt.Sprintf("k%08d", n.Add(1)))
						if err := s.Update(context.Background(), func(tx storage.Tx) error { return tx.Set(k, val) }); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.StopTimer()
				if st := s.SyncStats(); st.Fsyncs > 0 {
					b.ReportMetric(st.RecordsPerFsync(), "updates/fsync")
					b.ReportMetric(float64(st.MeanFsync().Microseconds()), "µs/fsync")
				}
			})
		}
	}
}
