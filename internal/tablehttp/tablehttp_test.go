package tablehttp

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/lazuli-storage/lazuli/internal/table"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/httpx"
	"github.com/lazuli-storage/lazuli/storage"
)

const base = "http://127.0.0.1:10002/devstoreaccount1"

func newHandler(tb testing.TB) http.Handler {
	tb.Helper()
	eng := memstore.New()
	tb.Cleanup(func() { eng.Close() })
	return handlerOn(eng)
}

// handlerOn returns the Table handler over eng.
func handlerOn(eng storage.Engine) http.Handler {
	d := httpx.Deps{Now: time.Now, BaseURL: func(a string) string { return "http://127.0.0.1:10002/" + a }}
	return httpx.Wrap(auth.Table, New(d, runningTables(eng, table.Options{})), httpx.Options{Silent: true})
}

// runningTables returns the Table service over eng with its purges
// running in the background, as the server runs them.
func runningTables(eng storage.Engine, o table.Options) *table.Service {
	svc := table.New(eng, o)
	go svc.Run(context.Background())
	return svc
}

func do(h http.Handler, method, path string, hdr map[string]string, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, base+"/"+path, strings.NewReader(body))
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func mustStatus(t *testing.T, w *httptest.ResponseRecorder, status int) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d: %s", w.Code, status, w.Body.String())
	}
}

