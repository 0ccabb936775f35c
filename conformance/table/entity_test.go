package table

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

func TestTables(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		svc := tg.Table(t)
		prefix := harness.UniqueTable("lst")
		var names []string
		for i := 0; i < 5; i++ {
			n := prefix + string(rune('a'+i))
			if _, err := svc.CreateTable(ctx, n, nil); err != nil {
				t.Fatalf("create %s: %v", n, err)
			}
			names = append(names, n)
		}
		// Create existing (any case) -> 409 TableAlreadyExists.
		_, err := svc.CreateTable(ctx, strings.ToUpper(names[0]), nil)
		WantCode(t, err, 409, "TableAlreadyExists")

		// Filter on TableName with paging by $top=2.
		filter := "TableName ge '" + prefix + "' and TableName lt '" + prefix + "{'"
		pager := svc.NewListTablesPager(&aztables.ListTablesOptions{Filter: &filter, Top: ptr(int32(2))})
		var got []string
		pages := 0
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if len(page.Tables) > 2 {
				t.Fatalf("page of %d tables with $top=2", len(page.Tables))
			}
			for _, tp := range page.Tables {
				got = append(got, *tp.Name)
			}
		}
		if strings.Join(got, ",") != strings.Join(names, ",") {
			t.Fatalf("tables %v, want %v", got, names)
		}
		if pages < 3 {
			t.Fatalf("%d pages, want at least 3", pages)
		}

		if _, err := svc.DeleteTable(ctx, names[1], nil); err != nil {
			t.Fatal(err)
		}
		_, err = svc.DeleteTable(ctx, names[1], nil)
		WantCode(t, err, 404, "ResourceNotFound")

		// Entity ops on a missing table: 404 TableNotFound.
		c := svc.NewClient(names[1])
		_, err = c.AddEntity(ctx, entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}), nil)
		WantCode(t, err, 404, "TableNotFound")
		_, err = c.GetEntity(ctx, "p", "r", nil)
		WantCode(t, err, 404, "TableNotFound")

		// Invalid names.
		for _, bad := range []string{"ab", "1abc", "a-bc", "tables", strings.Repeat("a", 64)} {
			_, err := svc.CreateTable(ctx, bad, nil)
			if StatusCode(err) != 400 {
				t.Fatalf("create %q: want 400, got %v", bad, err)
			}
		}
	})
}

func TestDeletedTableIsEmptyWhenRecreated(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		c, name := MustTable(t, tg, "recr")
		for i := 0; i < 30; i++ {
			MustAdd(t, c, map[string]any{"PartitionKey": "p", "RowKey": string(rune('a'+i%26)) + strings.Repeat("x", i)})
		}
		if _, err := c.Delete(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if tg.Remote {
			return // Azure keeps the name reserved for a while after delete
		}
		if _, err := tg.Table(t).CreateTable(ctx, name, nil); err != nil {
			t.Fatal(err)
		}
		got, _ := listAll(t, c, nil)
		if len(got) != 0 {
			t.Fatalf("recreated table has %d entities", len(got))
		}
	})
}

