package table

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

func TestWireCreateTable(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		name := harness.UniqueTable("wct")
		r := Do(t, tg, "POST", "Tables", nil, `{"TableName":"`+name+`"}`)
		MustStatus(t, r, 201, "")
		m := r.JSON(t)
		if m["TableName"] != name || !strings.HasSuffix(m["odata.metadata"].(string), "$metadata#Tables/@Element") {
			t.Fatalf("create body %s", r.Body)
		}
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json;odata=minimalmetadata") {
			t.Fatalf("content type %q", r.Header.Get("Content-Type"))
		}
		r = Do(t, tg, "POST", "Tables", map[string]string{"Prefer": "return-no-content"}, `{"TableName":"`+name+`x"}`)
		MustStatus(t, r, 204, "")
		if r.Header.Get("Preference-Applied") != "return-no-content" {
			t.Fatalf("Preference-Applied %q", r.Header.Get("Preference-Applied"))
		}
		MustStatus(t, Do(t, tg, "POST", "Tables", nil, `{"TableName":"`+name+`"}`), 409, "TableAlreadyExists")
		MustStatus(t, Do(t, tg, "POST", "Tables", nil, `{"TableName":`), 400, "")
		r = Do(t, tg, "GET", "Tables", map[string]string{"Accept": "application/json;odata=fullmetadata"}, "")
		MustStatus(t, r, 200, "")
		var list struct {
			Value []map[string]any `json:"value"`
		}
		json.Unmarshal(r.Body, &list)
		found := false
		for _, v := range list.Value {
			if v["TableName"] == name {
				found = true
				if v["odata.editLink"] != "Tables('"+name+"')" || !strings.HasSuffix(v["odata.type"].(string), ".Tables") {
					t.Fatalf("full table entry %v", v)
				}
			}
		}
		if !found {
			t.Fatalf("table missing from %s", r.Body)
		}
		r = Do(t, tg, "GET", "Tables", map[string]string{"Accept": "application/json;odata=nometadata"}, "")
		if strings.Contains(string(r.Body), "odata.") {
			t.Fatalf("nometadata has annotations: %s", r.Body)
		}
		MustStatus(t, Do(t, tg, "DELETE", "Tables('"+name+"')", nil, ""), 204, "")
		MustStatus(t, Do(t, tg, "DELETE", "Tables('"+name+"')", nil, ""), 404, "ResourceNotFound")
	})
}

