package robustness_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

const tb = "robusttab"

// tableFixture creates a table with two entities in partition "p" and
// returns the reads that describe the service's tables and entities.
func tableFixture(t *testing.T, tg *harness.Target) []call {
	t.Helper()
	do := func(method, path, body string) {
		t.Helper()
		r := send(t, tg, call{Svc: tableSvc, Method: method, Path: path, Body: []byte(body), Header: map[string]string{"Prefer": "return-no-content"}})
		mustOK(t, r, "setup "+method+" "+path)
	}
	do(http.MethodPost, "Tables", `{"TableName":"`+tb+`"}`)
	do(http.MethodPost, tb, `{"PartitionKey":"p","RowKey":"r","n":1,"s":"text","big@odata.type":"Edm.Int64","big":"5"}`)
	do(http.MethodPost, tb, `{"PartitionKey":"p","RowKey":"r2","s":"two"}`)
	get := func(path string) call { return call{Svc: tableSvc, Method: http.MethodGet, Path: path} }
	return []call{
		get("Tables"),
		get(tb + "()"),
		get(tb + "(PartitionKey='p',RowKey='r')"),
		get(tb + "?comp=acl"),
		get("?restype=service&comp=properties"),
	}
}

// entityURL is the escaped path of one entity of the fixture table.
func entityURL(pk, rk string) string {
	q := func(s string) string { return url.PathEscape("'" + strings.ReplaceAll(s, "'", "''") + "'") }
	return tb + "(PartitionKey=" + q(pk) + ",RowKey=" + q(rk) + ")"
}

