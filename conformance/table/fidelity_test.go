package table

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestIfMatchMalformed pins that an If-Match value that is not an ETag is
// 400 (malformed input), not 412 (a condition that failed).
func TestIfMatchMalformed(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		c, _ := MustTable(t, tg, "ifm")
		ctx := harness.Ctx(t)
		MustAdd(t, c, map[string]any{"PartitionKey": "p", "RowKey": "r", "v": 1})
		body, _ := json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": "r", "v": 2})
		_, err := c.UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{IfMatch: ptr(azcore.ETag("not-an-etag")), UpdateMode: aztables.UpdateModeReplace})
		WantCode(t, err, 400, "InvalidInput")
		// Any weak ETag is well formed: one naming no entity Timestamp
		// never matches (TestIfMatchWeakAndStrong has the full rule).
		_, err = c.DeleteEntity(ctx, "p", "r", &aztables.DeleteEntityOptions{IfMatch: ptr(azcore.ETag(`W/"0x8D1234"`))})
		WantCode(t, err, 412, "UpdateConditionNotSatisfied")
		// A well-formed ETag that does not match is still 412.
		_, err = c.DeleteEntity(ctx, "p", "r", &aztables.DeleteEntityOptions{IfMatch: ptr(azcore.ETag(`W/"datetime'2001-01-01T00%3A00%3A00.0000000Z'"`))})
		WantCode(t, err, 412, "UpdateConditionNotSatisfied")
	})
}

// TestTypedValuesAsStrings pins the way the data-tables SDKs send typed
// values: the value as a JSON string with its Edm annotation
// ("b": "true", "b@odata.type": "Edm.Boolean"), which Azure accepts;
// values that do not parse as their type are refused.
func TestTypedValuesAsStrings(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		c, name := MustTable(t, tg, "edmstr")
		ctx := harness.Ctx(t)
		_, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r",
			"b":"true","b@odata.type":"Edm.Boolean",
			"f":"false","f@odata.type":"Edm.Boolean",
			"i":"42","i@odata.type":"Edm.Int32",
			"d":"2.5","d@odata.type":"Edm.Double",
			"l":"9007199254740993","l@odata.type":"Edm.Int64"}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := MustGet(t, c, "p", "r")
		if got["b"] != true || got["f"] != false || got["i"] != float64(42) || got["d"] != 2.5 || got["l"] != "9007199254740993" {
			t.Fatalf("stored %v", got)
		}
		// A Double beyond the range, which the SDK cannot even encode.
		big := `{"PartitionKey":"p","RowKey":"x","v":1e400}`
		MustStatus(t, Do(t, tg, http.MethodPost, name, nil, big), 400, "")
		for _, bad := range []string{
			`{"PartitionKey":"p","RowKey":"x","v":"yes","v@odata.type":"Edm.Boolean"}`,
			`{"PartitionKey":"p","RowKey":"x","v":"4.5","v@odata.type":"Edm.Int32"}`,
			`{"PartitionKey":"p","RowKey":"x","v":"2021-13-45T00:00:00Z","v@odata.type":"Edm.DateTime"}`,
			`{"PartitionKey":"p","RowKey":"x","v":"not a date","v@odata.type":"Edm.DateTime"}`,
			`{"PartitionKey":"p","RowKey":"x","v":"1e400","v@odata.type":"Edm.Double"}`,
		} {
			_, err := c.AddEntity(ctx, []byte(bad), nil)
			if StatusCode(err) != 400 {
				t.Errorf("%s: %v, want 400", bad, err)
			}
		}
	})
}

// TestFilterNumericAndBooleanLiterals pins that an integer literal matches
// a Double property by value (doubleField eq 5 finds 5.0) and that true
// and false are read in any capitalization.
func TestFilterNumericAndBooleanLiterals(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		c, _ := MustTable(t, tg, "flit")
		_, err := c.AddEntity(harness.Ctx(t), []byte(`{"PartitionKey":"p","RowKey":"five","d":5.0,"d@odata.type":"Edm.Double","b":true}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		MustAdd(t, c, map[string]any{"PartitionKey": "p", "RowKey": "six", "d": 6.5, "b": false})
		for f, want := range map[string]int{
			"d eq 5":                  1,
			"d gt 5":                  1,
			"d le 6":                  1,
			"d eq 5L":                 1,
			"b eq True":               1,
			"b eq FALSE":              1,
			"b eq true and d lt 6":    1,
			"b eq tRUE or b eq False": 2,

			"not (b eq TRUE) and d gt 6": 1,
		} {
			got, _ := listAll(t, c, &aztables.ListEntitiesOptions{Filter: &f})
			if n := len(got); n != want {
				t.Errorf("%s: %d entities, want %d", f, n, want)
			}
		}
	})
}

// TestTableStatsPrimary pins that Get Table Service Stats is answered on
// the secondary endpoint only: the primary gives 400
// InvalidQueryParameterValue, as Azure does.
func TestTableStatsPrimary(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		_, err := tg.Table(t).GetStatistics(harness.Ctx(t), nil)
		WantCode(t, err, 400, "InvalidQueryParameterValue")
		if tg.Remote {
			return
		}
		cred, err := aztables.NewSharedKeyCredential(tg.Account, tg.Key)
		if err != nil {
			t.Fatal(err)
		}
		sec, err := aztables.NewServiceClientWithSharedKey(tg.TableURL+"-secondary/", cred, &aztables.ClientOptions{ClientOptions: tg.ClientOptions()})
		if err != nil {
			t.Fatal(err)
		}
		st, err := sec.GetStatistics(harness.Ctx(t), nil)
		if err != nil {
			t.Fatalf("secondary stats: %v", err)
		}
		if st.GeoReplication == nil || st.GeoReplication.Status == nil {
			t.Fatalf("stats %+v", st)
		}
		r := Do(t, tg, http.MethodGet, "?restype=service&comp=stats", map[string]string{"Accept": "application/xml"}, "")
		if r.Status != 400 {
			t.Fatalf("raw stats on the primary: %d", r.Status)
		}
	})
}