func TestWireEntityMetadataLevels(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		_, name := MustTable(t, tg, "wmeta")
		body := `{"PartitionKey":"p","RowKey":"r","S":"s","I":5,"L@odata.type":"Edm.Int64","L":"9007199254740993",` +
			`"T@odata.type":"Edm.DateTime","T":"2020-01-02T03:04:05.1234567Z","G@odata.type":"Edm.Guid","G":"4185404a-5818-48c3-b9be-f217df0dba6f",` +
			`"B@odata.type":"Edm.Binary","B":"AAEC","D":1.25,"F":false,"Timestamp":"1999-01-01T00:00:00Z","Nothing":null}`
		r := Do(t, tg, "POST", name, nil, body)
		MustStatus(t, r, 201, "")
		etag := r.Header.Get("ETag")
		if !strings.HasPrefix(etag, `W/"datetime'`) || !strings.Contains(etag, "%3A") {
			t.Fatalf("ETag %q", etag)
		}
		if loc := r.Header.Get("Location"); !strings.HasSuffix(loc, name+"(PartitionKey='p',RowKey='r')") {
			t.Fatalf("Location %q", loc)
		}
		m := r.JSON(t)
		if m["odata.etag"] != etag || m["Timestamp"] == "1999-01-01T00:00:00Z" {
			t.Fatalf("insert echo %s", r.Body)
		}
		if _, ok := m["Nothing"]; ok {
			t.Fatalf("null property stored: %s", r.Body)
		}
		levels := map[string]func(m map[string]any) bool{
			"nometadata": func(m map[string]any) bool {
				_, a := m["odata.etag"]
				_, b := m["L@odata.type"]
				return !a && !b && m["L"] == "9007199254740993"
			},
			"minimalmetadata": func(m map[string]any) bool {
				_, full := m["odata.type"]
				return m["odata.etag"] == etag && m["L@odata.type"] == "Edm.Int64" && m["T@odata.type"] == "Edm.DateTime" &&
					m["G@odata.type"] == "Edm.Guid" && m["B@odata.type"] == "Edm.Binary" && m["I@odata.type"] == nil &&
					m["S@odata.type"] == nil && !full && strings.HasSuffix(m["odata.metadata"].(string), "$metadata#"+name+"/@Element")
			},
			"fullmetadata": func(m map[string]any) bool {
				return m["odata.type"] != nil && strings.HasSuffix(m["odata.id"].(string), name+"(PartitionKey='p',RowKey='r')") &&
					m["odata.editLink"] == name+"(PartitionKey='p',RowKey='r')" && m["Timestamp@odata.type"] == "Edm.DateTime" &&
					m["L@odata.type"] == "Edm.Int64"
			},
		}
		for level, ok := range levels {
			r := Do(t, tg, "GET", name+"(PartitionKey='p',RowKey='r')", map[string]string{"Accept": "application/json;odata=" + level}, "")
			MustStatus(t, r, 200, "")
			if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json;odata="+level) {
				t.Fatalf("%s: content type %q", level, r.Header.Get("Content-Type"))
			}
			if m := r.JSON(t); !ok(m) || m["T"] != "2020-01-02T03:04:05.1234567Z" || m["B"] != "AAEC" || m["D"] != 1.25 || m["F"] != false {
				t.Fatalf("%s: %s", level, r.Body)
			}
			// $format wins over Accept.
			r = Do(t, tg, "GET", name+"(PartitionKey='p',RowKey='r')?$format=application/json;odata="+level, map[string]string{"Accept": "application/json;odata=minimalmetadata"}, "")
			if !ok(r.JSON(t)) {
				t.Fatalf("$format=%s: %s", level, r.Body)
			}
		}
	})
}