func TestEntityCRUD(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		c, _ := MustTable(t, tg, "crud")
		etag1 := MustAdd(t, c, map[string]any{"PartitionKey": "p", "RowKey": "r", "A": "x", "B": int32(1)})
		if !strings.HasPrefix(string(etag1), `W/"datetime'`) {
			t.Fatalf("etag %q", etag1)
		}
		// Insert again: 409 EntityAlreadyExists.
		_, err := c.AddEntity(ctx, entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}), nil)
		WantCode(t, err, 409, "EntityAlreadyExists")

		m, etag := MustGet(t, c, "p", "r")
		if etag != etag1 || m["A"] != "x" || m["B"] != float64(1) || m["odata.etag"] != string(etag1) {
			t.Fatalf("get: %v %s", m, etag)
		}
		// Merge with If-Match keeps A, adds C.
		up, err := c.UpdateEntity(ctx, entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "C": true}),
			&aztables.UpdateEntityOptions{IfMatch: &etag1, UpdateMode: aztables.UpdateModeMerge})
		if err != nil {
			t.Fatal(err)
		}
		if up.ETag == etag1 {
			t.Fatal("merge kept the ETag")
		}
		m, _ = MustGet(t, c, "p", "r")
		if m["A"] != "x" || m["C"] != true {
			t.Fatalf("after merge: %v", m)
		}
		// Stale ETag: 412.
		_, err = c.UpdateEntity(ctx, entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}),
			&aztables.UpdateEntityOptions{IfMatch: &etag1, UpdateMode: aztables.UpdateModeReplace})
		WantCode(t, err, 412, "UpdateConditionNotSatisfied")
		// Replace with current ETag drops A and C.
		cur := up.ETag
		up, err = c.UpdateEntity(ctx, entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "D": "d"}),
			&aztables.UpdateEntityOptions{IfMatch: &cur, UpdateMode: aztables.UpdateModeReplace})
		if err != nil {
			t.Fatal(err)
		}
		m, _ = MustGet(t, c, "p", "r")
		if _, ok := m["A"]; ok || m["D"] != "d" {
			t.Fatalf("after replace: %v", m)
		}
		// Update of a missing entity: 404 ResourceNotFound.
		anyTag := azcore.ETagAny
		_, err = c.UpdateEntity(ctx, entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "nope"}),
			&aztables.UpdateEntityOptions{IfMatch: &anyTag, UpdateMode: aztables.UpdateModeMerge})
		WantCode(t, err, 404, "ResourceNotFound")
		// Upserts create and then merge / replace.
		if _, err := c.UpsertEntity(ctx, entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "u", "X": "1"}),
			&aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.UpsertEntity(ctx, entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "u", "Y": "2"}),
			&aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge}); err != nil {
			t.Fatal(err)
		}
		m, _ = MustGet(t, c, "p", "u")
		if m["X"] != "1" || m["Y"] != "2" {
			t.Fatalf("insert-or-merge: %v", m)
		}
		if _, err := c.UpsertEntity(ctx, entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "u", "Z": "3"}),
			&aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
			t.Fatal(err)
		}
		m, _ = MustGet(t, c, "p", "u")
		if _, ok := m["X"]; ok || m["Z"] != "3" {
			t.Fatalf("insert-or-replace: %v", m)
		}
		// Delete: stale ETag 412, then with current, then 404.
		_, err = c.DeleteEntity(ctx, "p", "r", &aztables.DeleteEntityOptions{IfMatch: &etag1})
		WantCode(t, err, 412, "UpdateConditionNotSatisfied")
		if _, err := c.DeleteEntity(ctx, "p", "r", &aztables.DeleteEntityOptions{IfMatch: &up.ETag}); err != nil {
			t.Fatal(err)
		}
		_, err = c.DeleteEntity(ctx, "p", "r", nil)
		WantCode(t, err, 404, "ResourceNotFound")
		_, err = c.GetEntity(ctx, "p", "r", nil)
		WantCode(t, err, 404, "ResourceNotFound")
	})
}

// TestEdmRoundTrip writes every Edm type through the SDK's EDMEntity and
// reads it back exactly, at every metadata level.
func TestEdmRoundTrip(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		c, _ := MustTable(t, tg, "edm")
		when := time.Date(2021, 10, 15, 16, 13, 6, 16792100, time.UTC)
		ent := aztables.EDMEntity{
			Entity: aztables.Entity{PartitionKey: "pk", RowKey: "rk"},
			Properties: map[string]any{
				"Str":    "héllo \"quoted\" \u2603",
				"I32":    int32(-2147483648),
				"I64":    aztables.EDMInt64(math.MaxInt64),
				"Dbl":    1.5,
				"Bool":   true,
				"When":   aztables.EDMDateTime(when),
				"Id":     aztables.EDMGUID("4185404a-5818-48c3-b9be-f217df0dba6f"),
				"Bin":    aztables.EDMBinary([]byte{0, 1, 2, 255}),
				"Empty":  "",
				"EmptyB": aztables.EDMBinary([]byte{}),
			},
		}
		b, err := json.Marshal(ent)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.AddEntity(ctx, b, nil); err != nil {
			t.Fatal(err)
		}
		for _, f := range []aztables.MetadataFormat{aztables.MetadataFormatMinimal, aztables.MetadataFormatFull} {
			resp, err := c.GetEntity(ctx, "pk", "rk", &aztables.GetEntityOptions{Format: &f})
			if err != nil {
				t.Fatal(err)
			}
			var back aztables.EDMEntity
			if err := json.Unmarshal(resp.Value, &back); err != nil {
				t.Fatal(err)
			}
			p := back.Properties
			if p["Str"] != ent.Properties["Str"] || p["I32"] != int32(-2147483648) || p["I64"] != aztables.EDMInt64(math.MaxInt64) ||
				p["Dbl"] != 1.5 || p["Bool"] != true || p["Id"] != ent.Properties["Id"] || p["Empty"] != "" {
				t.Fatalf("%s: round trip mismatch: %#v", f, p)
			}
			if w, ok := p["When"].(aztables.EDMDateTime); !ok || !time.Time(w).Equal(when) {
				t.Fatalf("%s: DateTime %#v", f, p["When"])
			}
			if bin, ok := p["Bin"].(aztables.EDMBinary); !ok || !bytes.Equal(bin, []byte{0, 1, 2, 255}) {
				t.Fatalf("%s: Binary %#v", f, p["Bin"])
			}
			if bin, ok := p["EmptyB"].(aztables.EDMBinary); !ok || len(bin) != 0 {
				t.Fatalf("%s: empty Binary %#v", f, p["EmptyB"])
			}
			if time.Time(back.Timestamp).IsZero() || back.ETag == "" {
				t.Fatalf("%s: no Timestamp / etag: %#v", f, back)
			}
			if f == aztables.MetadataFormatFull && (back.Type == "" || back.ID == "" || back.EditLink == "") {
				t.Fatalf("fullmetadata lacks odata.type/id/editLink: %s", resp.Value)
			}
		}
	})
}

