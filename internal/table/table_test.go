package table

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/internal/table/odata"
	"github.com/lazuli-storage/lazuli/storage"
)

const acct = "devstoreaccount1"

// engines returns the engines the domain tests run on.
func engines(tb testing.TB) map[string]func(tb testing.TB) storage.Engine {
	return map[string]func(tb testing.TB) storage.Engine{
		"mem": func(tb testing.TB) storage.Engine {
			e := memstore.New()
			tb.Cleanup(func() { e.Close() })
			return e
		},
		"sqlite": func(tb testing.TB) storage.Engine {
			e, err := sqlitestore.Open(sqlitestore.Options{Dir: tb.TempDir()})
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { e.Close() })
			return e
		},
	}
}

func forEachEngine(t *testing.T, fn func(t *testing.T, s *Service)) {
	for name, mk := range engines(t) {
		t.Run(name, func(t *testing.T) {
			fn(t, startService(t, mk(t), Options{MaxScan: 50}))
		})
	}
}

// startService returns a Service on eng with its background worker
// running until the test ends, as the server runs it.
func startService(tb testing.TB, eng storage.Engine, o Options) *Service {
	s := New(eng, o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx)
	}()
	tb.Cleanup(func() {
		cancel()
		<-done
	})
	return s
}

func wantCode(t *testing.T, err error, code azerr.Code) {
	t.Helper()
	e, ok := azerr.As(err)
	if !ok || e.Code != code {
		t.Fatalf("want %s, got %v", code, err)
	}
}

func mustTable(t *testing.T, s *Service, name string) {
	t.Helper()
	if _, err := s.CreateTable(context.Background(), acct, name); err != nil {
		t.Fatal(err)
	}
}

func prop(name string, v odata.Value) Property { return Property{Name: name, Value: v} }
func i32(n int) odata.Value                    { return odata.Value{Type: odata.Int32, Int: int64(n)} }

