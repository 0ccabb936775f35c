package table

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/logstore"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/internal/table/odata"
	"github.com/lazuli-storage/lazuli/storage"
)

// benchEntities is the table size of BenchmarkTable1M: 1,000,000 unless
// LAZULI_BENCH_ENTITIES says otherwise.
func benchEntities() int {
	if v, err := strconv.Atoi(os.Getenv("LAZULI_BENCH_ENTITIES")); err == nil && v > 0 {
		return v
	}
	return 1_000_000
}

const benchRowsPerPartition = 1000

func benchProps(i int) []Property {
	return []Property{
		{"Name", odata.Value{Type: odata.String, Str: "customer-" + strconv.Itoa(i)}},
		{"Age", odata.Value{Type: odata.Int32, Int: int64(i % 100)}},
		{"Balance", odata.Value{Type: odata.Double, Float: float64(i) * 1.5}},
		{"Joined", odata.Value{Type: odata.DateTime, Int: 637000000000000000 + int64(i)}},
	}
}

func pkOf(p int) string { return fmt.Sprintf("p%05d", p) }
func rkOf(r int) string { return fmt.Sprintf("r%05d", r) }

// loadTable inserts n entities through the domain layer in entity group
// transactions of 100, partitions of 1,000 rows.
func loadTable(b *testing.B, s *Service, n int) {
	ctx := context.Background()
	start := time.Now()
	ops := make([]Op, 0, MaxBatchOperations)
	for i := 0; i < n; i++ {
		ops = append(ops, Op{Kind: OpInsert, PartitionKey: pkOf(i / benchRowsPerPartition), RowKey: rkOf(i % benchRowsPerPartition), Props: benchProps(i)})
		if len(ops) == MaxBatchOperations || i == n-1 {
			if _, err := s.Batch(ctx, acct, "bench", ops); err != nil {
				b.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	el := time.Since(start)
	b.ReportMetric(float64(n)/el.Seconds(), "load-entities/s")
	b.Logf("loaded %d entities in %v (%.0f entities/s)", n, el.Round(time.Millisecond), float64(n)/el.Seconds())
}

func heapMiB() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapInuse) / (1 << 20)
}

// BenchmarkTable1M loads a table of 1,000,000 entities (1,000 partitions x
// 1,000 rows) into the memory, log and SQLite engines through the domain layer,
// then measures single inserts, batch inserts, point reads, partition
// queries and a capped full-table filter page. Run with
//
//	go test -run '^$' -bench Table1M -benchtime 2000x ./internal/table/
func BenchmarkTable1M(b *testing.B) {
	n := benchEntities()
	parts := (n + benchRowsPerPartition - 1) / benchRowsPerPartition
	for _, engine := range []string{"mem", "log", "sqlite"} {
		b.Run(engine, func(b *testing.B) {
			dir := b.TempDir()
			open := func() storage.Engine {
				var e storage.Engine
				var err error
				switch engine {
				case "mem":
					return memstore.New()
				case "log":
					e, err = logstore.Open(logstore.Options{Dir: dir})
				default:
					e, err = sqlitestore.Open(sqlitestore.Options{Dir: dir})
				}
				if err != nil {
					b.Fatal(err)
				}
				return e
			}
			eng := open()
			defer func() { eng.Close() }()
			s := New(eng, Options{})
			if _, err := s.CreateTable(context.Background(), acct, "bench"); err != nil {
				b.Fatal(err)
			}
			heap0 := heapMiB()
			loadTable(b, s, n)
			b.Logf("heap in use after load: %.0f MiB (before: %.0f MiB)", heapMiB(), heap0)
			if engine != "mem" {
				// Restart: close and reopen, time to the first point read.
				eng.Close()
				start := time.Now()
				eng = open()
				s = New(eng, Options{})
				if _, err := s.GetEntity(context.Background(), acct, "bench", pkOf(parts/2), rkOf(7)); err != nil {
					b.Fatal(err)
				}
				b.Logf("reopen + first point read: %v", time.Since(start).Round(time.Microsecond))
			}
			ctx := context.Background()
			b.Run("PointRead", func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 2))
				for b.Loop() {
					i := rng.IntN(n)
					if _, err := s.GetEntity(ctx, acct, "bench", pkOf(i/benchRowsPerPartition), rkOf(i%benchRowsPerPartition)); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("PartitionQuery1000", func(b *testing.B) {
				rng := rand.New(rand.NewPCG(3, 4))
				for b.Loop() {
					f, _ := odata.Parse("PartitionKey eq '" + pkOf(rng.IntN(parts)) + "'")
					page, err := s.QueryEntities(ctx, acct, "bench", Query{Filter: f})
					if err != nil || len(page.Entities) == 0 {
						b.Fatal(err)
					}
				}
			})
			b.Run("PartitionQueryFiltered", func(b *testing.B) {
				rng := rand.New(rand.NewPCG(5, 6))
				for b.Loop() {
					f, _ := odata.Parse("PartitionKey eq '" + pkOf(rng.IntN(parts)) + "' and Age eq 42")
					if _, err := s.QueryEntities(ctx, acct, "bench", Query{Filter: f}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("FullScanFilterPage", func(b *testing.B) {
				// A non-key filter over the whole table: each request stops
				// at the scan cap with a continuation.
				f, _ := odata.Parse("Name eq 'nobody'")
				q := Query{Filter: f}
				for b.Loop() {
					page, err := s.QueryEntities(ctx, acct, "bench", q)
					if err != nil {
						b.Fatal(err)
					}
					if page.More {
						q.Continue, q.NextPartitionKey, q.NextRowKey = true, page.NextPartitionKey, page.NextRowKey
					} else {
						q = Query{Filter: f}
					}
				}
			})
			b.Run("Insert", func(b *testing.B) {
				i := 0
				for b.Loop() {
					if _, err := s.Apply(ctx, acct, "bench", Op{Kind: OpInsert, PartitionKey: "new", RowKey: strconv.Itoa(i), Props: benchProps(i)}); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
			b.Run("InsertBatch100", func(b *testing.B) {
				i := 0
				for b.Loop() {
					ops := make([]Op, MaxBatchOperations)
					for j := range ops {
						ops[j] = Op{Kind: OpInsert, PartitionKey: "newbatch" + strconv.Itoa(i), RowKey: strconv.Itoa(j), Props: benchProps(j)}
					}
					if _, err := s.Batch(ctx, acct, "bench", ops); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		})
	}
}

// BenchmarkApplyWrites measures single Insert Entity and Update Entity
// (If-Match) operations through the domain layer on the SQLite engine, one
// at a time: the cost a write adds to the engine's writer.
//
//	go test -run '^$' -bench ApplyWrites ./internal/table/
func BenchmarkApplyWrites(b *testing.B) {
	eng, err := sqlitestore.Open(sqlitestore.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	s := New(eng, Options{})
	ctx := context.Background()
	if _, err := s.CreateTable(ctx, acct, "bench"); err != nil {
		b.Fatal(err)
	}
	props := []Property{
		{"Name", odata.Value{Type: odata.String, Str: "lazuli benchmark entity"}},
		{"Count", odata.Value{Type: odata.Int32, Int: 12345}},
		{"Ratio", odata.Value{Type: odata.Double, Float: 0.5}},
		{"Active", odata.Value{Type: odata.Boolean, Bool: true}},
		{"Payload", odata.Value{Type: odata.String, Str: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"}},
	}
	// seq keeps row keys unique across repeated runs (-count).
	seq := 0
	b.Run("insert", func(b *testing.B) {
		for b.Loop() {
			seq++
			if _, err := s.Apply(ctx, acct, "bench", Op{Kind: OpInsert, PartitionKey: "w", RowKey: strconv.Itoa(seq), Props: props}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("replace-ifmatch", func(b *testing.B) {
		seq++
		rk := strconv.Itoa(seq)
		e, err := s.Apply(ctx, acct, "bench", Op{Kind: OpInsert, PartitionKey: "r", RowKey: rk, Props: props})
		if err != nil {
			b.Fatal(err)
		}
		etag := e.ETag()
		for b.Loop() {
			e, err := s.Apply(ctx, acct, "bench", Op{Kind: OpUpdate, PartitionKey: "r", RowKey: rk, IfMatch: etag, Props: props})
			if err != nil {
				b.Fatal(err)
			}
			etag = e.ETag()
		}
	})
}
