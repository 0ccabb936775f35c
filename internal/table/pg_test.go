package table

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/engine/pgstore/pgstoretest"
	"github.com/lazuli-storage/lazuli/internal/table/odata"
)

// TestInsertEntityPostgres: 16 clients inserting new entities into one
// table on PostgreSQL cost one round trip per Update: the table's record
// comes from the engine's hints (as this instance last read it), the new
// entity's key is taken as absent, and both are checked with the insert
// and COMMIT. An attempt run again reads the database, and costs two.
func TestInsertEntityPostgres(t *testing.T) {
	ctx := context.Background()
	e, url := pgstoretest.MustOpen(t, 32)
	pgstoretest.MustAnalyze(t, url)
	s := New(e, Options{})
	if _, err := s.CreateTable(ctx, acct, "inserts"); err != nil {
		t.Fatal(err)
	}
	const clients, each = 16, 40
	before := e.UpdateStats()
	var wg sync.WaitGroup
	for cl := range clients {
		wg.Go(func() {
			for i := range each {
				op := Op{Kind: OpInsert, PartitionKey: fmt.Sprint("p", cl), RowKey: fmt.Sprint("r", i),
					Props: []Property{{"Name", odata.Value{Type: odata.String, Str: "x"}}}}
				if _, err := s.Apply(ctx, acct, "inserts", op); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	st := e.UpdateStats()
	updates, retries, trips := st.Updates-before.Updates, st.Retries-before.Retries, st.RoundTrips-before.RoundTrips
	t.Logf("%d Updates, %d attempts run again, %d round trips", updates, retries, trips)
	if retries > updates/25 {
		t.Errorf("%d Updates ran %d attempts again, want at most %d", updates, retries, updates/25)
	}
	if trips > updates+2*retries {
		t.Errorf("%d round trips for %d Updates and %d attempts run again, want one per Update and two per attempt run again",
			trips, updates, retries)
	}
}