func TestEntityLifecycle(t *testing.T) {
	forEachEngine(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		mustTable(t, s, "Life")
		e, err := s.Apply(ctx, acct, "life", Op{Kind: OpInsert, PartitionKey: "p", RowKey: "r", Props: []Property{prop("N", i32(1))}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Apply(ctx, acct, "LIFE", Op{Kind: OpInsert, PartitionKey: "p", RowKey: "r"})
		wantCode(t, err, azerr.EntityAlreadyExists)
		e2, err := s.Apply(ctx, acct, "Life", Op{Kind: OpMerge, PartitionKey: "p", RowKey: "r", IfMatch: e.ETag(), Props: []Property{prop("M", i32(2))}})
		if err != nil {
			t.Fatal(err)
		}
		if e2.Timestamp <= e.Timestamp || len(e2.Props) != 2 {
			t.Fatalf("merge result %+v", e2)
		}
		_, err = s.Apply(ctx, acct, "Life", Op{Kind: OpUpdate, PartitionKey: "p", RowKey: "r", IfMatch: e.ETag()})
		wantCode(t, err, azerr.UpdateConditionNotSatisfied)
		_, err = s.Apply(ctx, acct, "Life", Op{Kind: OpDelete, PartitionKey: "p", RowKey: "x", IfMatch: "*"})
		wantCode(t, err, azerr.ResourceNotFound)
		got, err := s.GetEntity(ctx, acct, "life", "p", "r")
		if err != nil || got.ETag() != e2.ETag() || len(got.Props) != 2 {
			t.Fatalf("get %+v %v", got, err)
		}
		_, err = s.Apply(ctx, acct, "nosuch", Op{Kind: OpInsert, PartitionKey: "p", RowKey: "r"})
		wantCode(t, err, azerr.TableNotFound)
	})
}

func TestBatchAllOrNothing(t *testing.T) {
	forEachEngine(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		mustTable(t, s, "batch")
		if _, err := s.Apply(ctx, acct, "batch", Op{Kind: OpInsert, PartitionKey: "p", RowKey: "3"}); err != nil {
			t.Fatal(err)
		}
		ops := []Op{
			{Kind: OpInsert, PartitionKey: "p", RowKey: "1"},
			{Kind: OpInsertOrMerge, PartitionKey: "p", RowKey: "2"},
			{Kind: OpInsert, PartitionKey: "p", RowKey: "3"},
		}
		_, err := s.Batch(ctx, acct, "batch", ops)
		var be *BatchError
		if !errors.As(err, &be) || be.Index != 2 {
			t.Fatalf("want failure at index 2, got %v", err)
		}
		wantCode(t, be.Err, azerr.EntityAlreadyExists)
		page, err := s.QueryEntities(ctx, acct, "batch", Query{})
		if err != nil || len(page.Entities) != 1 {
			t.Fatalf("after failed batch: %d entities, %v", len(page.Entities), err)
		}
		_, err = s.Batch(ctx, acct, "batch", []Op{{Kind: OpInsert, PartitionKey: "p", RowKey: "a"}, {Kind: OpInsert, PartitionKey: "q", RowKey: "a"}})
		if !errors.As(err, &be) || be.Index != 1 {
			t.Fatalf("different partitions: %v", err)
		}
		wantCode(t, be.Err, azerr.CommandsInBatchActOnDifferentPartitions)
		_, err = s.Batch(ctx, acct, "batch", []Op{{Kind: OpInsert, PartitionKey: "p", RowKey: "a"}, {Kind: OpDelete, PartitionKey: "p", RowKey: "a", IfMatch: "*"}})
		if !errors.As(err, &be) || be.Index != 1 {
			t.Fatalf("duplicate row: %v", err)
		}
		wantCode(t, be.Err, azerr.InvalidDuplicateRow)
		many := make([]Op, 101)
		for i := range many {
			many[i] = Op{Kind: OpInsert, PartitionKey: "p", RowKey: fmt.Sprint("m", i)}
		}
		_, err = s.Batch(ctx, acct, "batch", many)
		wantCode(t, err, azerr.InvalidInput)
		res, err := s.Batch(ctx, acct, "batch", many[:100])
		if err != nil || len(res) != 100 {
			t.Fatalf("100 ops: %v", err)
		}
	})
}

func TestQueryPagingAndScanCap(t *testing.T) {
	forEachEngine(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		mustTable(t, s, "pages")
		for p := 0; p < 4; p++ {
			var ops []Op
			for r := 0; r < 60; r++ {
				ops = append(ops, Op{Kind: OpInsert, PartitionKey: fmt.Sprintf("p%d", p), RowKey: fmt.Sprintf("r%03d", r), Props: []Property{prop("N", i32(r))}})
			}
			if _, err := s.Batch(ctx, acct, "pages", ops); err != nil {
				t.Fatal(err)
			}
		}
		collect := func(filter string, top int) ([]string, int) {
			f, err := odata.Parse(filter)
			if err != nil {
				t.Fatal(err)
			}
			q := Query{Filter: f, Top: top}
			var keys []string
			pages := 0
			for {
				page, err := s.QueryEntities(ctx, acct, "pages", q)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				if len(page.Entities) > top && top > 0 {
					t.Fatalf("page of %d > top %d", len(page.Entities), top)
				}
				for _, e := range page.Entities {
					keys = append(keys, e.PartitionKey+"/"+e.RowKey)
				}
				if !page.More {
					return keys, pages
				}
				q.Continue, q.NextPartitionKey, q.NextRowKey = true, page.NextPartitionKey, page.NextRowKey
			}
		}
		all, _ := collect("", 7)
		if len(all) != 240 || all[0] != "p0/r000" || all[239] != "p3/r059" {
			t.Fatalf("all: %d %v", len(all), all[:3])
		}
		for i := 1; i < len(all); i++ {
			if all[i-1] >= all[i] {
				t.Fatalf("out of order at %d: %s %s", i, all[i-1], all[i])
			}
		}
		// A filter matching one row at the end: the scan cap (50 rows)
		// forces continuations with empty pages.
		one, pages := collect("N eq 59 and PartitionKey eq 'p3'", 0)
		if len(one) != 1 || one[0] != "p3/r059" || pages != 2 {
			t.Fatalf("partition query: %v in %d pages", one, pages)
		}
		one, pages = collect("N eq 59 and RowKey ge 'r059'", 0)
		if len(one) != 4 || pages < 4 {
			t.Fatalf("scan-capped query: %v in %d pages", one, pages)
		}
		rng, _ := collect("PartitionKey eq 'p1' and RowKey ge 'r010' and RowKey lt 'r013'", 0)
		if fmt.Sprint(rng) != "[p1/r010 p1/r011 p1/r012]" {
			t.Fatalf("row range %v", rng)
		}
		rng, _ = collect("PartitionKey gt 'p1' and PartitionKey le 'p2' and RowKey eq 'r000'", 0)
		if fmt.Sprint(rng) != "[p2/r000]" {
			t.Fatalf("partition range %v", rng)
		}
		rng, _ = collect("PartitionKey eq 'p1' and PartitionKey eq 'p2'", 0)
		if len(rng) != 0 {
			t.Fatalf("contradiction %v", rng)
		}
	})
}

