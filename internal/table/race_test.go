package table

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// gate releases n goroutines at once so that they really overlap.
type gate struct {
	ready sync.WaitGroup
	start chan struct{}
}

func newGate(n int) *gate {
	g := &gate{start: make(chan struct{})}
	g.ready.Add(n)
	return g
}

func (g *gate) wait() { g.ready.Done(); <-g.start }
func (g *gate) open() { g.ready.Wait(); close(g.start) }

// TestRaceInsertSameKey: of N inserts of one key exactly one creates the
// entity and the rest get EntityAlreadyExists; the stored entity is the
// winner's.
func TestRaceInsertSameKey(t *testing.T) {
	forEachEngine(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		mustTable(t, s, "ins")
		const n = 16
		for round := 0; round < 5; round++ {
			rk := fmt.Sprint("r", round)
			g := newGate(n)
			var mu sync.Mutex
			var winner *Entity
			wins, conflicts := 0, 0
			var wg sync.WaitGroup
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					g.wait()
					e, err := s.Apply(ctx, acct, "ins", Op{Kind: OpInsert, PartitionKey: "p", RowKey: rk, Props: []Property{prop("W", i32(i))}})
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						wins++
						winner = e
					case codeIs(err, azerr.EntityAlreadyExists):
						conflicts++
					default:
						t.Error(err)
					}
				}()
			}
			g.open()
			wg.Wait()
			if wins != 1 || conflicts != n-1 {
				t.Fatalf("round %d: %d inserts won, %d conflicts", round, wins, conflicts)
			}
			got, err := s.GetEntity(ctx, acct, "ins", "p", rk)
			if err != nil {
				t.Fatal(err)
			}
			w, _ := winner.Lookup("W")
			v, _ := got.Lookup("W")
			if got.ETag() != winner.ETag() || v.Int != w.Int {
				t.Fatalf("round %d: stored W=%d %s, winner W=%d %s", round, v.Int, got.ETag(), w.Int, winner.ETag())
			}
		}
	})
}

// TestRaceBatchVsDeleteTable: a batch racing Delete Table either commits
// whole before the delete or fails with TableNotFound; the background
// purge removes the old rows and never touches a table re-created under
// the same name.
func TestRaceBatchVsDeleteTable(t *testing.T) {
	forEachEngine(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		committed, refused := 0, 0
		for round := 0; round < 10; round++ {
			mustTable(t, s, "doomed")
			// Enough rows that the purge needs several transactions.
			seed := make([]Op, 0, 100)
			for pk := 0; pk < 12; pk++ {
				seed = seed[:0]
				for rk := 0; rk < 100; rk++ {
					seed = append(seed, Op{Kind: OpInsert, PartitionKey: fmt.Sprint("seed", pk), RowKey: fmt.Sprint(rk)})
				}
				if _, err := s.Batch(ctx, acct, "doomed", seed); err != nil {
					t.Fatal(err)
				}
			}
			var ops []Op
			for rk := 0; rk < 20; rk++ {
				ops = append(ops, Op{Kind: OpInsertOrReplace, PartitionKey: "b", RowKey: fmt.Sprint(rk), Props: []Property{prop("R", i32(round))}})
			}
			g := newGate(2)
			var batchErr, delErr error
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				g.wait()
				_, batchErr = s.Batch(ctx, acct, "doomed", ops)
			}()
			go func() {
				defer wg.Done()
				g.wait()
				delErr = s.DeleteTable(ctx, acct, "doomed")
			}()
			g.open()
			wg.Wait()
			if delErr != nil {
				t.Fatal(delErr)
			}
			switch {
			case batchErr == nil:
				committed++
			case codeIs(batchErr, azerr.TableNotFound):
				refused++
			default:
				t.Fatalf("round %d: batch %v", round, batchErr)
			}
			// Re-create at once, while the purge of the old rows may still
			// run, and write to the new table.
			mustTable(t, s, "Doomed")
			if _, err := s.Apply(ctx, acct, "doomed", Op{Kind: OpInsert, PartitionKey: "seed0", RowKey: "0", Props: []Property{prop("New", i32(1))}}); err != nil {
				t.Fatal(err)
			}
			s.WaitPurges()
			page, err := s.QueryEntities(ctx, acct, "doomed", Query{})
			if err != nil {
				t.Fatal(err)
			}
			if page.More {
				t.Fatalf("round %d: the re-created table has more than one page", round)
			}
			if len(page.Entities) != 1 {
				t.Fatalf("round %d: re-created table holds %d entities, want the 1 written to it", round, len(page.Entities))
			}
			if v, ok := page.Entities[0].Lookup("New"); !ok || v.Int != 1 {
				t.Fatalf("round %d: the new table's entity is not the one written to it", round)
			}
			// Only the new incarnation's rows remain, and no purge marker.
			if err := s.eng.View(ctx, func(tx storage.Tx) error {
				uid, err := tableUID(tx, acct, "doomed")
				if err != nil {
					return err
				}
				p := keyenc.AppendString(nsPrefix(), "e")
				it := tx.Scan(p, keyenc.PrefixEnd(p), false)
				defer it.Close()
				own := entitiesPrefix(uid)
				for it.Next() {
					if string(it.Key()[:len(own)]) != string(own) {
						return fmt.Errorf("row of a deleted incarnation left: %q", it.Key())
					}
				}
				d := keyenc.AppendString(nsPrefix(), "d")
				it2 := tx.Scan(d, keyenc.PrefixEnd(d), false)
				defer it2.Close()
				if it2.Next() {
					return fmt.Errorf("purge marker left")
				}
				return nil
			}); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			if err := s.DeleteTable(ctx, acct, "doomed"); err != nil {
				t.Fatal(err)
			}
			s.WaitPurges()
		}
		t.Logf("batch committed %d times, refused %d times", committed, refused)
	})
}

func codeIs(err error, code azerr.Code) bool {
	var be *BatchError
	if errors.As(err, &be) {
		err = be.Err
	}
	e, ok := azerr.As(err)
	return ok && e.Code == code
}
