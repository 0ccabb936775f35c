package console_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/console"
	"github.com/lazuli-storage/lazuli/internal/server"
)

// otherKey is the key of the second account of the tests.
var otherKey = []byte("another account's key, 32 bytes!")

// env is a lazuli (in memory, no listeners) with a console over its
// service handlers; seen records the requests the services received.
type env struct {
	c    http.Handler
	srv  *server.Server
	mu   sync.Mutex
	seen []*http.Request
}

func newEnv(t *testing.T, mod func(*console.Config)) *env {
	t.Helper()
	other := auth.Account{Name: "other", Keys: [][]byte{otherKey}}
	s, err := server.New(context.Background(), server.Config{InMemory: true, Accounts: []auth.Account{other}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	e := &env{srv: s}
	handlers := map[auth.Service]http.Handler{}
	for _, svc := range []auth.Service{auth.Blob, auth.Queue, auth.Table, auth.File} {
		h := s.Handler(svc)
		handlers[svc] = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			e.mu.Lock()
			e.seen = append(e.seen, r.Clone(r.Context()))
			e.mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}
	cfg := console.Config{Accounts: []auth.Account{auth.DevelopmentAccount(), other}, Handlers: handlers}
	if mod != nil {
		mod(&cfg)
	}
	e.c = console.New(cfg)
	return e
}

func (e *env) last(t *testing.T) *http.Request {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.seen) == 0 {
		t.Fatal("no request reached a service")
	}
	return e.seen[len(e.seen)-1]
}

func (e *env) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.seen)
}

// do sends a request as the console's page does.
func (e *env) do(t *testing.T, method, target string, body []byte, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	r := httptest.NewRequest(method, target, rd)
	r.Host = "127.0.0.1:10010"
	r.Header.Set(console.HeaderName, "1")
	for k, v := range hdr {
		if v == "" {
			r.Header.Del(k)
		} else {
			r.Header[k] = []string{v}
		}
	}
	w := httptest.NewRecorder()
	e.c.ServeHTTP(w, r)
	return w
}

func wantStatus(t *testing.T, w *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	if w.Code != status || w.Header().Get("X-Ms-Error-Code") != code {
		t.Fatalf("got %d %q, want %d %q; body %s", w.Code, w.Header().Get("X-Ms-Error-Code"), status, code, w.Body)
	}
}

// TestProxyActsAsTheAccount: requests through the proxy are signed as the
// account of their path and reach only that account's data, with the
// service's own answers (status, headers, body).
func TestProxyActsAsTheAccount(t *testing.T) {
	e := newEnv(t, nil)
	wantStatus(t, e.do(t, "PUT", "/api/blob/devstoreaccount1/box?restype=container", nil, nil), 201, "")
	got := e.last(t)
	if a := got.Header.Get("Authorization"); !strings.HasPrefix(a, "SharedKey devstoreaccount1:") {
		t.Fatalf("Authorization %q", a)
	}
	if got.URL.Path != "/devstoreaccount1/box" || got.Host != "127.0.0.1" {
		t.Fatalf("service saw %s %s", got.Host, got.URL)
	}
	wantStatus(t, e.do(t, "PUT", "/api/blob/other/box2?restype=container", nil, nil), 201, "")
	w := e.do(t, "GET", "/api/blob/devstoreaccount1/?comp=list", nil, nil)
	wantStatus(t, w, 200, "")
	if !strings.Contains(w.Body.String(), "<Name>box</Name>") || strings.Contains(w.Body.String(), "box2") {
		t.Fatalf("listing %s", w.Body)
	}
	if w.Header().Get("X-Ms-Request-Id") == "" || w.Header().Get("Content-Security-Policy") == "" {
		t.Fatalf("headers %v", w.Header())
	}
	// The service's errors come back as they are.
	wantStatus(t, e.do(t, "PUT", "/api/blob/devstoreaccount1/box?restype=container", nil, nil), 409, "ContainerAlreadyExists")
}