func TestDeleteTablePurgesRows(t *testing.T) {
	forEachEngine(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		mustTable(t, s, "purge")
		for b := 0; b < 25; b++ {
			var ops []Op
			for r := 0; r < 100; r++ {
				ops = append(ops, Op{Kind: OpInsert, PartitionKey: fmt.Sprint(b), RowKey: fmt.Sprint(r)})
			}
			if _, err := s.Batch(ctx, acct, "purge", ops); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.DeleteTable(ctx, acct, "purge"); err != nil {
			t.Fatal(err)
		}
		// The table is gone at once; its rows go in the background.
		if _, err := s.GetTable(ctx, acct, "purge"); err == nil {
			t.Fatal("deleted table still readable")
		}
		s.WaitPurges()
		n := 0
		s.eng.View(ctx, func(tx storage.Tx) error {
			it := tx.Scan(nsPrefix(), nil, false)
			defer it.Close()
			for it.Next() {
				n++
			}
			return nil
		})
		if n != 0 {
			t.Fatalf("%d keys left after delete", n)
		}
	})
}

// TestPurgeResumesAfterRestart: rows of a deleted table whose purge did
// not finish are removed by the next Service on the same engine.
func TestPurgeResumesAfterRestart(t *testing.T) {
	eng := memstore.New()
	defer eng.Close()
	ctx := context.Background()
	// Simulate a crash after the delete committed: marker and rows, no table.
	eng.Update(ctx, func(tx storage.Tx) error {
		for i := 0; i < 2500; i++ {
			tx.Set(entityKey("olduid", "p", fmt.Sprint(i)), encodeEntity(&Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}))
		}
		return tx.Set(purgeKey("olduid"), []byte{})
	})
	s := startService(t, eng, Options{})
	s.WaitPurges()
	n := 0
	eng.View(ctx, func(tx storage.Tx) error {
		it := tx.Scan(nsPrefix(), nil, false)
		defer it.Close()
		for it.Next() {
			n++
		}
		return nil
	})
	if n != 0 {
		t.Fatalf("%d keys left", n)
	}
}