// batch builds a $batch body: one changeset holding the given operations,
// each a request line, headers and body already formatted.
func batch(ops ...string) string {
	var b strings.Builder
	b.WriteString("--batch_r\r\nContent-Type: multipart/mixed; boundary=changeset_r\r\n\r\n")
	for _, op := range ops {
		b.WriteString("--changeset_r\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		b.WriteString(op)
		b.WriteString("\r\n")
	}
	b.WriteString("--changeset_r--\r\n--batch_r--\r\n")
	return b.String()
}

// batchOp formats one operation of a changeset.
func batchOp(method, url, body string) string {
	s := method + " " + url + " HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json;odata=minimalmetadata\r\nPrefer: return-no-content\r\nDataServiceVersion: 3.0\r\n"
	if method == http.MethodDelete || method == http.MethodPut || method == "MERGE" || method == http.MethodPatch {
		s += "If-Match: *\r\n"
	}
	return s + "\r\n" + body
}

func tableCases(tg *harness.Target) []bad {
	const (
		get, put, del, head, post, patch = http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodHead, http.MethodPost, http.MethodPatch
	)
	var cs []bad
	add := func(name, method, path string, hdr map[string]string, body string, status int, codes ...string) {
		var b []byte
		if body != "" {
			b = []byte(body)
		}
		cs = append(cs, bad{Name: name, call: call{Svc: tableSvc, Method: method, Path: path, Header: hdr, Body: b}, Status: status, Codes: codes})
	}
	ent := func(extra string) string { return `{"PartitionKey":"p","RowKey":"new"` + extra + `}` }
	r := entityURL("p", "r")
	star := map[string]string{"If-Match": "*"}

	// Insert bodies.
	add("insert not json", post, tb, nil, "not json", 400, "InvalidInput")
	add("insert json array", post, tb, nil, `[{"PartitionKey":"p","RowKey":"new"}]`, 400)
	add("insert json string", post, tb, nil, `"entity"`, 400)
	add("insert truncated", post, tb, nil, `{"PartitionKey":"p","RowKey":"new","s":"ab`, 400, "InvalidInput")
	add("insert trailing garbage", post, tb, nil, ent("")+"}}}", 400)
	add("insert empty object", post, tb, nil, "{}", 400)
	add("insert key is a number", post, tb, nil, `{"PartitionKey":1,"RowKey":"new"}`, 400)
	add("insert key is null", post, tb, nil, `{"PartitionKey":null,"RowKey":"new"}`, 400)
	add("insert missing RowKey", post, tb, nil, `{"PartitionKey":"p"}`, 400)
	add("insert Int32 not a number", post, tb, nil, ent(`,"n@odata.type":"Edm.Int32","n":"abc"`), 400)
	add("insert Int32 too big", post, tb, nil, ent(`,"n@odata.type":"Edm.Int32","n":99999999999`), 400)
	add("insert Int64 too big", post, tb, nil, ent(`,"n@odata.type":"Edm.Int64","n":"99999999999999999999999"`), 400)
	add("insert Int64 as number", post, tb, nil, ent(`,"n@odata.type":"Edm.Int64","n":"12x"`), 400)
	add("insert number 1e400", post, tb, nil, ent(`,"n":1e400`), 400)
	add("insert Double garbage", post, tb, nil, ent(`,"n@odata.type":"Edm.Double","n":"many"`), 400)
	add("insert Guid garbage", post, tb, nil, ent(`,"g@odata.type":"Edm.Guid","g":"not-a-guid"`), 400)
	add("insert DateTime garbage", post, tb, nil, ent(`,"d@odata.type":"Edm.DateTime","d":"yesterday"`), 400)
	add("insert DateTime out of range", post, tb, nil, ent(`,"d@odata.type":"Edm.DateTime","d":"1500-01-01T00:00:00Z"`), 400)
	add("insert Binary not base64", post, tb, nil, ent(`,"b@odata.type":"Edm.Binary","b":"!!!"`), 400)
	add("insert Boolean as string", post, tb, nil, ent(`,"b@odata.type":"Edm.Boolean","b":"yes"`), 400)
	add("insert unknown Edm type", post, tb, nil, ent(`,"x@odata.type":"Edm.Potato","x":"1"`), 400)
	add("insert type annotation not a string", post, tb, nil, ent(`,"x@odata.type":5,"x":"1"`), 400)
	add("insert object value", post, tb, nil, ent(`,"x":{"a":1}`), 400)
	add("insert array value", post, tb, nil, ent(`,"x":[1,2]`), 400)
	add("insert deep nesting", post, tb, nil, ent(`,"x":`+strings.Repeat("[", 100000)+strings.Repeat("]", 100000)), 400)
	add("insert deep object nesting", post, tb, nil, ent(`,"x":`+strings.Repeat(`{"a":`, 100000)+"1"+strings.Repeat("}", 100000)), 400)
	add("insert duplicate property", post, tb, nil, ent(`,"a":1,"a":2`), 400)
	add("insert duplicate key", post, tb, nil, `{"PartitionKey":"p","RowKey":"new","RowKey":"other"}`, 400)
	add("insert property name with dash", post, tb, nil, ent(`,"a-b":1`), 400)
	add("insert property name too long", post, tb, nil, ent(`,"`+strings.Repeat("a", 256)+`":1`), 400)
	add("insert empty property name", post, tb, nil, ent(`,"":1`), 400)
	var many strings.Builder
	for i := range 253 {
		fmt.Fprintf(&many, `,"p%d":1`, i)
	}
	add("insert too many properties", post, tb, nil, ent(many.String()), 400)
	add("insert string too long", post, tb, nil, ent(`,"s":"`+strings.Repeat("s", 33*1024)+`"`), 400)
	add("insert entity 10 MB", post, tb, nil, ent(`,"s":"`+strings.Repeat("s", 10<<20)+`"`), 0)
	for _, k := range []string{"a/b", "a#b", "a?b", `a\\b`, `a\u0001b`, `a\u007fb`, `a\u0085b`, strings.Repeat("k", 1025)} {
		add("insert RowKey "+shorten(k), post, tb, nil, `{"PartitionKey":"p","RowKey":"`+k+`"}`, 400)
		add("insert PartitionKey "+shorten(k), post, tb, nil, `{"PartitionKey":"`+k+`","RowKey":"r"}`, 400)
	}
	add("insert existing", post, tb, nil, `{"PartitionKey":"p","RowKey":"r","s":"overwrite"}`, 409, "EntityAlreadyExists")
	add("insert unknown format", post, tb+"?$format=application/potato", nil, ent(""), 0)
	add("insert content type text", post, tb, map[string]string{"Content-Type": "text/plain"}, ent(""), 0)

	// Updates of the existing entity: every one must leave it as it was.
	add("replace not json", put, r, star, "garbage", 400, "InvalidInput")
	add("replace truncated", put, r, star, `{"s":"x`, 400, "InvalidInput")
	add("replace other RowKey", put, r, star, `{"PartitionKey":"p","RowKey":"zzz","s":"x"}`, 400)
	add("replace wrong types", put, r, star, `{"s@odata.type":"Edm.Int32","s":"x"}`, 400)
	add("replace deep nesting", put, r, star, `{"s":`+strings.Repeat("[", 50000)+strings.Repeat("]", 50000)+`}`, 400)
	add("merge not json", patch, r, star, "garbage", 400, "InvalidInput")
	add("merge MERGE verb not json", "MERGE", r, star, "garbage", 400, "InvalidInput")
	add("merge huge number", patch, r, star, `{"n":1e999}`, 400)
	add("merge bad Int64", patch, r, star, `{"big@odata.type":"Edm.Int64","big":"x"}`, 400)
	add("merge string too long", patch, r, star, `{"s":"`+strings.Repeat("s", 33*1024)+`"}`, 400)
	add("replace If-Match garbage", put, r, map[string]string{"If-Match": "garbage"}, `{"s":"x"}`, 0)
	add("replace stale If-Match", put, r, map[string]string{"If-Match": `W/"datetime'2000-01-01T00%3A00%3A00.0000000Z'"`}, `{"s":"x"}`, 412, "UpdateConditionNotSatisfied")
	add("replace If-Match and If-None-Match", put, r, map[string]string{"If-Match": "*", "If-None-Match": "*"}, `{"s":"x"}`, 400)
	add("delete without If-Match", del, r, nil, "", 0)
	add("delete If-Match garbage", del, r, map[string]string{"If-Match": "garbage"}, "", 0)
	add("X-HTTP-Method unknown", post, r, map[string]string{"X-HTTP-Method": "FROB", "If-Match": "*"}, `{"s":"x"}`, 400, "XMethodIncorrectValue")
	add("X-HTTP-Method on GET", get, r, map[string]string{"X-HTTP-Method": "DELETE"}, "", 400, "XMethodNotUsingPost")
	cs = append(cs, bad{Name: "X-HTTP-Method twice", call: call{Svc: tableSvc, Method: post, Path: r, Body: []byte(`{"s":"x"}`),
		Header: star, Add: [][2]string{{"X-HTTP-Method", "MERGE"}, {"X-HTTP-Method", "DELETE"}}}, Status: 400, Codes: []string{"XMethodIncorrectCount"}})

	// Key syntax in URLs.
	for _, p := range []string{
		tb + "(PartitionKey='p'", tb + "(PartitionKey=p,RowKey=r)", tb + "(Foo='p',Bar='r')",
		tb + "(PartitionKey='p',RowKey='r',Extra='x')", tb + "('p')", tb + "(PartitionKey='p',RowKey='r'))",
		tb + "(PartitionKey=,RowKey=)",
		tb + "(PartitionKey='p',RowKey='" + strings.Repeat("k", 1025) + "')",
	} {
		add("key syntax GET "+shorten(p), get, p, nil, "", 0)
		add("key syntax PUT "+shorten(p), put, p, nil, `{"s":"x"}`, 0)
	}
	for _, k := range []string{"a/b", "a#b", "a?b", "a\\b", "a\x01b", "a\x7fb"} {
		add("upsert RowKey "+k, put, entityURL("p", k), nil, `{"s":"x"}`, 400)
	}
	add("missing entity", get, entityURL("p", "missing"), nil, "", 404, "ResourceNotFound")
	add("missing entity HEAD", head, entityURL("p", "missing"), nil, "", 0)
	add("missing table", get, "nosuchtable()", nil, "", 404, "TableNotFound")
	add("insert into missing table", post, "nosuchtable", nil, ent(""), 404, "TableNotFound")

	// Queries.
	for _, v := range []string{"0", "-1", "abc", "1001", "99999999999999999999"} {
		add("query $top="+v, get, tb+"()?$top="+v, nil, "", 400)
		add("query tables $top="+v, get, "Tables?$top="+v, nil, "", 400)
	}
	for _, f := range []string{"PartitionKey eq", "((((", "PartitionKey eq 'p' and", "n gt 1 1", "PartitionKey eq 'unterminated", "n eq 99999999999999999999999L", "d eq datetime'nope'", "g eq guid'nope'", "b eq X'zz'", "PartitionKey frob 'p'", strings.Repeat("(", 10000) + "true" + strings.Repeat(")", 10000)} {
		add("query $filter "+shorten(f), get, tb+"()?$filter="+url.QueryEscape(f), nil, "", 400)
	}
	add("query $select bad name", get, tb+"()?$select="+url.QueryEscape("a-b,,"), nil, "", 0)
	add("service restype=bogus", get, "?restype=bogus&comp=properties", nil, "", 0)
	add("query $format bogus", get, tb+"()?$format=potato", nil, "", 0)
	add("table comp=unknown", get, tb+"?comp=unknown", nil, "", 0)
	add("query timeout=abc on write", post, tb+"?timeout=abc", nil, "not json", 400, "InvalidInput")

	// Tables.
	for _, n := range []string{"1abc", "ab", "a-b", "a_b", "tables", strings.Repeat("t", 64), "ta b", "t\u00e9t"} {
		add("table name "+n, post, "Tables", nil, `{"TableName":"`+n+`"}`, 400, "InvalidResourceName", "OutOfRangeInput", "InvalidInput")
	}
	add("table name a number", post, "Tables", nil, `{"TableName":5}`, 400)
	add("table name missing", post, "Tables", nil, `{}`, 400)
	add("table body garbage", post, "Tables", nil, `{"TableName":`, 400, "InvalidInput")
	add("table body 10 MB", post, "Tables", nil, `{"TableName":"`+strings.Repeat("t", 10<<20)+`"}`, 0)
	add("table exists", post, "Tables", nil, `{"TableName":"`+tb+`"}`, 409, "TableAlreadyExists")
	add("table exists other case", post, "Tables", nil, `{"TableName":"`+strings.ToUpper(tb)+`"}`, 409, "TableAlreadyExists")
	add("delete missing table", del, "Tables('nosuchtable')", nil, "", 404, "ResourceNotFound")
	add("delete table bad syntax", del, "Tables(nosuchtable", nil, "", 0)
	add("delete table bad name", del, "Tables('1bad')", nil, "", 0)

	// ACL and service properties (XML resources).
	si := func(id, perm string) string {
		return "<SignedIdentifier><Id>" + id + "</Id><AccessPolicy><Start>2020-01-01T00:00:00Z</Start><Expiry>2030-01-01T00:00:00Z</Expiry><Permission>" + perm + "</Permission></AccessPolicy></SignedIdentifier>"
	}
	xmlCT := map[string]string{"Content-Type": "application/xml"}
	acl := tb + "?comp=acl"
	add("acl not xml", put, acl, xmlCT, "{}", 400)
	add("acl truncated", put, acl, xmlCT, "<SignedIdentifiers>"+si("a", "r")[:30], 400)
	add("acl six identifiers", put, acl, xmlCT, "<SignedIdentifiers>"+si("a", "r")+si("b", "r")+si("c", "r")+si("d", "r")+si("e", "r")+si("f", "r")+"</SignedIdentifiers>", 400)
	add("acl bad permission", put, acl, xmlCT, "<SignedIdentifiers>"+si("a", "rz")+"</SignedIdentifiers>", 400)
	add("acl id too long", put, acl, xmlCT, "<SignedIdentifiers>"+si(strings.Repeat("i", 65), "r")+"</SignedIdentifiers>", 400)
	props := "?restype=service&comp=properties"
	add("service properties not xml", put, props, xmlCT, "nope", 400)
	add("service properties truncated", put, props, xmlCT, "<StorageServiceProperties><Logging>", 400)
	add("service properties bad cors method", put, props, xmlCT, "<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>FLY</AllowedMethods><AllowedHeaders>*</AllowedHeaders><ExposedHeaders>*</ExposedHeaders><MaxAgeInSeconds>5</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>", 400)

	// Methods a resource does not support.
	for _, m := range []string{put, patch, "MERGE", "FROB"} {
		add("method "+m+" on Tables", m, "Tables", nil, `{"TableName":"x"}`, 0)
	}
	for _, m := range []string{"FROB", post} {
		add("method "+m+" on entity", m, r, nil, `{"s":"x"}`, 0)
	}
	add("method FROB on table", "FROB", tb, nil, "", 0)
	add("method DELETE on Tables", del, "Tables", nil, "", 0)
	add("method PUT on table", put, tb, nil, `{"s":"x"}`, 0)
	add("method DELETE on table query", del, tb+"()", nil, "", 0)
	add("method GET on $batch", get, "$batch", nil, "", 0)
	add("method PUT on $batch", put, "$batch", nil, "x", 0)
	add("method DELETE on acl", del, acl, nil, "", 0)
	add("method PATCH on service", patch, props, nil, "x", 0)
	add("unsigned insert", post, tb, nil, ent(""), 0)
	cs[len(cs)-1].Unsigned = true
	add("x-ms-version garbage", post, tb, map[string]string{"x-ms-version": "2019"}, ent(""), 400, "InvalidHeaderValue")

	// $batch framing: refused as a whole.
	opURL := tg.TableURL + "/" + tb
	ins := batchOp(post, opURL, `{"PartitionKey":"p","RowKey":"b1"}`)
	mp := map[string]string{"Content-Type": "multipart/mixed; boundary=batch_r"}
	add("batch no content type", post, "$batch", map[string]string{"Content-Type": ""}, batch(ins), 400)
	add("batch json content type", post, "$batch", map[string]string{"Content-Type": "application/json"}, batch(ins), 400)
	add("batch missing boundary", post, "$batch", map[string]string{"Content-Type": "multipart/mixed"}, batch(ins), 400)
	add("batch wrong boundary", post, "$batch", map[string]string{"Content-Type": "multipart/mixed; boundary=other"}, batch(ins), 400)
	add("batch garbage body", post, "$batch", mp, "this is not multipart", 400)
	add("batch empty body", post, "$batch", mp, "", 400)
	add("batch truncated", post, "$batch", mp, batch(ins)[:120], 400)
	add("batch changeset missing boundary", post, "$batch", mp, "--batch_r\r\nContent-Type: multipart/mixed\r\n\r\n--changeset_r\r\n\r\n--batch_r--\r\n", 400)
	add("batch nested garbage", post, "$batch", mp, "--batch_r\r\nContent-Type: multipart/mixed; boundary=changeset_r\r\n\r\n--changeset_r\r\nContent-Type: application/http\r\n\r\n\x00\x01\x02 garbage \xff\r\n--changeset_r--\r\n--batch_r--\r\n", 0)
	add("batch nested multipart", post, "$batch", mp, "--batch_r\r\nContent-Type: multipart/mixed; boundary=changeset_r\r\n\r\n--changeset_r\r\nContent-Type: multipart/mixed; boundary=deeper\r\n\r\n--deeper\r\n\r\nx\r\n--deeper--\r\n--changeset_r--\r\n--batch_r--\r\n", 0)
	add("batch 10 MB", post, "$batch", mp, batch(batchOp(post, opURL, `{"PartitionKey":"p","RowKey":"b1","s":"`+strings.Repeat("s", 10<<20)+`"}`)), 0)
	return cs
}

// batchChangesetCases are $batch requests whose framing is sound but whose
// changeset must fail as a unit: the first operation (a valid insert of
// "b1") must not be applied.
func batchChangesetCases(tg *harness.Target) map[string]string {
	opURL := tg.TableURL + "/" + tb
	ins := batchOp(http.MethodPost, opURL, `{"PartitionKey":"p","RowKey":"b1"}`)
	var hundred []string
	for i := range 101 {
		hundred = append(hundred, batchOp(http.MethodPost, opURL, fmt.Sprintf(`{"PartitionKey":"p","RowKey":"c%d"}`, i)))
	}
	return map[string]string{
		"second op not json":           batch(ins, batchOp(http.MethodPost, opURL, "garbage")),
		"second op wrong types":        batch(ins, batchOp(http.MethodPost, opURL, `{"PartitionKey":"p","RowKey":"b2","n@odata.type":"Edm.Int32","n":"x"}`)),
		"second op deep nesting":       batch(ins, batchOp(http.MethodPost, opURL, `{"PartitionKey":"p","RowKey":"b2","x":`+strings.Repeat("[", 50000)+strings.Repeat("]", 50000)+"}")),
		"second op inserts existing":   batch(ins, batchOp(http.MethodPost, opURL, `{"PartitionKey":"p","RowKey":"r"}`)),
		"second op same entity":        batch(ins, batchOp(http.MethodPost, opURL, `{"PartitionKey":"p","RowKey":"b1"}`)),
		"second op other table":        batch(ins, batchOp(http.MethodPost, tg.TableURL+"/othertable", `{"PartitionKey":"p","RowKey":"b2"}`)),
		"second op bad key in url":     batch(ins, batchOp(http.MethodPut, opURL+"(PartitionKey='p',RowKey=", `{"s":"x"}`)),
		"second op unknown method":     batch(ins, batchOp("FROB", opURL, `{}`)),
		"second op garbage line":       batch(ins, "NOT A REQUEST LINE\r\n\r\n"),
		"second op deletes missing":    batch(ins, batchOp(http.MethodDelete, opURL+"(PartitionKey='p',RowKey='missing')", "")),
		"second op bad key characters": batch(ins, batchOp(http.MethodPost, opURL, `{"PartitionKey":"p","RowKey":"a/b"}`)),
		"query inside changeset":       batch(ins, batchOp(http.MethodGet, opURL+"()", "")),
		"101 operations":               batch(hundred...),
	}
}

var subStatus = regexp.MustCompile(`HTTP/1\.1 (\d{3})`)

// TestTableMalformed sends every malformed Table request and checks the
// refusal and that no table or entity changed.
func TestTableMalformed(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		reads := tableFixture(t, tg)
		runBad(t, tg, tableCases(tg), reads)
	})
}