// TestDoubleSpecialValues covers NaN, ±Infinity, whole and tiny doubles
// over raw JSON.
func TestDoubleSpecialValues(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		_, name := MustTable(t, tg, "dbl")
		body := `{"PartitionKey":"p","RowKey":"r",` +
			`"N@odata.type":"Edm.Double","N":"NaN",` +
			`"P@odata.type":"Edm.Double","P":"Infinity",` +
			`"M@odata.type":"Edm.Double","M":"-Infinity",` +
			`"W@odata.type":"Edm.Double","W":2,` +
			`"T":1e-300,"L":1.7976931348623157e308}`
		MustStatus(t, Do(t, tg, "POST", name, map[string]string{"Prefer": "return-no-content"}, body), 204, "")
		r := Do(t, tg, "GET", name+"(PartitionKey='p',RowKey='r')", nil, "")
		MustStatus(t, r, 200, "")
		var m map[string]json.RawMessage
		if err := json.Unmarshal(r.Body, &m); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{`N`: `"NaN"`, `P`: `"Infinity"`, `M`: `"-Infinity"`}
		for k, v := range want {
			if string(m[k]) != v || string(m[k+"@odata.type"]) != `"Edm.Double"` {
				t.Fatalf("%s = %s (%s)", k, m[k], m[k+"@odata.type"])
			}
		}
		// A whole double must read back as a Double, not an Int32.
		var w float64
		json.Unmarshal(m["W"], &w)
		if w != 2 || (!bytes.ContainsAny(m["W"], ".eE") && string(m["W@odata.type"]) != `"Edm.Double"`) {
			t.Fatalf("W = %s (%s): reads back as an integer", m["W"], m["W@odata.type"])
		}
		var tiny, large float64
		json.Unmarshal(m["T"], &tiny)
		json.Unmarshal(m["L"], &large)
		if tiny != 1e-300 || large != math.MaxFloat64 {
			t.Fatalf("T=%s L=%s", m["T"], m["L"])
		}
	})
}

// TestETagDistinctWithinOneTick: rapid writes of one entity always get a
// new ETag.
func TestETagDistinctWithinOneTick(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		c, _ := MustTable(t, tg, "tick")
		seen := map[azcore.ETag]bool{MustAdd(t, c, map[string]any{"PartitionKey": "p", "RowKey": "r"}): true}
		var last time.Time
		for i := 0; i < 50; i++ {
			resp, err := c.UpsertEntity(ctx, entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "N": int32(i)}), nil)
			if err != nil {
				t.Fatal(err)
			}
			if seen[resp.ETag] {
				t.Fatalf("ETag %s repeated", resp.ETag)
			}
			seen[resp.ETag] = true
			m, _ := MustGet(t, c, "p", "r")
			ts, err := time.Parse(time.RFC3339Nano, m["Timestamp"].(string))
			if err != nil {
				t.Fatal(err)
			}
			if !ts.After(last) {
				t.Fatalf("Timestamp %v not after %v", ts, last)
			}
			last = ts
			if s := m["Timestamp"].(string); len(s) != len("2021-10-15T16:13:06.0167921Z") {
				t.Fatalf("Timestamp %q does not have 7 fractional digits", s)
			}
		}
	})
}

