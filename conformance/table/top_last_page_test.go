package table

import (
	"fmt"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestTopLastPageHasNoContinuation pins that a query paged with $top ends
// without a continuation token once the results are exhausted: a filtered
// Query Tables and a filtered Query Entities whose last page is full but
// after which further rows exist that the filter rejects end on that page,
// with no empty page after it.
func TestTopLastPageHasNoContinuation(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		svc := tg.Table(t)
		prefix := harness.UniqueTable("toplast")
		// Four tables the filter takes, then one it does not.
		for i := 0; i < 5; i++ {
			name := fmt.Sprintf("%sa%d", prefix, i)
			if i == 4 {
				name = prefix + "b4"
			}
			if _, err := svc.CreateTable(ctx, name, nil); err != nil {
				t.Fatal(err)
			}
		}
		filter := fmt.Sprintf("TableName ge '%sa' and TableName lt '%sb'", prefix, prefix)
		top := int32(2)
		pager := svc.NewListTablesPager(&aztables.ListTablesOptions{Filter: &filter, Top: &top})
		pages, n := 0, 0
		for pager.More() {
			resp, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			n += len(resp.Tables)
		}
		if pages != 2 || n != 4 {
			t.Fatalf("tables: %d in %d pages, want 4 in 2", n, pages)
		}

		c, _ := MustTable(t, tg, "toplastent")
		for i := 0; i < 6; i++ {
			MustAdd(t, c, map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprintf("r%d", i), "Keep": i < 4})
		}
		keep := "Keep eq true"
		ep := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &keep, Top: &top})
		pages, n = 0, 0
		for ep.More() {
			resp, err := ep.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			n += len(resp.Entities)
		}
		if pages != 2 || n != 4 {
			t.Fatalf("entities: %d in %d pages, want 4 in 2", n, pages)
		}
	})
}
