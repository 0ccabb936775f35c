package table

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestRaceReplaceOneETag: N replaces holding the same ETag, exactly one
// wins and the rest get 412.
func TestRaceReplaceOneETag(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		c, _ := MustTable(t, tg, "rone")
		etag := MustAdd(t, c, map[string]any{"PartitionKey": "p", "RowKey": "r", "W": int32(-1)})
		const n = 16
		var wins, lost atomic.Int32
		var winner atomic.Int32
		var winETag atomic.Value
		var wg sync.WaitGroup
		g := newStartGate(n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				entity := entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "W": int32(i)})
				g.wait()
				r, err := c.UpdateEntity(ctx, entity, &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeReplace})
				switch {
				case err == nil:
					wins.Add(1)
					winner.Store(int32(i))
					winETag.Store(string(r.ETag))
				case StatusCode(err) == 412 && ErrorCode(err) == "UpdateConditionNotSatisfied":
					lost.Add(1)
				default:
					t.Errorf("writer %d: %v", i, err)
				}
			}()
		}
		g.open()
		wg.Wait()
		if wins.Load() != 1 || lost.Load() != n-1 {
			t.Fatalf("wins %d, 412s %d", wins.Load(), lost.Load())
		}
		m, stored := MustGet(t, c, "p", "r")
		if m["W"] != float64(winner.Load()) {
			t.Fatalf("stored W=%v, winner %d", m["W"], winner.Load())
		}
		if w, _ := winETag.Load().(string); string(stored) != w {
			t.Fatalf("stored ETag %s, the winner was given %s", stored, w)
		}
	})
}

// TestRaceOptimisticCounter: 8 writers increment with read-modify-write
// under If-Match; no increment is lost.
func TestRaceOptimisticCounter(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		c, _ := MustTable(t, tg, "rctr")
		MustAdd(t, c, map[string]any{"PartitionKey": "p", "RowKey": "ctr", "N": int32(0)})
		const writers, each = 8, 15
		var wg sync.WaitGroup
		var conflicts atomic.Int32
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for done := 0; done < each; {
					resp, err := c.GetEntity(ctx, "p", "ctr", nil)
					if err != nil {
						t.Error(err)
						return
					}
					var m map[string]any
					json.Unmarshal(resp.Value, &m)
					n := int32(m["N"].(float64))
					_, err = c.UpdateEntity(ctx, entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "ctr", "N": n + 1}),
						&aztables.UpdateEntityOptions{IfMatch: &resp.ETag, UpdateMode: aztables.UpdateModeMerge})
					switch {
					case err == nil:
						done++
					case StatusCode(err) == 412:
						conflicts.Add(1)
					default:
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		m, _ := MustGet(t, c, "p", "ctr")
		if m["N"] != float64(writers*each) {
			t.Fatalf("counter %v, want %d (conflicts %d)", m["N"], writers*each, conflicts.Load())
		}
	})
}

// TestRaceBatchesVersusSingleWrites: batches rewrite a whole partition
// generation while single-entity merges race on the same rows and readers
// query the partition; every read sees one generation (a batch is seen
// entirely or not at all), and no single write is lost inside a batch.
func TestRaceBatchesVersusSingleWrites(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		c, _ := MustTable(t, tg, "rbat")
		const rows = 20
		gen := func(g int) []aztables.TransactionAction {
			var a []aztables.TransactionAction
			for r := 0; r < rows; r++ {
				a = append(a, aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertMerge,
					Entity: entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprintf("%02d", r), "G": int32(g)})})
			}
			return a
		}
		if _, err := c.SubmitTransaction(ctx, gen(0), nil); err != nil {
			t.Fatal(err)
		}
		var writers, readers sync.WaitGroup
		stop := make(chan struct{})
		var torn, reads atomic.Int32
		for r := 0; r < 2; r++ {
			readers.Add(1)
			go func() {
				defer readers.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					got, _ := listAll(t, c, &aztables.ListEntitiesOptions{Filter: ptr("PartitionKey eq 'p'")})
					reads.Add(1)
					if len(got) != rows {
						torn.Add(1)
						continue
					}
					for _, m := range got {
						if fmt.Sprint(m["G"]) != fmt.Sprint(got[0]["G"]) {
							torn.Add(1)
							break
						}
					}
				}
			}()
		}
		for w := 1; w <= 3; w++ {
			writers.Add(1)
			go func() {
				defer writers.Done()
				for i := 0; i < 8; i++ {
					if _, err := c.SubmitTransaction(ctx, gen(w*100+i), nil); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		// Single-entity merges on the same partition, touching another
		// property: they must land whole and survive the batches (which
		// merge G only).
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := 0; i < 40; i++ {
				if _, err := c.UpsertEntity(ctx, entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprintf("%02d", i%rows), "S": int32(i)}),
					&aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		writers.Wait()
		close(stop)
		readers.Wait()
		if torn.Load() != 0 {
			t.Fatalf("%d of %d reads saw a partial batch", torn.Load(), reads.Load())
		}
		got, _ := listAll(t, c, nil)
		for i, m := range got {
			// Row i was last merged with S = i+20 (i in 0..19).
			if fmt.Sprint(m["S"]) != fmt.Sprint(i+rows) {
				t.Fatalf("row %v lost its single write: S=%v", m["RowKey"], m["S"])
			}
		}
	})
}

// TestRaceCreateTable: N concurrent creates of one name, exactly one 201
// (or 204) and the rest 409 TableAlreadyExists.
func TestRaceCreateTable(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		svc := tg.Table(t)
		name := harness.UniqueTable("rcre")
		var wins, exists atomic.Int32
		var wg sync.WaitGroup
		g := newStartGate(12)
		for i := 0; i < 12; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g.wait()
				_, err := svc.CreateTable(ctx, name, nil)
				switch {
				case err == nil:
					wins.Add(1)
				case StatusCode(err) == 409 && ErrorCode(err) == "TableAlreadyExists":
					exists.Add(1)
				default:
					t.Error(err)
				}
			}()
		}
		g.open()
		wg.Wait()
		if wins.Load() != 1 || exists.Load() != 11 {
			t.Fatalf("wins %d, 409s %d", wins.Load(), exists.Load())
		}
	})
}