// TestConcurrentIfMatch: N writers holding one ETag, exactly one wins;
// an 8-writer optimistic counter loses no increment; batches and single
// writes on one partition never interleave.
func TestConcurrentIfMatch(t *testing.T) {
	forEachEngine(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		mustTable(t, s, "race")
		e, err := s.Apply(ctx, acct, "race", Op{Kind: OpInsert, PartitionKey: "p", RowKey: "r", Props: []Property{prop("N", i32(0))}})
		if err != nil {
			t.Fatal(err)
		}
		var wins, lost, winner atomic.Int32
		var wg sync.WaitGroup
		g := newGate(16)
		for i := 0; i < 16; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g.wait()
				_, err := s.Apply(ctx, acct, "race", Op{Kind: OpUpdate, PartitionKey: "p", RowKey: "r", IfMatch: e.ETag(), Props: []Property{prop("N", i32(i))}})
				if err == nil {
					wins.Add(1)
					winner.Store(int32(i))
				} else if ae, ok := azerr.As(err); ok && ae.Code == azerr.UpdateConditionNotSatisfied {
					lost.Add(1)
				} else {
					t.Error(err)
				}
			}()
		}
		g.open()
		wg.Wait()
		if wins.Load() != 1 || lost.Load() != 15 {
			t.Fatalf("wins %d lost %d", wins.Load(), lost.Load())
		}
		// Optimistic counter.
		const writers, each = 8, 25
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for done := 0; done < each; {
					cur, err := s.GetEntity(ctx, acct, "race", "p", "r")
					if err != nil {
						t.Error(err)
						return
					}
					n, _ := cur.Lookup("N")
					_, err = s.Apply(ctx, acct, "race", Op{Kind: OpUpdate, PartitionKey: "p", RowKey: "r", IfMatch: cur.ETag(), Props: []Property{prop("N", i32(int(n.Int)+1))}})
					if err == nil {
						done++
					} else if ae, ok := azerr.As(err); !ok || ae.Code != azerr.UpdateConditionNotSatisfied {
						// Only a lost If-Match race may be retried.
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		final, _ := s.GetEntity(ctx, acct, "race", "p", "r")
		n0, _ := e.Lookup("N")
		_ = n0
		n, _ := final.Lookup("N")
		// The winner of the first race wrote some i in [0,16).
		if start := n.Int - writers*each; start < 0 || start >= 16 {
			t.Fatalf("counter %d: lost increments", n.Int)
		}
		// Exactly: the first race's winner's value plus every increment.
		if want := int64(winner.Load()) + writers*each; n.Int != want {
			t.Fatalf("counter %d, want %d", n.Int, want)
		}
	})
}

func TestBatchesDoNotInterleave(t *testing.T) {
	forEachEngine(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		mustTable(t, s, "inter")
		const rows = 20
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var bad atomic.Int32
		// Readers: every query sees one generation across the partition.
		for r := 0; r < 2; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					page, err := s.QueryEntities(ctx, acct, "inter", Query{Filter: mustFilter(t, "PartitionKey eq 'p'")})
					if err != nil {
						t.Error(err)
						return
					}
					if len(page.Entities) == 0 {
						continue
					}
					g, _ := page.Entities[0].Lookup("G")
					for _, e := range page.Entities {
						if v, _ := e.Lookup("G"); v.Int != g.Int {
							bad.Add(1)
						}
					}
				}
			}()
		}
		var writers sync.WaitGroup
		for w := 0; w < 4; w++ {
			writers.Add(1)
			go func() {
				defer writers.Done()
				for gen := 0; gen < 15; gen++ {
					var ops []Op
					for r := 0; r < rows; r++ {
						ops = append(ops, Op{Kind: OpInsertOrReplace, PartitionKey: "p", RowKey: fmt.Sprintf("%02d", r), Props: []Property{prop("G", i32(w*1000+gen))}})
					}
					if _, err := s.Batch(ctx, acct, "inter", ops); err != nil {
						t.Error(err)
					}
					// A single write racing on the same partition: it
					// lands whole before or after a batch, never inside.
					if _, err := s.Apply(ctx, acct, "inter", Op{Kind: OpInsertOrMerge, PartitionKey: "p", RowKey: fmt.Sprintf("%02d", gen%rows), Props: []Property{prop("S", i32(w*1000+gen))}}); err != nil {
						t.Error(err)
					}
					if _, err := s.Batch(ctx, acct, "inter", ops); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		writers.Wait()
		close(stop)
		wg.Wait()
		if bad.Load() != 0 {
			t.Fatalf("%d torn reads", bad.Load())
		}
	})
}

