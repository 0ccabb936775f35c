package tablehttp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/internal/httpx"
	"github.com/lazuli-storage/lazuli/internal/table"
	"github.com/lazuli-storage/lazuli/storage"
)

// The workload benchmarks drive the Table requests of lazuli's load
// generator through the wrapped handler, with the authorizer in place (as
// the account owner), so that ns/op and allocs/op are the server's cost of
// one request minus the network.

// benchEntityProps are the properties after the keys of every workload
// entity.
const benchEntityProps = `"Name":"lazuli benchmark entity","Count":12345,"Ratio":0.5,"Active":true,` +
	`"Payload":"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"}`

func benchEntityJSON(pk, rk string) []byte {
	return []byte(`{"PartitionKey":"` + pk + `","RowKey":"` + rk + `",` + benchEntityProps)
}

func benchEngines(b *testing.B) []struct {
	name string
	eng  storage.Engine
} {
	sq, err := sqlitestore.Open(sqlitestore.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	mem := memstore.New()
	b.Cleanup(func() { sq.Close(); mem.Close() })
	return []struct {
		name string
		eng  storage.Engine
	}{{"mem", mem}, {"sqlite", sq}}
}

func benchHandler(eng storage.Engine) http.Handler {
	d := httpx.Deps{Auth: auth.New(auth.Config{}), Now: time.Now,
		BaseURL: func(a string) string { return "http://127.0.0.1:10002/" + a }}
	return httpx.Wrap(auth.Table, New(d, runningTables(eng, table.Options{})), httpx.Options{Silent: true})
}

// discardWriter is a ResponseWriter that keeps the status and headers and
// counts the body.
type discardWriter struct {
	hdr    http.Header
	status int
	n      int
}

func (w *discardWriter) Header() http.Header { return w.hdr }
func (w *discardWriter) WriteHeader(c int) {
	if w.status == 0 {
		w.status = c
	}
}
func (w *discardWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	w.n += len(b)
	return len(b), nil
}

func (w *discardWriter) reset() {
	clear(w.hdr)
	w.status, w.n = 0, 0
}

// benchRequest builds a request the way net/http's server hands one over.
func benchRequest(method, path, rawQuery string, hdr map[string]string, body []byte) *http.Request {
	u := &url.URL{Scheme: "http", Host: "127.0.0.1:10002", Path: "/devstoreaccount1/" + path, RawQuery: rawQuery}
	if p, err := url.PathUnescape(u.Path); err == nil {
		u.RawPath = u.Path
		u.Path = p
	}
	r := &http.Request{Method: method, URL: u, Host: u.Host, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, RemoteAddr: "127.0.0.1:40000", RequestURI: u.RequestURI()}
	r.Header.Set("X-Ms-Version", "2025-11-05")
	r.Header.Set("X-Ms-Date", time.Now().UTC().Format(http.TimeFormat))
	r.Header.Set("Accept", "application/json;odata=minimalmetadata")
	r.Header.Set("Authorization", "SharedKey devstoreaccount1:x")
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	if body != nil {
		r.ContentLength = int64(len(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	r.Body = http.NoBody
	return r
}

func serveBench(b *testing.B, h http.Handler, r *http.Request, body []byte, w *discardWriter, want int) {
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	w.reset()
	h.ServeHTTP(w, r)
	if w.status != want {
		b.Fatalf("%s %s: status %d, want %d", r.Method, r.URL, w.status, want)
	}
}

// reportCPU reports the process CPU time per operation since start.
func reportCPU(b *testing.B, start time.Duration) {
	if used := processCPU() - start; start > 0 && b.N > 0 {
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkWorkloadQueryPartition is the partition query workload: 500 of
// a 1,000-entity partition, one page, at each metadata level.
func BenchmarkWorkloadQueryPartition(b *testing.B) {
	for _, e := range benchEngines(b) {
		h := benchHandler(e.eng)
		w := &discardWriter{hdr: http.Header{}}
		serveBench(b, h, benchRequest("POST", "Tables", "", map[string]string{"Prefer": "return-no-content"}, nil), []byte(`{"TableName":"qry"}`), w, 204)
		for i := 0; i < 1000; i++ {
			body := benchEntityJSON("p", fmt.Sprintf("r%04d", i))
			serveBench(b, h, benchRequest("POST", "qry", "", map[string]string{"Prefer": "return-no-content"}, body), body, w, 204)
		}
		query := "$filter=" + url.QueryEscape("PartitionKey eq 'p' and RowKey lt 'r0500'")
		for _, level := range []string{"nometadata", "minimalmetadata", "fullmetadata"} {
			b.Run(e.name+"/"+level, func(b *testing.B) {
				r := benchRequest("GET", "qry()", query, map[string]string{"Accept": "application/json;odata=" + level}, nil)
				b.ReportAllocs()
				cpu := processCPU()
				for b.Loop() {
					serveBench(b, h, r, nil, w, 200)
				}
				reportCPU(b, cpu)
			})
		}
	}
}

// benchSeq makes table names unique across repeated runs (-count).
var benchSeq int

// BenchmarkWorkloadInsert is Insert Entity with Prefer: return-no-content,
// a new RowKey each time.
func BenchmarkWorkloadInsert(b *testing.B) {
	for _, e := range benchEngines(b) {
		b.Run(e.name, func(b *testing.B) {
			h := benchHandler(e.eng)
			w := &discardWriter{hdr: http.Header{}}
			benchSeq++
			name := "ins" + strconv.Itoa(benchSeq)
			serveBench(b, h, benchRequest("POST", "Tables", "", map[string]string{"Prefer": "return-no-content"}, nil), []byte(`{"TableName":"`+name+`"}`), w, 204)
			head := []byte(`{"PartitionKey":"w1","RowKey":"`)
			tail := []byte(`",` + benchEntityProps)
			n := 0
			r := benchRequest("POST", name, "", map[string]string{"Prefer": "return-no-content"}, []byte("{}"))
			b.ReportAllocs()
			cpu := processCPU()
			defer reportCPU(b, cpu)
			for b.Loop() {
				n++
				body := make([]byte, 0, len(head)+len(tail)+12)
				body = append(body, head...)
				body = strconv.AppendInt(body, int64(n), 10)
				body = append(body, tail...)
				r.ContentLength = int64(len(body))
				r.Header["Content-Length"][0] = strconv.Itoa(len(body))
				serveBench(b, h, r, body, w, 204)
			}
		})
	}
}

// BenchmarkWorkloadReplaceIfMatch is Update Entity (PUT) with the If-Match
// of the previous answer.
func BenchmarkWorkloadReplaceIfMatch(b *testing.B) {
	for _, e := range benchEngines(b) {
		b.Run(e.name, func(b *testing.B) {
			h := benchHandler(e.eng)
			w := &discardWriter{hdr: http.Header{}}
			benchSeq++
			name := "rep" + strconv.Itoa(benchSeq)
			serveBench(b, h, benchRequest("POST", "Tables", "", map[string]string{"Prefer": "return-no-content"}, nil), []byte(`{"TableName":"`+name+`"}`), w, 204)
			body := benchEntityJSON("w1", "r")
			serveBench(b, h, benchRequest("POST", name, "", map[string]string{"Prefer": "return-no-content"}, body), body, w, 204)
			etag := w.hdr.Get("ETag")
			r := benchRequest("PUT", name+"(PartitionKey='w1',RowKey='r')", "", map[string]string{"If-Match": etag}, body)
			b.ReportAllocs()
			cpu := processCPU()
			defer reportCPU(b, cpu)
			for b.Loop() {
				r.Header["If-Match"][0] = etag
				serveBench(b, h, r, body, w, 204)
				if etag = w.hdr.Get("ETag"); etag == "" {
					b.Fatal("no ETag")
				}
			}
		})
	}
}

// BenchmarkAppendRows renders the 500 entities of the partition query
// workload from their stored records, without the engine or HTTP: the
// per-row cost of the JSON encoder at each metadata level.
func BenchmarkAppendRows(b *testing.B) {
	eng := memstore.New()
	defer eng.Close()
	h := benchHandler(eng)
	w := &discardWriter{hdr: http.Header{}}
	serveBench(b, h, benchRequest("POST", "Tables", "", map[string]string{"Prefer": "return-no-content"}, nil), []byte(`{"TableName":"qry"}`), w, 204)
	for i := 0; i < 500; i++ {
		body := benchEntityJSON("p", fmt.Sprintf("r%04d", i))
		serveBench(b, h, benchRequest("POST", "qry", "", map[string]string{"Prefer": "return-no-content"}, body), body, w, 204)
	}
	var page table.RowPage
	if err := table.New(eng, table.Options{}).QueryRows(context.Background(), "devstoreaccount1", "qry", table.Query{}, &page, 0, nil); err != nil || page.Len() != 500 {
		b.Fatal(page.Len(), err)
	}
	for _, level := range []metadata{noMetadata, minimalMetadata, fullMetadata} {
		b.Run(strconv.Itoa(int(level)), func(b *testing.B) {
			ew := &entityWriter{level: level, baseURL: "http://127.0.0.1:10002/devstoreaccount1", account: "devstoreaccount1", table: "qry"}
			var out []byte
			b.ReportAllocs()
			for b.Loop() {
				out = out[:0]
				for i := range page.Len() {
					out = ew.appendRow(out, page.Row(i))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*page.Len()), "ns/row")
		})
	}
}
