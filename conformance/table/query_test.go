package table

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func keysOf(ms []map[string]any) string {
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprint(m["PartitionKey"], "/", m["RowKey"]))
	}
	return strings.Join(out, ",")
}

func TestQueryFilters(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		c, _ := MustTable(t, tg, "qf")
		ents := []aztables.EDMEntity{
			{Entity: aztables.Entity{PartitionKey: "a", RowKey: "1"}, Properties: map[string]any{
				"Name": "Ann", "Age": int32(30), "Big": aztables.EDMInt64(1 << 40), "Score": 1.5, "On": true,
				"When": aztables.EDMDateTime(mustTime("2020-01-01T00:00:00Z")), "Id": aztables.EDMGUID("11111111-1111-1111-1111-111111111111"),
				"Bin": aztables.EDMBinary{0x0a, 0x1b}}},
			{Entity: aztables.Entity{PartitionKey: "a", RowKey: "2"}, Properties: map[string]any{
				"Name": "O'Brien", "Age": int32(40), "Big": aztables.EDMInt64(5), "Score": 2.5, "On": false,
				"When": aztables.EDMDateTime(mustTime("2021-06-01T12:00:00Z")), "Id": aztables.EDMGUID("22222222-2222-2222-2222-222222222222")}},
			{Entity: aztables.Entity{PartitionKey: "b", RowKey: "1"}, Properties: map[string]any{"Name": "Bob", "Age": int32(50)}},
			{Entity: aztables.Entity{PartitionKey: "b", RowKey: "2"}, Properties: map[string]any{"Other": "x"}},
		}
		for _, e := range ents {
			b, _ := json.Marshal(e)
			if _, err := c.AddEntity(ctx, b, nil); err != nil {
				t.Fatal(err)
			}
		}
		cases := map[string]string{
			"":                                       "a/1,a/2,b/1,b/2",
			"PartitionKey eq 'a'":                    "a/1,a/2",
			"PartitionKey eq 'b' and RowKey ge '2'":  "b/2",
			"Name eq 'O''Brien'":                     "a/2",
			"Age gt 30 and Age le 50":                "a/2,b/1",
			"Age ge 30 or Name eq 'Bob'":             "a/1,a/2,b/1",
			"not (Age eq 30)":                        "a/2,b/1,b/2",
			"Big eq 1099511627776L":                  "a/1",
			"Big lt 10L":                             "a/2",
			"Score ge 2.0":                           "a/2",
			"On eq true":                             "a/1",
			"On eq false or Other eq 'x'":            "a/2,b/2",
			"When gt datetime'2020-06-01T00:00:00Z'": "a/2",
			"Id eq guid'22222222-2222-2222-2222-222222222222'": "a/2",
			"Bin eq X'0A1B'":      "a/1",
			"Bin eq binary'0a1b'": "a/1",
			"(Name ge 'A' and Name lt 'B') or (Name ge 'B' and Name lt 'C')":      "a/1,b/1",
			"Timestamp gt datetime'2000-01-01T00:00:00Z' and PartitionKey eq 'b'": "b/1,b/2",
			"Age eq 30L":     "", // Int32 property against an Int64 literal: no match
			"Missing ne 'x'": "",
		}
		for f, want := range cases {
			opts := &aztables.ListEntitiesOptions{}
			if f != "" {
				opts.Filter = ptr(f)
			}
			got, _ := listAll(t, c, opts)
			if keysOf(got) != want {
				t.Errorf("%q: got %s want %s", f, keysOf(got), want)
			}
		}
		// Bad filters are 400.
		for _, f := range []string{"Name eq", "Name eq 'x' and", "Age eq 0x1", "Name eq Other"} {
			pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: ptr(f)})
			_, err := pager.NextPage(ctx)
			if StatusCode(err) != 400 {
				t.Errorf("%q: want 400, got %v", f, err)
			}
		}
	})
}

func TestQuerySelectTopContinuation(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		c, _ := MustTable(t, tg, "qs")
		var want []string
		for p := 0; p < 3; p++ {
			var actions []aztables.TransactionAction
			for r := 0; r < 25; r++ {
				pk, rk := fmt.Sprintf("p%d", p), fmt.Sprintf("r%02d", r)
				want = append(want, pk+"/"+rk)
				actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
					Entity: entityJSON(t, map[string]any{"PartitionKey": pk, "RowKey": rk, "A": "a", "B": int32(r)})})
			}
			if _, err := c.SubmitTransaction(ctx, actions, nil); err != nil {
				t.Fatal(err)
			}
		}
		got, pages := listAll(t, c, &aztables.ListEntitiesOptions{Top: ptr(int32(10))})
		if keysOf(got) != strings.ReplaceAll(strings.Join(want, ","), " ", "") || pages < 8 {
			t.Fatalf("paged %d entities in %d pages", len(got), pages)
		}
		// $select returns only the selected properties (plus odata.etag).
		got, _ = listAll(t, c, &aztables.ListEntitiesOptions{Select: ptr("B,RowKey"), Filter: ptr("PartitionKey eq 'p1'")})
		if len(got) != 25 {
			t.Fatalf("select: %d", len(got))
		}
		for _, m := range got {
			if _, ok := m["A"]; ok {
				t.Fatalf("select returned A: %v", m)
			}
			if _, ok := m["B"]; !ok || m["RowKey"] == nil {
				t.Fatalf("select lost B/RowKey: %v", m)
			}
			if _, ok := m["odata.etag"]; !ok {
				t.Fatalf("select dropped odata.etag: %v", m)
			}
		}
	})
}

func TestQueryTopLimits(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		_, name := MustTable(t, tg, "qt")
		for _, top := range []string{"0", "1001", "-1", "x"} {
			r := Do(t, tg, "GET", name+"()?$top="+top, nil, "")
			if r.Status != 400 {
				t.Fatalf("$top=%s: %d %s", top, r.Status, r.Body)
			}
		}
		MustStatus(t, Do(t, tg, "GET", name+"()?$top=1000", nil, ""), 200, "")
	})
}

func TestQueryLargePartitionPages(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		c, _ := MustTable(t, tg, "big")
		for b := 0; b < 25; b++ {
			var actions []aztables.TransactionAction
			for r := 0; r < 100; r++ {
				actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
					Entity: entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprintf("%05d", b*100+r)})})
			}
			if _, err := c.SubmitTransaction(ctx, actions, nil); err != nil {
				t.Fatal(err)
			}
		}
		pager := c.NewListEntitiesPager(nil)
		total, pages := 0, 0
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Entities) > 1000 {
				t.Fatalf("page of %d entities", len(page.Entities))
			}
			total += len(page.Entities)
			pages++
		}
		if total != 2500 || pages < 3 {
			t.Fatalf("%d entities in %d pages", total, pages)
		}
	})
}