// TestTableBatchAllOrNothing: a changeset with one bad operation is refused
// (a 4xx, or 202 whose only sub-response is the failing operation's 4xx)
// and applies none of its operations.
func TestTableBatchAllOrNothing(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		reads := tableFixture(t, tg)
		before := capture(t, tg, reads)
		for name, body := range batchChangesetCases(tg) {
			t.Run(name, func(t *testing.T) {
				r := send(t, tg, call{Svc: tableSvc, Method: http.MethodPost, Path: "$batch", Body: []byte(body),
					Header: map[string]string{"Content-Type": "multipart/mixed; boundary=batch_r"}})
				switch {
				case r.Status == http.StatusAccepted:
					subs := subStatus.FindAllStringSubmatch(string(r.Body), -1)
					if len(subs) != 1 || subs[0][1] < "400" || subs[0][1] > "499" {
						t.Errorf("202 without a single 4xx sub-response: %s", r)
					}
				default:
					if msg := errorShape(tableSvc, http.MethodPost, r); msg != "" {
						t.Errorf("%s: %s", msg, r)
					}
				}
				after := capture(t, tg, reads)
				same(t, name, before, after)
				before = after
			})
		}
	})
}

// TestTableBodiesOnBodilessRequests: a body on a request that takes none
// does not disturb the operation or the connection it came on.
func TestTableBodiesOnBodilessRequests(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		reads := tableFixture(t, tg)
		before := capture(t, tg, reads)
		junk := []byte(strings.Repeat(`{"junk":1}`, 20000))
		for _, c := range []call{
			{Svc: tableSvc, Method: http.MethodGet, Path: tb + "()"},
			{Svc: tableSvc, Method: http.MethodGet, Path: entityURL("p", "r")},
			{Svc: tableSvc, Method: http.MethodGet, Path: "Tables"},
			{Svc: tableSvc, Method: http.MethodGet, Path: tb + "?comp=acl"},
			{Svc: tableSvc, Method: http.MethodDelete, Path: "Tables('nosuchtable')"},
			{Svc: tableSvc, Method: http.MethodDelete, Path: entityURL("p", "missing"), Header: map[string]string{"If-Match": "*"}},
		} {
			c.Body = junk
			r := send(t, tg, c)
			if r.Status >= 500 {
				t.Errorf("%s %s with a body: %s", c.Method, c.Path, r)
			}
			if r.Status >= 400 {
				if msg := errorShape(c.Svc, c.Method, r); msg != "" {
					t.Errorf("%s %s with a body: %s: %s", c.Method, c.Path, msg, r)
				}
			}
			if r := send(t, tg, call{Svc: tableSvc, Method: http.MethodGet, Path: entityURL("p", "r")}); r.Status != 200 {
				t.Errorf("read after %s %s with a body: %s", c.Method, c.Path, r)
			}
		}
		same(t, "bodies on bodiless requests", before, capture(t, tg, reads))
	})
}