// TestProxySignsEveryService: Blob, Queue and File take the Shared Key
// layout, Table its own; each service accepts the proxy's signature.
func TestProxySignsEveryService(t *testing.T) {
	e := newEnv(t, nil)
	wantStatus(t, e.do(t, "PUT", "/api/queue/devstoreaccount1/que", nil, nil), 201, "")
	w := e.do(t, "POST", "/api/queue/devstoreaccount1/que/messages", []byte("<QueueMessage><MessageText>hi</MessageText></QueueMessage>"), map[string]string{"Content-Type": "application/xml"})
	wantStatus(t, w, 201, "")
	w = e.do(t, "POST", "/api/table/devstoreaccount1/Tables", []byte(`{"TableName":"tb1"}`),
		map[string]string{"Content-Type": "application/json", "Accept": "application/json;odata=nometadata", "Prefer": "return-no-content"})
	wantStatus(t, w, 204, "")
	w = e.do(t, "POST", "/api/table/devstoreaccount1/tb1", []byte(`{"PartitionKey":"p","RowKey":"r","N":1}`),
		map[string]string{"Content-Type": "application/json", "Accept": "application/json;odata=nometadata", "Prefer": "return-no-content"})
	wantStatus(t, w, 204, "")
	w = e.do(t, "GET", "/api/table/devstoreaccount1/tb1()?$filter="+strings.ReplaceAll("N eq 1", " ", "%20"), nil, map[string]string{"Accept": "application/json;odata=nometadata"})
	wantStatus(t, w, 200, "")
	if !strings.Contains(w.Body.String(), `"RowKey":"r"`) {
		t.Fatalf("query %s", w.Body)
	}
	wantStatus(t, e.do(t, "PUT", "/api/file/devstoreaccount1/sh1?restype=share", nil, nil), 201, "")
	w = e.do(t, "PUT", "/api/file/devstoreaccount1/sh1/f", nil, map[string]string{"X-Ms-Type": "file", "X-Ms-Content-Length": "3"})
	wantStatus(t, w, 201, "")
	w = e.do(t, "GET", "/api/file/devstoreaccount1/sh1?comp=listhandles", nil, nil)
	wantStatus(t, w, 200, "")
}

// TestProxyHeaders: the browser's own headers (cookies, the admin
// listener's credentials, Origin) stay with the console; the operation's
// headers pass; the date is the configured clock's and the version
// defaults to lazuli's.
func TestProxyHeaders(t *testing.T) {
	at := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	other := auth.Account{Name: "other", Keys: [][]byte{otherKey}}
	s, err := server.New(context.Background(), server.Config{InMemory: true, Accounts: []auth.Account{other}, Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var seen *http.Request
	blob := s.Handler(auth.Blob)
	c := console.New(console.Config{Accounts: []auth.Account{auth.DevelopmentAccount()}, Now: func() time.Time { return at },
		Handlers: map[auth.Service]http.Handler{auth.Blob: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = r.Clone(r.Context())
			blob.ServeHTTP(w, r)
		})}})
	r := httptest.NewRequest("PUT", "/api/blob/devstoreaccount1/ctr?restype=container", nil)
	r.Host = "localhost:10010"
	r.Header.Set(console.HeaderName, "1")
	r.Header.Set("Origin", "http://localhost:10010")
	r.Header.Set("Cookie", "session=1")
	r.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("devstoreaccount1:x")))
	r.Header["x-ms-meta-MyKey"] = []string{"v"}
	r.Header.Set("X-Ms-Date", "Mon, 01 Jan 2001 00:00:00 GMT")
	w := httptest.NewRecorder()
	c.ServeHTTP(w, r)
	wantStatus(t, w, 201, "")
	if seen.Header.Get("Cookie") != "" || seen.Header.Get("Origin") != "" || !strings.HasPrefix(seen.Header.Get("Authorization"), "SharedKey ") {
		t.Fatalf("forwarded %v", seen.Header)
	}
	if d := seen.Header.Get("X-Ms-Date"); d != "Tue, 06 May 2031 07:08:09 GMT" {
		t.Fatalf("x-ms-date %q", d)
	}
	if v := seen.Header.Get("X-Ms-Version"); v == "" {
		t.Fatal("no x-ms-version")
	}
	// Metadata names keep the case the page lists, whatever case the
	// header names arrive in.
	r = httptest.NewRequest("PUT", "/api/blob/devstoreaccount1/ctr?restype=container&comp=metadata", nil)
	r.Host = "localhost:10010"
	r.Header.Set(console.HeaderName, "1")
	r.Header.Set("X-Ms-Meta-Mykey", "v")
	r.Header.Set("x-ms-meta-lower", "w")
	r.Header.Set(console.MetaNamesHeader, "MyKey, LOWER")
	w = httptest.NewRecorder()
	c.ServeHTTP(w, r)
	wantStatus(t, w, 200, "")
	if seen.Header.Get(console.MetaNamesHeader) != "" {
		t.Fatal("the console's own header was forwarded")
	}
	r = httptest.NewRequest("GET", "/api/blob/devstoreaccount1/ctr?restype=container", nil)
	r.Host = "localhost:10010"
	r.Header.Set(console.HeaderName, "1")
	w = httptest.NewRecorder()
	c.ServeHTTP(w, r)
	wantStatus(t, w, 200, "")
	if _, ok := w.Header()["X-Ms-Meta-Mykey"]; ok {
		t.Fatalf("metadata name lost its case: %v", w.Header())
	}
	// The names as written, which an http.Header lookup would canonicalize.
	names := map[string]bool{}
	for k := range w.Header() {
		names[k] = true
	}
	if !names["x-ms-meta-MyKey"] || !names["x-ms-meta-LOWER"] {
		t.Fatalf("metadata %v", w.Header())
	}
}