func TestWireEntityErrors(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		_, name := MustTable(t, tg, "werr")
		ent := name + "(PartitionKey='p',RowKey='r')"
		MustStatus(t, Do(t, tg, "POST", name, nil, `{"PartitionKey":"p","RowKey":"r","V":1}`), 201, "")
		// Malformed JSON and bad values: 400, never 500.
		for _, body := range []string{
			``, `{`, `[]`, `"x"`, `{"PartitionKey":"p"}`, `{"PartitionKey":1,"RowKey":"x"}`,
			`{"PartitionKey":"p","RowKey":"x","A":{"b":1}}`, `{"PartitionKey":"p","RowKey":"x","A":[1]}`,
			`{"PartitionKey":"p","RowKey":"x","A@odata.type":"Edm.Int32","A":"nope"}`,
			`{"PartitionKey":"p","RowKey":"x","A@odata.type":"Edm.Int32","A":2147483648}`,
			`{"PartitionKey":"p","RowKey":"x","A@odata.type":"Edm.Int64","A":"12x"}`,
			`{"PartitionKey":"p","RowKey":"x","A@odata.type":"Edm.DateTime","A":"yesterday"}`,
			`{"PartitionKey":"p","RowKey":"x","A@odata.type":"Edm.DateTime","A":"1500-01-01T00:00:00Z"}`,
			`{"PartitionKey":"p","RowKey":"x","A@odata.type":"Edm.Guid","A":"not-a-guid"}`,
			`{"PartitionKey":"p","RowKey":"x","A@odata.type":"Edm.Binary","A":"***"}`,
			`{"PartitionKey":"p","RowKey":"x","A@odata.type":"Edm.Boolean","A":"maybe"}`,
			`{"PartitionKey":"p","RowKey":"x","A@odata.type":"Edm.Decimal","A":"1"}`,
			`{"PartitionKey":"p","RowKey":"x","A@odata.type":"Edm.Double","A":"abc"}`,
			`{"PartitionKey":"p","RowKey":"x","A":1,"A":2}`,
			`{"PartitionKey":"p","RowKey":"x","A":1e999}`,
			`{"PartitionKey":"p","RowKey":"x"} trailing`,
		} {
			r := Do(t, tg, "POST", name, nil, body)
			if r.Status != 400 {
				t.Fatalf("body %q: %d %s", body, r.Status, r.Body)
			}
			if r.Code(t) == "" {
				t.Fatalf("body %q: no error code: %s", body, r.Body)
			}
		}
		// Key mismatch between URL and body.
		r := Do(t, tg, "PUT", ent, nil, `{"PartitionKey":"other","RowKey":"r"}`)
		if r.Status != 400 {
			t.Fatalf("key mismatch: %d", r.Status)
		}
		// Delete without If-Match: 400.
		if r := Do(t, tg, "DELETE", ent, nil, ""); r.Status != 400 {
			t.Fatalf("delete without If-Match: %d %s", r.Status, r.Body)
		}
		// Unknown entity.
		MustStatus(t, Do(t, tg, "GET", name+"(PartitionKey='p',RowKey='nope')", nil, ""), 404, "ResourceNotFound")
		MustStatus(t, Do(t, tg, "GET", "nosuchtable1(PartitionKey='p',RowKey='nope')", nil, ""), 404, "TableNotFound")
		MustStatus(t, Do(t, tg, "GET", "nosuchtable1()", nil, ""), 404, "TableNotFound")
		// Oversized body: 413.
		huge := `{"PartitionKey":"p","RowKey":"h","S":"` + strings.Repeat("a", 5<<20) + `"}`
		if r := Do(t, tg, "POST", name, nil, huge); r.Status != 413 && r.Status != 400 {
			t.Fatalf("huge body: %d", r.Status)
		}
		// Error bodies are OData JSON with RequestId and Time.
		r = Do(t, tg, "GET", name+"(PartitionKey='p',RowKey='nope')", nil, "")
		if msg := r.Message(t); !strings.Contains(msg, "\nRequestId:") || !strings.Contains(msg, "\nTime:") {
			t.Fatalf("error message %q", msg)
		}
	})
}

func TestWireXHTTPMethodTunnel(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		_, name := MustTable(t, tg, "wxm")
		ent := name + "(PartitionKey='p',RowKey='r')"
		MustStatus(t, Do(t, tg, "POST", ent, map[string]string{"X-HTTP-Method": "MERGE"}, `{"A":"a"}`), 204, "")
		MustStatus(t, Do(t, tg, "POST", ent, map[string]string{"X-HTTP-Method": "MERGE"}, `{"B":"b"}`), 204, "")
		r := Do(t, tg, "GET", ent, nil, "")
		if m := r.JSON(t); m["A"] != "a" || m["B"] != "b" {
			t.Fatalf("tunnelled merge: %s", r.Body)
		}
		MustStatus(t, Do(t, tg, "POST", ent, map[string]string{"X-HTTP-Method": "PUT"}, `{"C":"c"}`), 204, "")
		if m := Do(t, tg, "GET", ent, nil, "").JSON(t); m["A"] != nil || m["C"] != "c" {
			t.Fatalf("tunnelled put: %v", m)
		}
		MustStatus(t, Do(t, tg, "POST", ent, map[string]string{"X-HTTP-Method": "BOGUS"}, `{}`), 400, "XMethodIncorrectValue")
		MustStatus(t, Do(t, tg, "PUT", ent, map[string]string{"X-HTTP-Method": "MERGE"}, `{}`), 400, "XMethodNotUsingPost")
		MustStatus(t, Do(t, tg, "POST", ent, map[string]string{"X-HTTP-Method": "DELETE", "If-Match": "*"}, ""), 204, "")
		MustStatus(t, Do(t, tg, "GET", ent, nil, ""), 404, "ResourceNotFound")
	})
}