func TestKeysAndLimits(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		c, name := MustTable(t, tg, "keys")
		// Odd but legal keys round-trip through URLs.
		for _, k := range []string{"a'b", "sp ace", "per%cent", "uni\u00e9\u4e16", "plus+amp&eq=", "x(y)z,w", strings.Repeat("k", 1024)} {
			MustAdd(t, c, map[string]any{"PartitionKey": k, "RowKey": k, "V": k})
			m, _ := MustGet(t, c, k, k)
			if m["V"] != k || m["PartitionKey"] != k {
				t.Fatalf("key %q: %v", k, m)
			}
		}
		// Empty keys are legal (the SDK refuses them client-side; use raw HTTP).
		MustStatus(t, Do(t, tg, "POST", name, map[string]string{"Prefer": "return-no-content"}, `{"PartitionKey":"","RowKey":"","V":"e"}`), 204, "")
		r := Do(t, tg, "GET", name+"(PartitionKey='',RowKey='')", nil, "")
		MustStatus(t, r, 200, "")
		if m := r.JSON(t); m["V"] != "e" || m["PartitionKey"] != "" {
			t.Fatalf("empty keys: %v", m)
		}
		for _, k := range []string{"a/b", "a\\b", "a#b", "a?b", "a\x01b", "a\u0085b", strings.Repeat("k", 1025)} {
			_, err := c.AddEntity(ctx, entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": k}), nil)
			if StatusCode(err) != 400 {
				t.Fatalf("key %q: want 400, got %v", k, err)
			}
		}
		// 252 custom properties are fine, 253 are not.
		props := map[string]any{"PartitionKey": "p", "RowKey": "many"}
		for i := 0; i < 252; i++ {
			props["P"+strings.Repeat("x", i%5)+string(rune('a'+i%26))+string(rune('a'+i/26))] = int32(i)
		}
		MustAdd(t, c, props)
		props["RowKey"] = "toomany"
		props["Extra"] = "e"
		_, err := c.AddEntity(ctx, entityJSON(t, props), nil)
		WantCode(t, err, 400, "TooManyProperties")
		// Property name rules.
		for _, bad := range []string{"a-b", "1abc", "has space", strings.Repeat("n", 256)} {
			r := Do(t, tg, "POST", name, nil, `{"PartitionKey":"p","RowKey":"n","`+bad+`":"v"}`)
			if r.Status != 400 {
				t.Fatalf("property name %q: status %d %s", bad, r.Status, r.Body)
			}
		}
		// 64 KiB strings (32K UTF-16 units) and binaries; one more is too large.
		MustAdd(t, c, map[string]any{"PartitionKey": "p", "RowKey": "s", "S": strings.Repeat("s", 32*1024)})
		_, err = c.AddEntity(ctx, entityJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "s2", "S": strings.Repeat("s", 32*1024+1)}), nil)
		WantCode(t, err, 400, "PropertyValueTooLarge")
		bin := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "p", RowKey: "b"}, Properties: map[string]any{"B": aztables.EDMBinary(make([]byte, 64*1024))}}
		b, _ := json.Marshal(bin)
		if _, err := c.AddEntity(ctx, b, nil); err != nil {
			t.Fatal(err)
		}
		bin.RowKey, bin.Properties["B"] = "b2", aztables.EDMBinary(make([]byte, 64*1024+1))
		b, _ = json.Marshal(bin)
		_, err = c.AddEntity(ctx, b, nil)
		WantCode(t, err, 400, "PropertyValueTooLarge")
		// An entity just under 1 MiB is accepted; over it, EntityTooLarge.
		big := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "p", RowKey: "big"}, Properties: map[string]any{}}
		for i := 0; i < 15; i++ {
			big.Properties["B"+string(rune('a'+i))] = aztables.EDMBinary(make([]byte, 64*1024))
		}
		b, _ = json.Marshal(big)
		if _, err := c.AddEntity(ctx, b, nil); err != nil {
			t.Fatalf("entity of 15 x 64 KiB: %v", err)
		}
		big.RowKey = "toobig"
		big.Properties["Bp"] = aztables.EDMBinary(make([]byte, 64*1024))
		big.Properties["Bq"] = aztables.EDMBinary(make([]byte, 64*1024))
		b, _ = json.Marshal(big)
		_, err = c.AddEntity(ctx, b, nil)
		WantCode(t, err, 400, "EntityTooLarge")
		_, err = c.GetEntity(ctx, "p", "toobig", nil)
		WantCode(t, err, 404, "ResourceNotFound")
	})
}