// TestProxyPathMapping: blob names travel as encoded on the page's URL;
// what the listing shows is the name decoded once.
func TestProxyPathMapping(t *testing.T) {
	e := newEnv(t, nil)
	wantStatus(t, e.do(t, "PUT", "/api/blob/devstoreaccount1/ctr?restype=container", nil, nil), 201, "")
	w := e.do(t, "PUT", "/api/blob/devstoreaccount1/ctr/dir/a%20b%2Bc%25.txt", []byte("x"), map[string]string{"X-Ms-Blob-Type": "BlockBlob"})
	wantStatus(t, w, 201, "")
	if p := e.last(t).URL.EscapedPath(); p != "/devstoreaccount1/ctr/dir/a%20b%2Bc%25.txt" {
		t.Fatalf("service saw %s", p)
	}
	w = e.do(t, "GET", "/api/blob/devstoreaccount1/ctr?restype=container&comp=list&prefix=dir%2F", nil, nil)
	if !strings.Contains(w.Body.String(), "<Name>dir/a b+c%.txt</Name>") {
		t.Fatalf("listing %s", w.Body)
	}
	w = e.do(t, "GET", "/api/blob/devstoreaccount1/ctr/dir/a%20b%2Bc%25.txt", nil, nil)
	wantStatus(t, w, 200, "")
	if w.Body.String() != "x" {
		t.Fatalf("body %q", w.Body)
	}
}

