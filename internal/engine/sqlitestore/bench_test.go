package sqlitestore_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/storage"
)

// runUpdates spreads b.N single-key Updates over goroutines and reports
// commits per second.
func runUpdates(b *testing.B, s storage.Engine, goroutines int, readFirst bool) {
	value := make([]byte, 100)
	runParallel(b, s, goroutines, "commit", func(g, i int) func(storage.Tx) error {
		key := fmt.Appendf(nil, "bench/%02d/%06d", g, i%5000)
		return func(tx storage.Tx) error {
			if readFirst {
				if _, err := tx.Get(key); err != nil && err != storage.ErrNotFound {
					return err
				}
			}
			return tx.Set(key, value)
		}
	})
}

// runParallel spreads b.N Updates over goroutines; update(g, i) gives the
// function of the i-th Update (from 1) made by goroutine g. It reports
// Updates per second and CPU time per Update, named after unit, and how
// many Updates shared a transaction.
func runParallel(b *testing.B, s storage.Engine, goroutines int, unit string, update func(g, i int) func(storage.Tx) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	cpu0 := cpuTime()
	b.ResetTimer()
	for g := range goroutines {
		wg.Go(func() {
			for i := 1; next.Add(1) <= int64(b.N); i++ {
				if err := s.Update(context.Background(), update(g, i)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit+"s/s")
	// CPU time per Update is steadier than wall time on a shared machine.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/"+unit)
	if st, ok := s.(interface{ Stats() (int64, int64) }); ok {
		if txs, updates := st.Stats(); txs > 0 {
			b.ReportMetric(float64(updates)/float64(txs), "updates/tx")
		}
	}
}

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkUpdateParallel16 is the group-commit target: 16 goroutines each
// committing single-key Updates.
func BenchmarkUpdateParallel16(b *testing.B) {
	for _, sync := range []bool{false, true} {
		b.Run(fmt.Sprintf("sync=%v", sync), func(b *testing.B) {
			s := openStore(b, b.TempDir(), sync)
			defer s.Close()
			runUpdates(b, s, 16, false)
		})
	}
}

// BenchmarkUpdateReadWriteParallel16 is the same with a Get before the Set,
// the shape of every conditional write.
func BenchmarkUpdateReadWriteParallel16(b *testing.B) {
	s := openStore(b, b.TempDir(), false)
	defer s.Close()
	runUpdates(b, s, 16, true)
}

// BenchmarkUpdateSerial is one goroutine: no batching possible.
func BenchmarkUpdateSerial(b *testing.B) {
	s := openStore(b, b.TempDir(), false)
	defer s.Close()
	runUpdates(b, s, 1, false)
}

// BenchmarkView reads one key per View from parallel goroutines.
func BenchmarkView(b *testing.B) {
	s := openStore(b, b.TempDir(), false)
	defer s.Close()
	ctx := context.Background()
	err := s.Update(ctx, func(tx storage.Tx) error {
		for i := range 1000 {
			if err := tx.Set(fmt.Appendf(nil, "k%04d", i), make([]byte, 200)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	var ctr atomic.Int64
	cpu0 := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			key := fmt.Appendf(nil, "k%04d", ctr.Add(1)%1000)
			if _, err := storage.GetValue(ctx, s, key); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "views/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/view")
}

// BenchmarkScan reads 1000 keys per View.
func BenchmarkScan(b *testing.B) {
	s := openStore(b, b.TempDir(), false)
	defer s.Close()
	ctx := context.Background()
	s.Update(ctx, func(tx storage.Tx) error {
		for i := range 1000 {
			tx.Set(fmt.Appendf(nil, "k%04d", i), make([]byte, 200))
		}
		return nil
	})
	b.ResetTimer()
	for b.Loop() {
		n := 0
		s.View(ctx, func(tx storage.Tx) error {
			it := tx.Scan(nil, nil, false)
			defer it.Close()
			for it.Next() {
				n++
			}
			return it.Err()
		})
		if n != 1000 {
			b.Fatalf("scanned %d", n)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkScanFirst takes the first row of a large range, the shape of
// "next visible message" and "first entity" lookups.
func BenchmarkScanFirst(b *testing.B) {
	s := openStore(b, b.TempDir(), false)
	defer s.Close()
	ctx := context.Background()
	s.Update(ctx, func(tx storage.Tx) error {
		for i := range 1000 {
			tx.Set(fmt.Appendf(nil, "k%04d", i), make([]byte, 200))
		}
		return nil
	})
	b.ResetTimer()
	for b.Loop() {
		s.View(ctx, func(tx storage.Tx) error {
			it := tx.Scan([]byte("k"), []byte("l"), false)
			defer it.Close()
			if !it.Next() {
				b.Fatal("empty")
			}
			return it.Err()
		})
	}
}

// BenchmarkChunkPut writes chunks of several sizes through the file-per-
// chunk store.
func BenchmarkChunkPut(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			s := openStore(b, b.TempDir(), false)
			defer s.Close()
			body := make([]byte, size)
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, _, err := s.Chunks().Put(context.Background(), bytes.NewReader(body)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkInsertNew16 is the shape of Insert Entity from 16 clients, each
// in its own partition: an absent-key check, then a Set of a new key of
// about 220 bytes. Every goroutine's keys are increasing decimal numbers,
// so each one inserts in the middle of its own key range.
func BenchmarkInsertNew16(b *testing.B) {
	s := openStore(b, b.TempDir(), false)
	defer s.Close()
	value := bytes.Repeat([]byte("v"), 220)
	runParallel(b, s, 16, "insert", func(g, i int) func(storage.Tx) error {
		key := fmt.Appendf(nil, "e/tbl/w%d\x00%d", g, i)
		return func(tx storage.Tx) error {
			if _, err := tx.Get(key); err != storage.ErrNotFound {
				return fmt.Errorf("Get of a new key: %v", err)
			}
			return tx.Set(key, value)
		}
	})
}