func TestWirePatchAndMergeVerbs(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		_, name := MustTable(t, tg, "wpv")
		ent := name + "(PartitionKey='p',RowKey='r')"
		// PATCH / MERGE without If-Match: insert-or-merge.
		r := Do(t, tg, "PATCH", ent, nil, `{"A":"a"}`)
		MustStatus(t, r, 204, "")
		e1 := r.Header.Get("ETag")
		r = Do(t, tg, "MERGE", ent, nil, `{"B":"b"}`)
		MustStatus(t, r, 204, "")
		e2 := r.Header.Get("ETag")
		if e1 == "" || e1 == e2 {
			t.Fatalf("etags %q %q", e1, e2)
		}
		// With a stale If-Match: 412; with the current one: 204.
		MustStatus(t, Do(t, tg, "PATCH", ent, map[string]string{"If-Match": e1}, `{"C":"c"}`), 412, "UpdateConditionNotSatisfied")
		MustStatus(t, Do(t, tg, "MERGE", ent, map[string]string{"If-Match": e2}, `{"C":"c"}`), 204, "")
		// Merge with If-Match on a missing entity: 404.
		MustStatus(t, Do(t, tg, "MERGE", name+"(PartitionKey='p',RowKey='zz')", map[string]string{"If-Match": "*"}, `{}`), 404, "ResourceNotFound")
		MustStatus(t, Do(t, tg, "PUT", name+"(PartitionKey='p',RowKey='zz')", map[string]string{"If-Match": "*"}, `{}`), 404, "ResourceNotFound")
		// Keys percent-encoded in the URL.
		MustStatus(t, Do(t, tg, "PUT", name+"(PartitionKey='a%20b',RowKey='c''d%25')", nil, `{"V":1}`), 204, "")
		r = Do(t, tg, "GET", name+"(PartitionKey='a%20b',RowKey='c''d%25')", nil, "")
		if m := r.JSON(t); m["PartitionKey"] != "a b" || m["RowKey"] != "c'd%" {
			t.Fatalf("encoded keys: %s", r.Body)
		}
		// /t and /t() both query.
		for _, p := range []string{name, name + "()"} {
			r := Do(t, tg, "GET", p, nil, "")
			MustStatus(t, r, 200, "")
			if v, _ := r.JSON(t)["value"].([]any); len(v) != 2 {
				t.Fatalf("%s: %s", p, r.Body)
			}
		}
	})
}

func TestWireContinuationHeaders(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		_, name := MustTable(t, tg, "wcont")
		for _, k := range []string{"a", "b", "c"} {
			MustStatus(t, Do(t, tg, "POST", name, map[string]string{"Prefer": "return-no-content"}, `{"PartitionKey":"p","RowKey":"`+k+`"}`), 204, "")
		}
		r := Do(t, tg, "GET", name+"()?$top=2", nil, "")
		MustStatus(t, r, 200, "")
		npk, nrk := r.Header.Get("x-ms-continuation-NextPartitionKey"), r.Header.Get("x-ms-continuation-NextRowKey")
		if npk == "" || nrk == "" {
			t.Fatalf("no continuation: %v", r.Header)
		}
		r = Do(t, tg, "GET", name+"()?$top=2&NextPartitionKey="+npk+"&NextRowKey="+nrk, nil, "")
		MustStatus(t, r, 200, "")
		v, _ := r.JSON(t)["value"].([]any)
		if len(v) != 1 || v[0].(map[string]any)["RowKey"] != "c" || r.Header.Get("x-ms-continuation-NextPartitionKey") != "" {
			t.Fatalf("second page: %s %v", r.Body, r.Header)
		}
		if r := Do(t, tg, "GET", name+"()?NextPartitionKey=%21%21garbage", nil, ""); r.Status != 400 && r.Status != 200 {
			t.Fatalf("bad token: %d", r.Status)
		}
	})
}