func TestTableACL(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		c, name := MustTable(t, tg, "acl")
		start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
		expiry := start.Add(24 * time.Hour)
		ids := []*aztables.SignedIdentifier{
			{ID: ptr("read"), AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: &expiry, Permission: ptr("r")}},
			{ID: ptr("all"), AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: &expiry, Permission: ptr("raud")}},
		}
		if _, err := c.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: ids}); err != nil {
			t.Fatal(err)
		}
		got, err := c.GetAccessPolicy(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.SignedIdentifiers) != 2 || *got.SignedIdentifiers[1].ID != "all" ||
			*got.SignedIdentifiers[1].AccessPolicy.Permission != "raud" || !got.SignedIdentifiers[0].AccessPolicy.Start.Equal(start) ||
			!got.SignedIdentifiers[0].AccessPolicy.Expiry.Equal(expiry) {
			t.Fatalf("acl %+v", got.SignedIdentifiers)
		}
		// Six identifiers (the SDK refuses them client-side; use raw HTTP).
		six := "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers>"
		for i := 0; i < 6; i++ {
			six += "<SignedIdentifier><Id>id" + string(rune('a'+i)) + "</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier>"
		}
		six += "</SignedIdentifiers>"
		if r := Do(t, tg, "PUT", name+"?comp=acl", map[string]string{"Content-Type": "application/xml"}, six); r.Status != 400 {
			t.Fatalf("6 identifiers: %d %s", r.Status, r.Body)
		}
		if _, err := c.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err = c.GetAccessPolicy(ctx, nil)
		if err != nil || len(got.SignedIdentifiers) != 0 {
			t.Fatalf("cleared acl: %v %+v", err, got.SignedIdentifiers)
		}
	})
}

func TestServicePropertiesAndCORS(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		svc := tg.Table(t)
		props := aztables.ServiceProperties{
			Cors: []*aztables.CorsRule{{
				AllowedOrigins: ptr("https://example.com"), AllowedMethods: ptr("GET,PUT"),
				AllowedHeaders: ptr("x-ms-meta-*,content-type"), ExposedHeaders: ptr("x-ms-request-id"), MaxAgeInSeconds: ptr(int32(60)),
			}},
			HourMetrics: &aztables.Metrics{Enabled: ptr(true), IncludeAPIs: ptr(true), Version: ptr("1.0"),
				RetentionPolicy: &aztables.RetentionPolicy{Enabled: ptr(true), Days: ptr(int32(7))}},
		}
		if _, err := svc.SetProperties(ctx, props, nil); err != nil {
			t.Fatal(err)
		}
		got, err := svc.GetProperties(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Cors) != 1 || *got.Cors[0].AllowedOrigins != "https://example.com" || *got.Cors[0].MaxAgeInSeconds != 60 {
			t.Fatalf("cors %+v", got.Cors)
		}
		if got.HourMetrics == nil || !*got.HourMetrics.Enabled || *got.HourMetrics.RetentionPolicy.Days != 7 {
			t.Fatalf("hour metrics %+v", got.HourMetrics)
		}
		// Preflight honours the stored rules.
		pre := func(origin, method, headers string) *Raw {
			req, _ := http.NewRequestWithContext(ctx, "OPTIONS", tg.TableURL+"/Tables", nil)
			req.Header.Set("Origin", origin)
			req.Header.Set("Access-Control-Request-Method", method)
			if headers != "" {
				req.Header.Set("Access-Control-Request-Headers", headers)
			}
			resp, err := tg.HTTP.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			return &Raw{Status: resp.StatusCode, Header: resp.Header}
		}
		r := pre("https://example.com", "PUT", "x-ms-meta-a,content-type")
		if r.Status != 200 || r.Header.Get("Access-Control-Allow-Origin") != "https://example.com" || r.Header.Get("Access-Control-Max-Age") != "60" {
			t.Fatalf("preflight: %d %v", r.Status, r.Header)
		}
		if r := pre("https://evil.example", "GET", ""); r.Status != 403 {
			t.Fatalf("preflight from other origin: %d", r.Status)
		}
		if r := pre("https://example.com", "DELETE", ""); r.Status != 403 {
			t.Fatalf("preflight of other method: %d", r.Status)
		}
		// An actual request from an allowed origin gets the CORS headers.
		rr := Do(t, tg, "GET", "Tables", map[string]string{"Origin": "https://example.com"}, "")
		if rr.Header.Get("Access-Control-Allow-Origin") != "https://example.com" || rr.Header.Get("Access-Control-Expose-Headers") != "x-ms-request-id" {
			t.Fatalf("cors response headers: %v", rr.Header)
		}
		// Clear CORS again so other tests on a shared remote are unaffected.
		if _, err := svc.SetProperties(ctx, aztables.ServiceProperties{Cors: []*aztables.CorsRule{}}, nil); err != nil {
			t.Fatal(err)
		}
	})
}