// TestProxyRefusals: what the console turns down itself, before any
// service sees it, answers as an Azure error.
func TestProxyRefusals(t *testing.T) {
	e := newEnv(t, func(c *console.Config) { c.MaxBody = 1024 })
	cases := []struct {
		name, method, target string
		hdr                  map[string]string
		body                 []byte
		status               int
		code                 string
	}{
		{"no console header", "GET", "/api/blob/devstoreaccount1/?comp=list", map[string]string{console.HeaderName: ""}, nil, 403, "AuthorizationFailure"},
		{"other origin", "GET", "/api/blob/devstoreaccount1/?comp=list", map[string]string{"Origin": "http://evil.example"}, nil, 403, "AuthorizationFailure"},
		{"null origin", "GET", "/api/blob/devstoreaccount1/?comp=list", map[string]string{"Origin": "null"}, nil, 403, "AuthorizationFailure"},
		{"unknown service", "GET", "/api/dfs/devstoreaccount1/?comp=list", nil, nil, 404, "ResourceNotFound"},
		{"no service", "GET", "/api/", nil, nil, 404, "ResourceNotFound"},
		{"unknown account", "GET", "/api/blob/nobody/?comp=list", nil, nil, 404, "ResourceNotFound"},
		{"escaped account", "GET", "/api/blob/devstoreaccount%31/?comp=list", nil, nil, 404, "ResourceNotFound"},
		{"empty account", "GET", "/api/blob//evil.example/x", nil, nil, 404, "ResourceNotFound"},
		{"verb", "TRACE", "/api/blob/devstoreaccount1/?comp=list", nil, nil, 405, "UnsupportedHttpVerb"},
		{"body too large", "PUT", "/api/blob/devstoreaccount1/ctr/b", map[string]string{"X-Ms-Blob-Type": "BlockBlob"}, make([]byte, 1025), 413, "RequestBodyTooLarge"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := e.count()
			wantStatus(t, e.do(t, tc.method, tc.target, tc.body, tc.hdr), tc.status, tc.code)
			if e.count() != before {
				t.Fatal("a refused request reached a service")
			}
		})
	}
	t.Run("chunked body", func(t *testing.T) {
		r := httptest.NewRequest("PUT", "/api/blob/devstoreaccount1/ctr/b", strings.NewReader("abc"))
		r.Host = "127.0.0.1"
		r.ContentLength = -1
		r.Header.Set(console.HeaderName, "1")
		w := httptest.NewRecorder()
		e.c.ServeHTTP(w, r)
		wantStatus(t, w, 411, "MissingContentLengthHeader")
	})
	t.Run("body longer than declared stops at the bound", func(t *testing.T) {
		wantStatus(t, e.do(t, "PUT", "/api/blob/devstoreaccount1/ctr?restype=container", nil, nil), 201, "")
		r := httptest.NewRequest("PUT", "/api/blob/devstoreaccount1/ctr/b", io.MultiReader(bytes.NewReader(make([]byte, 10)), endless{}))
		r.Host = "127.0.0.1"
		r.ContentLength = 10
		r.Header.Set(console.HeaderName, "1")
		r.Header.Set("X-Ms-Blob-Type", "BlockBlob")
		w := httptest.NewRecorder()
		e.c.ServeHTTP(w, r)
		wantStatus(t, w, 201, "")
		w = e.do(t, "HEAD", "/api/blob/devstoreaccount1/ctr/b", nil, nil)
		if w.Header().Get("Content-Length") != "10" {
			t.Fatalf("stored %s bytes", w.Header().Get("Content-Length"))
		}
	})
}

// endless is a body that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) { return len(p), nil }

// TestLoopbackOnlyWithoutCredentials: an unauthenticated console answers
// at a loopback name only, so a DNS name pointed at 127.0.0.1 gives
// another site's page no way in; with credentials any name is fine.
func TestLoopbackOnlyWithoutCredentials(t *testing.T) {
	e := newEnv(t, nil)
	for host, ok := range map[string]bool{"127.0.0.1:10010": true, "[::1]:10010": true, "localhost:10010": true, "LOCALHOST": true,
		"evil.example:10010": false, "10.0.0.5:10010": false, "127.0.0.1.nip.io:10010": false} {
		r := httptest.NewRequest("GET", "/api/accounts", nil)
		r.Host = host
		r.Header.Set(console.HeaderName, "1")
		w := httptest.NewRecorder()
		e.c.ServeHTTP(w, r)
		if (w.Code == 200) != ok {
			t.Errorf("host %s: %d", host, w.Code)
		}
	}
	r := newEnv(t, func(c *console.Config) {
		c.Caller = func(*http.Request) (string, bool) { return "other", true }
	})
	w := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/api/accounts", nil)
	req.Host = "storage.example:10010"
	req.Header.Set(console.HeaderName, "1")
	r.c.ServeHTTP(w, req)
	wantStatus(t, w, 200, "")
}

