package table

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestIfMatchWeakAndStrong pins how an entity write reads If-Match: any
// weak ETag (W/"..." or w/"...", whatever it quotes) that is not the
// entity's is a condition that fails, 412 UpdateConditionNotSatisfied; a
// strong ETag, even "datetime'...'", or an unquoted value is malformed,
// 400. Either way the entity is left as it was. The entity's own ETag,
// also spelled with a lower-case w/, matches.
func TestIfMatchWeakAndStrong(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		c, _ := MustTable(t, tg, "etagrules")
		etag := MustAdd(t, c, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": "orig"})
		upd := entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": "changed"})
		for _, bad := range []string{`W/"wrong"`, `w/"wrong"`, `W/"datetime'2015-01-01T23%3A14%3A33.4980000Z'"`, `w/"datetime'2015-01-01T23%3A14%3A33.4980000Z'"`} {
			e := azcore.ETag(bad)
			_, err := c.UpdateEntity(ctx, upd, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace, IfMatch: &e})
			WantCode(t, err, 412, "UpdateConditionNotSatisfied")
		}
		for _, bad := range []string{`"wrong"`, `"datetime'2015-01-01T23%3A14%3A33.4980000Z'"`, `wrong`, `datetime'2015-01-01T23%3A14%3A33.4980000Z'`, `"`} {
			e := azcore.ETag(bad)
			_, err := c.UpdateEntity(ctx, upd, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace, IfMatch: &e})
			if StatusCode(err) != 400 {
				t.Errorf("If-Match %s: %v, want 400", bad, err)
			}
		}
		got, err := c.GetEntity(ctx, "p", "r", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.ETag != etag {
			t.Fatalf("entity changed: %s, was %s", got.ETag, etag)
		}
		lower := azcore.ETag("w" + string(etag)[1:])
		if _, err := c.UpdateEntity(ctx, upd, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace, IfMatch: &lower}); err != nil {
			t.Fatalf("own ETag with w/: %v", err)
		}
	})
}
