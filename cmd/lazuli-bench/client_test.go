package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

// signCases are requests shaped like the ones the workloads send, plus
// corner cases of the canonicalization.
func signCases(a *account) []*call {
	host := &url.URL{Scheme: "http", Host: "acct.blob.example"} // host-style endpoint: empty base path
	blockID := escapeQuery("YmxvY2stMDAwMDAx")                  // base64 with '=' after escaping
	filter := escapeQuery("PartitionKey eq 'p' and RowKey lt 'r0500'")
	etag := `W/"datetime'2024-01-02T03%3A04%3A05.1234567Z'"`
	body := []byte(`{"PartitionKey":"p","RowKey":"r"}`)
	return []*call{
		{op: "Get Blob Service Properties", method: "GET", base: a.Blob, path: "/", query: "restype=service&comp=properties"},
		{op: "Create Container", method: "PUT", base: a.Blob, path: "/c1", query: "restype=container"},
		{op: "Delete Container", method: "DELETE", base: a.Blob, path: "/c1", query: "restype=container"},
		{op: "Put Blob", method: "PUT", base: a.Blob, path: "/c1/w0-1", body: pattern(1024),
			hdr: []string{"X-Ms-Blob-Type", "BlockBlob", "Content-Type", "application/octet-stream"}},
		{op: "Put Blob (If-Match)", method: "PUT", base: a.Blob, path: "/c1/w0", body: pattern(1024),
			hdr: []string{"X-Ms-Blob-Type", "BlockBlob", "Content-Type", "application/octet-stream", "If-Match", `"0x8DC0123456789AB"`}},
		{op: "Get Blob", method: "GET", base: a.Blob, path: "/c1/b7"},
		{op: "Lease Blob", method: "PUT", base: a.Blob, path: "/c1/w3", query: "comp=lease",
			hdr: []string{"X-Ms-Lease-Action", "acquire", "X-Ms-Lease-Duration", "60", "X-Ms-Proposed-Lease-Id", "00000000-0000-4000-8000-000000000003"}},
		{op: "Lease Blob", method: "PUT", base: a.Blob, path: "/c1/w3", query: "comp=lease",
			hdr: []string{"X-Ms-Lease-Action", "release", "X-Ms-Lease-Id", "00000000-0000-4000-8000-000000000003"}},
		{op: "Put Block", method: "PUT", base: a.Blob, path: "/c1/big", query: "comp=block&blockid=" + blockID, body: pattern(4096)},
		{op: "Put Block List", method: "PUT", base: a.Blob, path: "/c1/big", query: "comp=blocklist",
			body: []byte("<BlockList/>"), hdr: []string{"Content-Type", "application/xml"}},
		{op: "Empty body", method: "PUT", base: a.Blob, path: "/c1/empty", body: []byte{}},
		{op: "Host style", method: "GET", base: host, path: "/c1/b", query: "B=3&a=2&a=1&x=%2B+y&z"},
		{op: "Odd headers", method: "GET", base: a.Blob, path: "/c1/b", query: "comp=metadata",
			hdr: []string{"x-ms-meta-zed", "  a   b\t c ", "X-MS-Meta-Quoted", `"a  b"   c`, "x-ms-client-request-id", "r1",
				"Range", "bytes=0-99", "Content-MD5", "abc==", "If-None-Match", "*"}},
		{op: "Create Queue", method: "PUT", base: a.Queue, path: "/q1"},
		{op: "Delete Queue", method: "DELETE", base: a.Queue, path: "/q1"},
		{op: "Put Message", method: "POST", base: a.Queue, path: "/q1/messages", body: []byte(messageBody)},
		{op: "Get Messages", method: "GET", base: a.Queue, path: "/q1/messages", query: "numofmessages=1&visibilitytimeout=30"},
		{op: "Get Queue Metadata", method: "GET", base: a.Queue, path: "/q1", query: "comp=metadata"},
		{op: "Delete Message", method: "DELETE", base: a.Queue, path: "/q1/messages/0b9a1f3e-1c2d-4e5f-8a9b-0c1d2e3f4a5b",
			query: "popreceipt=" + escapeQuery("AgAAAAMAAAAAAAAA+/ab==")},
		{op: "Create Table", method: "POST", base: a.Table, path: "/Tables", body: []byte(`{"TableName":"t1"}`), table: true,
			hdr: []string{"Prefer", "return-no-content"}},
		{op: "Delete Table", method: "DELETE", base: a.Table, path: "/Tables('t1')", table: true},
		{op: "Insert Entity", method: "POST", base: a.Table, path: "/t1", body: body, table: true,
			hdr: []string{"Prefer", "return-no-content"}},
		{op: "Query Entity", method: "GET", base: a.Table, path: entityPath("t1", "p", "r"), table: true},
		{op: "Update Entity", method: "PUT", base: a.Table, path: entityPath("t1", "w0", "r"), body: body, table: true,
			hdr: []string{"If-Match", etag}},
		{op: "Query Entities", method: "GET", base: a.Table, path: "/t1()", query: "$filter=" + filter, table: true},
		{op: "Table ACL", method: "GET", base: a.Table, path: "/t1", query: "comp=acl&timeout=30", table: true,
			hdr: []string{"x-ms-client-request-id", "r2"}},
		{op: "Table empty PUT", method: "PUT", base: a.Table, path: "/t1", query: "comp=acl", table: true},
	}
}