// TestRestrictedCaller: an authenticated admin request acts as its own
// account only and learns nothing of the others.
func TestRestrictedCaller(t *testing.T) {
	e := newEnv(t, func(c *console.Config) {
		c.Caller = func(r *http.Request) (string, bool) { return "other", true }
	})
	w := e.do(t, "GET", "/api/accounts", nil, nil)
	wantStatus(t, w, 200, "")
	var got struct {
		Accounts   []string
		Services   []string
		Restricted bool
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Accounts, ",") != "other" || !got.Restricted || len(got.Services) != 4 {
		t.Fatalf("accounts %s", w.Body)
	}
	wantStatus(t, e.do(t, "PUT", "/api/blob/other/mine?restype=container", nil, nil), 201, "")
	if a := e.last(t).Header.Get("Authorization"); !strings.HasPrefix(a, "SharedKey other:") {
		t.Fatalf("Authorization %q", a)
	}
	// Dot segments stay inside the account: the service sees them under
	// it and refuses the name.
	w = e.do(t, "GET", "/api/blob/other/../devstoreaccount1/?comp=list", nil, nil)
	if w.Code == 200 || !strings.HasPrefix(e.last(t).URL.EscapedPath(), "/other/") {
		t.Fatalf("dot segments: %d %s, service saw %s", w.Code, w.Body, e.last(t).URL)
	}
	before := e.count()
	wantStatus(t, e.do(t, "GET", "/api/blob/devstoreaccount1/?comp=list", nil, nil), 403, "AuthorizationFailure")
	wantStatus(t, e.do(t, "GET", "/api/blob/nobody/?comp=list", nil, nil), 403, "AuthorizationFailure")
	if e.count() != before {
		t.Fatal("a refused request reached a service")
	}
}

// TestAccountsListsNamesOnly: the accounts answer never carries a key.
func TestAccountsListsNamesOnly(t *testing.T) {
	e := newEnv(t, nil)
	w := e.do(t, "GET", "/api/accounts", nil, nil)
	wantStatus(t, w, 200, "")
	body := w.Body.String()
	if !strings.Contains(body, `"accounts":["devstoreaccount1","other"]`) || strings.Contains(body, auth.DevKey) ||
		strings.Contains(body, base64.StdEncoding.EncodeToString(otherKey)) {
		t.Fatalf("accounts %s", body)
	}
	if w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("Cache-Control %q", w.Header().Get("Cache-Control"))
	}
	wantStatus(t, e.do(t, "DELETE", "/api/accounts", nil, nil), 405, "UnsupportedHttpVerb")
}

// TestPageAndAssets: the page and its files come from the binary, with
// headers that keep anything else from running in it.
func TestPageAndAssets(t *testing.T) {
	e := newEnv(t, nil)
	for path, typ := range map[string]string{"/": "text/html", "/static/app.js": "javascript", "/static/style.css": "text/css"} {
		w := e.do(t, "GET", path, nil, nil)
		if w.Code != 200 || !strings.Contains(w.Header().Get("Content-Type"), typ) {
			t.Fatalf("%s: %d %s", path, w.Code, w.Header().Get("Content-Type"))
		}
		csp := w.Header().Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") || w.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("%s: headers %v", path, w.Header())
		}
	}
	page := e.do(t, "GET", "/", nil, nil).Body.String()
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Fatal("the page refers to another site")
	}
	for _, tc := range []struct {
		method, path string
		status       int
	}{{"GET", "/nothing", 404}, {"GET", "/static/missing.js", 404}, {"POST", "/", 405}, {"DELETE", "/static/app.js", 405}} {
		if w := e.do(t, tc.method, tc.path, nil, nil); w.Code != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, w.Code, tc.status)
		}
	}
}

// TestServiceOff: a service the server does not run is not proxied.
func TestServiceOff(t *testing.T) {
	e := newEnv(t, func(c *console.Config) { delete(c.Handlers, auth.File) })
	wantStatus(t, e.do(t, "GET", "/api/file/devstoreaccount1/?comp=list", nil, nil), 404, "ResourceNotFound")
	if w := e.do(t, "GET", "/api/accounts", nil, nil); strings.Contains(w.Body.String(), `"file"`) {
		t.Fatalf("accounts %s", w.Body)
	}
}