func mustFilter(t *testing.T, s string) *odata.Expr {
	t.Helper()
	f, err := odata.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	e := &Entity{PartitionKey: "p", RowKey: "r", Timestamp: 12345, Props: []Property{
		{"S", odata.Value{Type: odata.String, Str: "x\x00y"}},
		{"I", i32(-7)},
		{"L", odata.Value{Type: odata.Int64, Int: -1 << 62}},
		{"D", odata.Value{Type: odata.Double, Float: 2.5}},
		{"B", odata.Value{Type: odata.Boolean, Bool: true}},
		{"T", odata.Value{Type: odata.DateTime, Int: 637000000000000000}},
		{"G", odata.Value{Type: odata.Guid, Str: "4185404a-5818-48c3-b9be-f217df0dba6f"}},
		{"X", odata.Value{Type: odata.Binary, Bytes: []byte{1, 2}}},
	}}
	got, err := decodeEntity("p", "r", encodeEntity(e))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(e) {
		t.Fatalf("round trip\n%v\n%v", got, e)
	}
	raw := &rawEntity{pk: "p", rk: []byte("r"), b: encodeEntity(e)}
	for _, name := range []string{"PartitionKey", "RowKey", "Timestamp", "S", "I", "L", "D", "B", "T", "G", "X", "Missing"} {
		want, wok := e.Lookup(name)
		got, gok := raw.Lookup(name)
		if wok != gok || fmt.Sprint(want) != fmt.Sprint(got) {
			t.Fatalf("raw lookup %s: %v %v, want %v %v", name, got, gok, want, wok)
		}
	}
	for i := 0; i < len(encodeEntity(e)); i++ {
		decodeEntity("p", "r", encodeEntity(e)[:i]) // must not panic
		(&rawEntity{b: encodeEntity(e)[:i]}).Lookup("X")
	}
}

// TestReinsertGetsNewETag: delete and insert again under a frozen clock;
// the new entity never repeats the old ETag.
func TestReinsertGetsNewETag(t *testing.T) {
	frozen := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	s := New(memstore.New(), Options{Now: func() time.Time { return frozen }})
	ctx := context.Background()
	mustTable(t, s, "frozen")
	seen := map[string]bool{}
	for i := 0; i < 20; i++ {
		e, err := s.Apply(ctx, acct, "frozen", Op{Kind: OpInsert, PartitionKey: "p", RowKey: "r"})
		if err != nil {
			t.Fatal(err)
		}
		if seen[e.ETag()] {
			t.Fatalf("ETag %s repeated", e.ETag())
		}
		seen[e.ETag()] = true
		if _, err := s.Apply(ctx, acct, "frozen", Op{Kind: OpDelete, PartitionKey: "p", RowKey: "r", IfMatch: e.ETag()}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestETagParsing: an If-Match value selects an entity when it is "*" or
// names the entity's Timestamp in any spelling the service accepts.
func TestETagParsing(t *testing.T) {
	e := &Entity{Timestamp: odata.TimeToTicks(time.Date(2021, 10, 15, 16, 13, 6, 16792100, time.UTC))}
	matches := func(v string) bool {
		p := prepareOp(&Op{Kind: OpDelete, PartitionKey: "p", RowKey: "r", IfMatch: v})
		return p.ifMatches(e.Timestamp)
	}
	for _, v := range []string{e.ETag(), "*", ` * `, " " + e.ETag() + " ", `W/"datetime'2021-10-15T16%3A13%3A06.0167921Z'"`,
		`W/"datetime'2021-10-15T16%3a13%3a06.0167921Z'"`, `"datetime'2021-10-15T16:13:06.0167921Z'"`} {
		if !matches(v) {
			t.Errorf("%q does not match", v)
		}
	}
	for _, v := range []string{`W/"datetime'2021-10-15T16%3A13%3A06.0167922Z'"`, ETagFor(e.Timestamp + 1), "garbage", `W/"x"`, `W/""`, ""} {
		if matches(v) {
			t.Errorf("%q matches", v)
		}
	}
}