// referenceRequest builds c the way a net/http client does: a URL parsed
// from the full address, headers set on an http.Header, and signed by
// sharedkey.Sign with the given x-ms-date.
func referenceRequest(t *testing.T, tg *target, c *call, date string) *http.Request {
	t.Helper()
	raw := c.base.String() + c.path
	if c.query != "" {
		raw += "?" + c.query
	}
	var body io.Reader
	if c.body != nil {
		body = bytes.NewReader(c.body)
	}
	r, err := http.NewRequest(c.method, raw, body)
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header
	h.Set("X-Ms-Version", tg.version)
	h.Set("X-Ms-Date", date)
	if c.table {
		h.Set("Accept", "application/json;odata=nometadata")
		h.Set("DataServiceVersion", "3.0")
		h.Set("MaxDataServiceVersion", "3.0;NetFx")
		if c.body != nil {
			h.Set("Content-Type", "application/json")
		}
	}
	for i := 0; i+1 < len(c.hdr); i += 2 {
		h.Set(c.hdr[i], c.hdr[i+1])
	}
	if err := sharedkey.Sign(r, tg.acct.Name, tg.acct.Key, c.table); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSignerMatchesSharedKey checks the bench's own string-to-sign against
// sharedkey.StringToSign of an equivalent *http.Request, and the request
// it writes on the wire against what net/http writes for that request:
// same request line, same headers (Content-Length included) and the same
// Authorization.
func TestSignerMatchesSharedKey(t *testing.T) {
	a, err := parseConnectionString("UseDevelopmentStorage=true")
	if err != nil {
		t.Fatal(err)
	}
	tg := newTarget("sign", a, defaultVersion, 1, time.Minute)
	pc := &conn{sg: newSigner(a.Name, a.Key)}
	for _, c := range signCases(a) {
		t.Run(c.op, func(t *testing.T) {
			hdr := tg.requestHeaders(pc, c)
			date := getField(hdr, "x-ms-date")
			got := string(pc.sg.stringToSign(c.method, c.base.Path, c.path, c.query, hdr, c.table))
			ref := referenceRequest(t, tg, c, date)
			want := sharedkey.StringToSign(ref, a.Name, sharedkey.Form{Table: c.table})
			if got != want {
				t.Fatalf("string-to-sign\n got %q\nwant %q", got, want)
			}

			// The wire: ours and net/http's, both parsed as a server would.
			var mine bytes.Buffer
			pc.bw = bufio.NewWriter(&mine)
			if err := tg.writeRequest(pc, c.base.Host, c); err != nil {
				t.Fatal(err)
			}
			var theirs bytes.Buffer
			if err := ref.Write(&theirs); err != nil {
				t.Fatal(err)
			}
			m, err := http.ReadRequest(bufio.NewReader(&mine))
			if err != nil {
				t.Fatalf("parsing our request %q: %v", mine.String(), err)
			}
			n, err := http.ReadRequest(bufio.NewReader(&theirs))
			if err != nil {
				t.Fatal(err)
			}
			if m.Method != n.Method || m.RequestURI != n.RequestURI || m.Host != n.Host || m.ContentLength != n.ContentLength {
				t.Errorf("request line: ours %s %s host %s length %d, net/http %s %s host %s length %d",
					m.Method, m.RequestURI, m.Host, m.ContentLength, n.Method, n.RequestURI, n.Host, n.ContentLength)
			}
			if m.Header.Get("X-Ms-Date") != date {
				// A second boundary passed between the two writes: sign
				// the reference again with our date.
				ref = referenceRequest(t, tg, c, m.Header.Get("X-Ms-Date"))
				theirs.Reset()
				_ = ref.Write(&theirs)
				n, _ = http.ReadRequest(bufio.NewReader(&theirs))
			}
			m.Header.Del("User-Agent")
			n.Header.Del("User-Agent")
			if fmt.Sprint(m.Header) != fmt.Sprint(n.Header) {
				t.Errorf("headers\n ours    %v\n net/http %v", m.Header, n.Header)
			}
			mb, _ := io.ReadAll(m.Body)
			if !bytes.Equal(mb, c.body) {
				t.Errorf("body: %d bytes, want %d", len(mb), len(c.body))
			}
			// And the server's view of our request verifies.
			sts := sharedkey.StringToSign(m, a.Name, sharedkey.Form{Table: c.table})
			_, _, sig, err := sharedkey.ParseAuthorization(m.Header.Get("Authorization"))
			if err != nil || !sharedkey.SignatureMatches(a.Key, sts, sig) {
				t.Errorf("signature does not verify (%v) for %q", err, sts)
			}
		})
	}
}

// testTarget returns a target whose three services are srv.
func testTarget(t *testing.T, srv *httptest.Server) *target {
	t.Helper()
	a, err := parseConnectionString("AccountName=devstoreaccount1;AccountKey=" + devKey +
		";BlobEndpoint=" + srv.URL + "/devstoreaccount1;QueueEndpoint=" + srv.URL + "/devstoreaccount1;TableEndpoint=" + srv.URL + "/devstoreaccount1")
	if err != nil {
		t.Fatal(err)
	}
	tg := newTarget("test", a, defaultVersion, 2, 10*time.Second)
	t.Cleanup(tg.close)
	return tg
}

// countConns counts the connections a test server accepts.
func countConns(srv *httptest.Server) *atomic.Int64 {
	var n atomic.Int64
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	return &n
}

func TestChunkedBodies(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Checksum")
		w.Header().Set("ETag", `"e1"`)
		status := http.StatusOK
		if r.URL.Query().Get("fail") != "" {
			status = http.StatusConflict
		}
		w.WriteHeader(status)
		if status != http.StatusOK {
			_, _ = io.WriteString(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>LeaseAlreadyPresent</Code>`)
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, `<Message>There is already a lease present.`+"\n"+`RequestId:9</Message></Error>`)
			return
		}
		for i := range 5 {
			_, _ = fmt.Fprintf(w, "part %d;", i)
			w.(http.Flusher).Flush()
		}
		_, _ = w.Write(bytes.Repeat([]byte("x"), 100000)) // larger than a buffer
		w.Header().Set("X-Checksum", "abc")
	}))
	conns := countConns(srv)
	srv.Start()
	defer srv.Close()
	tg := testTarget(t, srv)
	want := "part 0;part 1;part 2;part 3;part 4;" + strings.Repeat("x", 100000)
	for i := range 3 {
		var buf bytes.Buffer
		h, err := tg.do(&call{op: "Get", method: "GET", base: tg.acct.Blob, path: "/c/b", want: 200}, &buf)
		if err != nil {
			t.Fatal(err)
		}
		if buf.String() != want {
			t.Fatalf("request %d: body of %d bytes, want %d", i, buf.Len(), len(want))
		}
		if h.Get("etag") != `"e1"` || h.Get("Transfer-Encoding") != "chunked" {
			t.Fatalf("headers %q", h)
		}
		// Discarded bodies must be consumed in full too.
		if _, err := tg.do(&call{op: "Get", method: "GET", base: tg.acct.Blob, path: "/c/b", want: 200}, nil); err != nil {
			t.Fatal(err)
		}
		_, err = tg.do(&call{op: "Lease", method: "PUT", base: tg.acct.Blob, path: "/c/b", query: "fail=1", want: 201}, nil)
		if err == nil || err.Error() != "Lease (PUT /c/b): 409 LeaseAlreadyPresent: There is already a lease present." {
			t.Fatalf("error %v", err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1 reused throughout", n)
	}
}

// rawServer answers every connection with the handler's raw bytes, one
// request per connection, then closes it.
func rawServer(t *testing.T, answer func(req *http.Request) string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		c, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		_, _ = rw.WriteString(answer(r))
		_ = rw.Flush()
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRawResponses(t *testing.T) {
	srv := rawServer(t, func(r *http.Request) string {
		switch r.URL.Query().Get("case") {
		case "interim":
			return "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nETag: \"e2\"\r\nContent-Length: 2\r\n\r\nok"
		case "extensions":
			return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
				"3;name=value\r\nabc\r\nA\r\n0123456789\r\n0\r\nX-Trailer: 1\r\nX-Other: 2\r\n\r\n"
		case "until-close":
			return "HTTP/1.1 200 OK\r\nX-Ms-Request-Id: 7\r\n\r\nbody until the server closes"
		case "http10":
			return "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello"
		case "short":
			return "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"
		case "bad-chunk":
			return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
		}
		return "garbage\r\n\r\n"
	})
	tg := testTarget(t, srv)
	get := func(q string, want int) (string, header, error) {
		var buf bytes.Buffer
		h, err := tg.do(&call{op: q, method: "GET", base: tg.acct.Blob, path: "/x", query: "case=" + q, want: want}, &buf)
		return buf.String(), h, err
	}
	for _, tc := range []struct {
		q, body string
		want    int
	}{
		{"interim", "ok", 201},
		{"extensions", "abc0123456789", 200},
		{"until-close", "body until the server closes", 200},
		{"http10", "hello", 200},
	} {
		body, h, err := get(tc.q, tc.want)
		if err != nil || body != tc.body {
			t.Errorf("%s: %q %v, want %q", tc.q, body, err, tc.body)
		}
		if tc.q == "interim" && h.Get("ETag") != `"e2"` {
			t.Errorf("interim: headers %q", h)
		}
	}
	for _, q := range []string{"short", "bad-chunk", "garbage"} {
		if _, _, err := get(q, 200); err == nil {
			t.Errorf("%s: no error", q)
		} else if re, ok := err.(*requestError); !ok || (re.Status != 0 && q != "short" && q != "bad-chunk") {
			t.Errorf("%s: %v", q, err)
		}
	}
}

func TestConnectionClose(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("close") != "" {
			w.Header().Set("Connection", "close")
		}
		w.WriteHeader(http.StatusCreated)
	}))
	conns := countConns(srv)
	srv.Start()
	defer srv.Close()
	tg := testTarget(t, srv)
	for range 3 {
		if _, err := tg.do(&call{op: "Put", method: "PUT", base: tg.acct.Blob, path: "/c/b", query: "close=1", want: 201}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections for 3 Connection: close answers, want 3", n)
	}
	for range 3 {
		if _, err := tg.do(&call{op: "Put", method: "PUT", base: tg.acct.Blob, path: "/c/b", want: 201}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n != 4 {
		t.Errorf("%d connections, want 4 (keep-alive after the closed ones)", n)
	}
	if r := tg.retries.Load(); r != 0 {
		t.Errorf("%d retries, want none", r)
	}
}

// TestStaleConnectionRetry has the server close idle connections quickly,
// as Node.js does after 5 s: a request on such a connection is sent again
// on a new one, whatever its method.
func TestStaleConnectionRetry(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusCreated)
	}))
	srv.Config.IdleTimeout = 30 * time.Millisecond
	conns := countConns(srv)
	srv.Start()
	defer srv.Close()
	tg := testTarget(t, srv)
	for i, m := range []string{"POST", "DELETE", "PUT", "POST"} {
		c := &call{op: "Op", method: m, base: tg.acct.Queue, path: "/q/messages", body: []byte(messageBody), want: 201}
		if m == "DELETE" {
			c.body = nil
		}
		if _, err := tg.do(c, nil); err != nil {
			t.Fatalf("request %d (%s): %v", i, m, err)
		}
		time.Sleep(150 * time.Millisecond) // the server closes the connection meanwhile
	}
	if n := requests.Load(); n != 4 {
		t.Errorf("server saw %d requests, want 4", n)
	}
	if n, r := conns.Load(), tg.retries.Load(); n != 4 || r != 3 {
		t.Errorf("%d connections and %d retries, want 4 and 3", n, r)
	}

	// Connections idle past the pool's limit are dropped before use, not
	// retried.
	tg2 := testTarget(t, srv)
	tg2.idleTimeout = 50 * time.Millisecond
	for range 2 {
		if _, err := tg2.do(&call{op: "Op", method: "DELETE", base: tg2.acct.Blob, path: "/x", want: 201}, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(80 * time.Millisecond)
	}
	if d, r := tg2.dials.Load(), tg2.retries.Load(); d != 2 || r != 0 {
		t.Errorf("%d dials and %d retries, want 2 and 0", d, r)
	}
}

// TestTimeout checks that a server that never answers fails the request
// after the timeout, without a retry.
func TestTimeout(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-block
	}))
	defer srv.Close()
	defer close(block)
	tg := testTarget(t, srv)
	tg.timeout = 100 * time.Millisecond
	start := time.Now()
	_, err := tg.do(&call{op: "Get", method: "GET", base: tg.acct.Blob, path: "/x", want: 200}, nil)
	if err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("error %v, want a timeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	if tg.retries.Load() != 0 {
		t.Error("timed-out request was retried")
	}
}

func TestHeaderGet(t *testing.T) {
	h := header("ETag:\"x\"\nx-ms-error-code:ServerBusy\nX-Ms-Continuation-NextPartitionKey:\nContent-Length:0\n")
	for name, want := range map[string]string{"etag": `"x"`, "X-Ms-Error-Code": "ServerBusy",
		"x-ms-continuation-NextPartitionKey": "", "content-length": "0", "missing": "", "ETa": ""} {
		if got := h.Get(name); got != want {
			t.Errorf("Get(%q) = %q, want %q", name, got, want)
		}
	}
}

// BenchmarkSignerOnly measures the string-to-sign and HMAC of one Table
// insert.
func BenchmarkSignerOnly(b *testing.B) {
	a, _ := parseConnectionString("UseDevelopmentStorage=true")
	tg := newTarget("local", a, defaultVersion, 1, time.Minute)
	pc := &conn{sg: newSigner(a.Name, a.Key)}
	c := &call{method: "POST", base: a.Table, path: "/t1", body: []byte("{}"), table: true, hdr: []string{"Prefer", "return-no-content"}}
	b.ReportAllocs()
	for b.Loop() {
		hdr := tg.requestHeaders(pc, c)
		pc.sg.sign(c.method, c.base.Path, c.path, c.query, hdr, c.table)
	}
}

// TestCallAccepts: a call takes its expected status, and with any2xx any
// success (Create Table or Insert Entity answered 201 with a body although
// the request prefers no content), but never an error status.
func TestCallAccepts(t *testing.T) {
	exact := &call{want: 204}
	any := &call{want: 204, any2xx: true}
	for _, tc := range []struct {
		c      *call
		status int
		want   bool
	}{
		{exact, 204, true}, {exact, 201, false}, {exact, 409, false},
		{any, 204, true}, {any, 201, true}, {any, 200, true}, {any, 409, false}, {any, 302, false}, {any, 500, false},
	} {
		if got := tc.c.accepts(tc.status); got != tc.want {
			t.Errorf("call{want: %d, any2xx: %v}.accepts(%d) = %v, want %v", tc.c.want, tc.c.any2xx, tc.status, got, tc.want)
		}
	}
}

// A stale connection whose redial fails reports the dial error (it was
// lost to a shadowed variable, and the request went out on no connection).
func TestStaleConnectionRedialFails(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
	}))
	srv.Config.IdleTimeout = 30 * time.Millisecond
	srv.Start()
	defer srv.Close()
	tg := testTarget(t, srv)
	c := &call{op: "Op", method: "DELETE", base: tg.acct.Queue, path: "/q", want: 201}
	if _, err := tg.do(c, nil); err != nil {
		t.Fatal(err)
	}
	srv.Listener.Close()
	time.Sleep(150 * time.Millisecond) // the server closes the idle connection meanwhile
	_, err := tg.do(c, nil)
	var re *requestError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "connecting") {
		t.Fatalf("got %v, want the failed redial", err)
	}
}