func TestParseResource(t *testing.T) {
	cases := map[string]string{
		"Tables":                                "tables  false false  ",
		"Tables()":                              "tables  false false  ",
		"Tables('abc')":                         "tables abc false false  ",
		"t":                                     " t false false  ",
		"t()":                                   " t false false  ",
		"t(PartitionKey='a',RowKey='b')":        " t true false a b",
		"t(RowKey='b',PartitionKey='a')":        " t true false a b",
		"t(PartitionKey='a%27%27b',RowKey='')":  " t true false a'b ",
		"t(PartitionKey='x,y)',RowKey='(z)')":   " t true false x,y) (z)",
		"t(PartitionKey='a')":                   " t true true a ",
		"t(PartitionKey='a''',RowKey='%E4%B8')": "",
	}
	for in, want := range cases {
		r, err := parseResource(in)
		got := ""
		if err == nil {
			kind := ""
			if r.tables {
				kind = "tables"
			}
			got = strings.Join([]string{kind, r.tableName + r.table, boolStr(r.hasKeys), boolStr(r.partial), r.pk, r.rk}, " ")
			if r.tables {
				got = strings.Join([]string{kind, r.tableName, boolStr(r.hasKeys), boolStr(r.partial), r.pk, r.rk}, " ")
			}
		}
		if in == "t(PartitionKey='a''',RowKey='%E4%B8')" {
			// Invalid UTF-8 survives parsing; key validation rejects it.
			if err != nil {
				t.Errorf("%q: %v", in, err)
			}
			continue
		}
		if got != want {
			t.Errorf("%q: got %q want %q (%v)", in, got, want, err)
		}
	}
	for _, bad := range []string{"t(PartitionKey='a'", "t(PartitionKey=a)", "t(Foo='a')", "t(PartitionKey='a',PartitionKey='b')", "a/b", "Tables('a'", "t(PartitionKey='a'RowKey='b')"} {
		if _, err := parseResource(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func TestHandlerBasics(t *testing.T) {
	h := newHandler(t)
	mustStatus(t, do(h, "POST", "Tables", nil, `{"TableName":"people"}`), 201)
	w := do(h, "POST", "people", nil, `{"PartitionKey":"p","RowKey":"r","N":1}`)
	mustStatus(t, w, 201)
	etag := w.Header().Get("ETag")
	w = do(h, "GET", "people(PartitionKey='p',RowKey='r')", nil, "")
	mustStatus(t, w, 200)
	if w.Header().Get("ETag") != etag || !strings.Contains(w.Body.String(), `"N":1`) {
		t.Fatalf("get: %v %s", w.Header(), w.Body.String())
	}
	mustStatus(t, do(h, "DELETE", "people(PartitionKey='p',RowKey='r')", map[string]string{"If-Match": etag}, ""), 204)
	mustStatus(t, do(h, "GET", "people(PartitionKey='p',RowKey='r')", nil, ""), 404)
	// Unknown verbs and paths: 4xx.
	for _, c := range [][2]string{{"PUT", "Tables"}, {"GET", "$batch"}, {"GET", ""}, {"DELETE", "people"}, {"TRACE", "people(PartitionKey='p',RowKey='r')"}} {
		w := do(h, c[0], c[1], nil, "")
		if w.Code < 400 || w.Code >= 500 {
			t.Errorf("%s %s: %d", c[0], c[1], w.Code)
		}
	}
}

// TestBodiesNeverCause500 sends hostile entity bodies and headers.
func TestBodiesNeverCause500(t *testing.T) {
	h := newHandler(t)
	mustStatus(t, do(h, "POST", "Tables", nil, `{"TableName":"hostile"}`), 201)
	bodies := []string{"", "null", "{}", "{\"PartitionKey\":null,\"RowKey\":null}", "\x00\xff", `{"PartitionKey":"p","RowKey":"r","a@odata.type":5,"a":1}`,
		`{"PartitionKey":"p","RowKey":"r","a@odata.type":"Edm.Binary","a":5}`, `{"PartitionKey":"p","RowKey":"\u0000"}`,
		`{"PartitionKey":"p","RowKey":"r","` + strings.Repeat("x", 300) + `":1}`, strings.Repeat("[", 100000)}
	for _, b := range bodies {
		for _, m := range []string{"POST", "PUT", "MERGE", "PATCH"} {
			path := "hostile"
			if m != "POST" {
				path = "hostile(PartitionKey='p',RowKey='r')"
			}
			w := do(h, m, path, map[string]string{"If-Match": "*"}, b)
			if w.Code >= 500 {
				t.Fatalf("%s %q: %d %s", m, b, w.Code, w.Body.String())
			}
		}
	}
}

func batchOf(parts ...string) string {
	var b strings.Builder
	b.WriteString("--batch_1\r\nContent-Type: multipart/mixed; boundary=cs_1\r\n\r\n")
	for _, p := range parts {
		b.WriteString("--cs_1\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" + p + "\r\n")
	}
	b.WriteString("--cs_1--\r\n--batch_1--\r\n")
	return b.String()
}

func TestParseBatch(t *testing.T) {
	body := batchOf(
		"POST "+base+"/t HTTP/1.1\r\nContent-Type: application/json\r\nContent-ID: 7\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"1\"}",
		"DELETE "+base+"/t(PartitionKey='p',RowKey='2') HTTP/1.1\r\nIf-Match: *\r\n\r\n",
	)
	bb, err := parseBatch("multipart/mixed; boundary=batch_1", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(bb.Changeset) != 2 || bb.Changeset[0].ContentID != "7" || bb.Changeset[1].Method != "DELETE" ||
		string(bb.Changeset[0].Body) != `{"PartitionKey":"p","RowKey":"1"}` || len(bb.Changeset[1].Body) != 0 {
		t.Fatalf("parsed %+v", bb.Changeset)
	}
	for _, bad := range []string{"", "x", "--batch_1--\r\n", batchOf("NOT A REQUEST"), batchOf("GET " + base + "/t HTTP/1.1\r\n\r\n")} {
		if _, err := parseBatch("multipart/mixed; boundary=batch_1", []byte(bad)); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
	if _, err := parseBatch("application/json", []byte(body)); err == nil {
		t.Error("wrong content type accepted")
	}
}

var batchSeeds = []string{
	batchOf("POST " + base + "/t HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"1\"}"),
	batchOf("PUT "+base+"/t(PartitionKey='p',RowKey='1') HTTP/1.1\r\nIf-Match: *\r\n\r\n{\"A\":1}",
		"MERGE "+base+"/t(PartitionKey='p',RowKey='2') HTTP/1.1\r\n\r\n{\"B@odata.type\":\"Edm.Int64\",\"B\":\"5\"}"),
	batchOf("DELETE " + base + "/t(PartitionKey='p',RowKey='1') HTTP/1.1\r\nIf-Match: W/\"datetime'2020-01-01T00%3A00%3A00Z'\"\r\n\r\n"),
	batchOf("POST "+base+"/t HTTP/1.1\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"1\"}", "POST "+base+"/t HTTP/1.1\r\n\r\n{\"PartitionKey\":\"q\",\"RowKey\":\"1\"}"),
	batchOf("POST " + base + "/t(PartitionKey='p',RowKey='1') HTTP/1.1\r\nX-HTTP-Method: MERGE\r\n\r\n{}"),
	"--batch_1\r\nContent-Type: application/http\r\n\r\nGET " + base + "/t(PartitionKey='p',RowKey='1') HTTP/1.1\r\n\r\n\r\n--batch_1--\r\n",
	"--batch_1\r\nContent-Type: multipart/mixed; boundary=cs_1\r\n\r\n--cs_1\r\n",
	"--batch_1\r\n\r\n--batch_1--",
}

// FuzzParseBatch: the multipart parser never panics and fails only with
// Azure 4xx errors.
func FuzzParseBatch(f *testing.F) {
	for _, s := range batchSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		bb, err := parseBatch("multipart/mixed; boundary=batch_1", []byte(body))
		if err != nil {
			e, ok := azerr.As(err)
			if !ok || e.Status < 400 || e.Status >= 500 {
				t.Fatalf("error %v", err)
			}
			return
		}
		if bb.Query == nil && bb.Changeset == nil && len(body) > 0 {
			// An empty changeset is allowed; nothing else to check.
			return
		}
	})
}

// FuzzBatchHandler: a whole $batch request through the handler never
// answers 5xx.
func FuzzBatchHandler(f *testing.F) {
	for _, s := range batchSeeds {
		f.Add(s)
	}
	h := newHandler(f)
	do(h, "POST", "Tables", nil, `{"TableName":"t"}`)
	f.Fuzz(func(t *testing.T, body string) {
		w := do(h, "POST", "$batch", map[string]string{"Content-Type": "multipart/mixed; boundary=batch_1"}, body)
		if w.Code >= 500 {
			t.Fatalf("status %d: %s", w.Code, w.Body.String())
		}
		io.Copy(io.Discard, w.Body)
	})
}

// FuzzEntityBody: entity JSON decoding never panics and fails only with
// 4xx errors.
func FuzzEntityBody(f *testing.F) {
	for _, s := range []string{
		`{"PartitionKey":"p","RowKey":"r","A":1,"B":1.5,"C":"s","D":true}`,
		`{"PartitionKey":"p","RowKey":"r","L@odata.type":"Edm.Int64","L":"123","T@odata.type":"Edm.DateTime","T":"2020-01-01T00:00:00Z"}`,
		`{"PartitionKey":"p","RowKey":"r","G@odata.type":"Edm.Guid","G":"4185404a-5818-48c3-b9be-f217df0dba6f","B@odata.type":"Edm.Binary","B":"AAE="}`,
		`{"PartitionKey":"p","RowKey":"r","N@odata.type":"Edm.Double","N":"NaN"}`,
		`{"a":{"b":[1,2,{}]}}`, `[`, `{"x":1,"x":2}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		be, err := decodeEntity([]byte(body))
		if err != nil {
			e, ok := azerr.As(err)
			if !ok || e.Status < 400 || e.Status >= 500 {
				t.Fatalf("error %v", err)
			}
			return
		}
		w := &entityWriter{level: fullMetadata, baseURL: base, account: "a", table: "t"}
		_ = w
		_ = be
	})
}

func TestJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "tab\there", "nl\n", "ünï", "\u2028", "<&>", "\x7f", "emoji 🎉"} {
		var back string
		out := jsonString(nil, s)
		if err := json.Unmarshal(out, &back); err != nil || back != s {
			t.Errorf("%q -> %s -> %q (%v)", s, out, back, err)
		}
	}
}

// BenchmarkQueryPage1000 measures one Query Entities request returning a
// full page of 1,000 entities through the HTTP handler.
func BenchmarkQueryPage1000(b *testing.B) {
	h := newHandler(b)
	do(h, "POST", "Tables", nil, `{"TableName":"bench"}`)
	for i := 0; i < 1000; i += 100 {
		var parts []string
		for j := i; j < i+100; j++ {
			parts = append(parts, fmt.Sprintf("POST %s/bench HTTP/1.1\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\n\r\n"+
				`{"PartitionKey":"p","RowKey":"%05d","Name":"customer %d","Age":%d,"Balance":%d.5,"Joined@odata.type":"Edm.DateTime","Joined":"2020-01-02T03:04:05Z"}`, base, j, j, j%100, j))
		}
		if w := do(h, "POST", "$batch", map[string]string{"Content-Type": "multipart/mixed; boundary=batch_1"}, batchOf(parts...)); w.Code != 202 || strings.Contains(w.Body.String(), "odata.error") {
			b.Fatalf("load: %d %s", w.Code, w.Body.String())
		}
	}
	path := "bench()?$filter=" + url.QueryEscape("PartitionKey eq 'p'")
	for b.Loop() {
		w := do(h, "GET", path, nil, "")
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}

// TestScanCapContinuation: a filter that matches nothing still answers
// page by page, each request examining at most MaxScan rows and handing
// back a continuation, until the table is exhausted.
func TestScanCapContinuation(t *testing.T) {
	eng := memstore.New()
	defer eng.Close()
	d := httpx.Deps{Now: time.Now, BaseURL: func(a string) string { return "http://127.0.0.1:10002/" + a }}
	h := httpx.Wrap(auth.Table, New(d, runningTables(eng, table.Options{MaxScan: 5})), httpx.Options{Silent: true})
	mustStatus(t, do(h, "POST", "Tables", nil, `{"TableName":"capped"}`), 201)
	for i := 0; i < 23; i++ {
		mustStatus(t, do(h, "POST", "capped", map[string]string{"Prefer": "return-no-content"}, fmt.Sprintf(`{"PartitionKey":"p%d","RowKey":"r%02d","N":%d}`, i%3, i, i)), 204)
	}
	query := "capped()?$filter=" + url.QueryEscape("N eq 22")
	pages, found := 0, 0
	next := ""
	for {
		w := do(h, "GET", query+next, nil, "")
		mustStatus(t, w, 200)
		pages++
		var body struct{ Value []map[string]any }
		json.Unmarshal(w.Body.Bytes(), &body)
		found += len(body.Value)
		npk, nrk := w.Header().Get("x-ms-continuation-NextPartitionKey"), w.Header().Get("x-ms-continuation-NextRowKey")
		if npk == "" {
			break
		}
		next = "&NextPartitionKey=" + url.QueryEscape(npk) + "&NextRowKey=" + url.QueryEscape(nrk)
		if pages > 10 {
			t.Fatal("no end")
		}
	}
	if found != 1 || pages != 5 {
		t.Fatalf("found %d in %d pages, want 1 in 5", found, pages)
	}
}
