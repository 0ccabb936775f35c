package table

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lazuli-storage/lazuli/internal/engine/pgstore"
	"github.com/lazuli-storage/lazuli/internal/engine/pgstore/pgtest"
	"github.com/lazuli-storage/lazuli/internal/table/odata"
)

// TestInsertEntityPostgres: 16 clients inserting new entities into one
// table on PostgreSQL cost one round trip per Update: the table's record
// comes from the engine's hints (as this instance last read it), the new
// entity's key is taken as absent, and both are checked with the insert
// and COMMIT. An attempt run again reads the database, and costs two.
func TestInsertEntityPostgres(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	e, err := pgstore.Open(ctx, pgstore.Options{URL: url, MaxConns: 32})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
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
