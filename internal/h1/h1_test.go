package h1

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// start serves h on a loopback listener until the test ends.
func start(t testing.TB, h http.Handler) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return s, ln.Addr().String()
}

func dial(t testing.TB, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

func readResp(t testing.TB, br *bufio.Reader, method string) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read response body: %v", err)
	}
	return resp, string(b)
}

// closed reports whether the server closed the connection.
func closed(c net.Conn, br *bufio.Reader) bool {
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err := br.ReadByte()
	return err == io.EOF || errors.Is(err, net.ErrClosed) || errors.Is(err, io.ErrUnexpectedEOF) ||
		err != nil && strings.Contains(err.Error(), "reset")
}

// echo answers with the method, URI, host and body it got.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	fmt.Fprintf(w, "%s %s %s %s cl=%d te=%v body=%s", r.Method, r.RequestURI, r.Host, r.Proto, r.ContentLength, r.TransferEncoding, b)
})

func TestKeepAliveAndPipelining(t *testing.T) {
	_, addr := start(t, echo)
	c, br := dial(t, addr)
	io.WriteString(c, "GET /a HTTP/1.1\r\nHost: h\r\n\r\nPOST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nxyzGET /c HTTP/1.1\r\nHost: h\r\n\r\n")
	for _, want := range []string{"GET /a h HTTP/1.1 cl=0 te=[] body=", "POST /b h HTTP/1.1 cl=3 te=[] body=xyz", "GET /c h HTTP/1.1 cl=0 te=[] body="} {
		resp, body := readResp(t, br, "GET")
		if body != want || resp.Close || resp.ContentLength != int64(len(want)) {
			t.Fatalf("got %q (close %v, cl %d), want %q", body, resp.Close, resp.ContentLength, want)
		}
		if resp.Header.Get("Date") == "" || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Fatalf("headers %v", resp.Header)
		}
	}
	// Connection: close from the client.
	io.WriteString(c, "GET /d HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
	resp, _ := readResp(t, br, "GET")
	if !resp.Close || !closed(c, br) {
		t.Fatalf("Connection: close not honoured: %v", resp.Header)
	}
}

func TestHTTP10(t *testing.T) {
	_, addr := start(t, echo)
	c, br := dial(t, addr)
	io.WriteString(c, "GET /x HTTP/1.0\r\n\r\n")
	resp, body := readResp(t, br, "GET")
	if resp.Proto != "HTTP/1.0" || body != "GET /x  HTTP/1.0 cl=0 te=[] body=" || !closed(c, br) {
		t.Fatalf("1.0: %s %q", resp.Proto, body)
	}
	c, br = dial(t, addr)
	io.WriteString(c, "GET /y HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
	resp, _ = readResp(t, br, "GET")
	if resp.Header.Get("Connection") != "keep-alive" {
		t.Fatalf("1.0 keep-alive: %v", resp.Header)
	}
	io.WriteString(c, "GET /z HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
	if _, body := readResp(t, br, "GET"); !strings.HasPrefix(body, "GET /z") {
		t.Fatalf("second 1.0 request: %q", body)
	}
}

func TestChunked(t *testing.T) {
	big := strings.Repeat("0123456789", 5000)
	_, addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(400)
			return
		}
		if r.URL.Path == "/big" {
			io.WriteString(w, big)
			return
		}
		fmt.Fprintf(w, "%d %v %s", r.ContentLength, r.TransferEncoding, b)
	}))
	c, br := dial(t, addr)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: v\r\n\r\n")
	if _, body := readResp(t, br, "POST"); body != "-1 [chunked] abcde" {
		t.Fatalf("chunked request: %q", body)
	}
	io.WriteString(c, "GET /big HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, body := readResp(t, br, "GET")
	if body != big || len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" || resp.ContentLength != -1 {
		t.Fatalf("chunked response: te %v cl %d len %d", resp.TransferEncoding, resp.ContentLength, len(body))
	}
	// Still usable after both.
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nok")
	if _, body := readResp(t, br, "POST"); body != "2 [] ok" {
		t.Fatalf("after chunked: %q", body)
	}
	// Bad chunk framing: the handler sees an error and the connection
	// closes.
	for _, bad := range []string{"zz\r\nab\r\n0\r\n\r\n", "2\r\nabc\r\n0\r\n\r\n", "2\nab\r\n0\r\n\r\n"} {
		c, br := dial(t, addr)
		io.WriteString(c, "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"+bad)
		resp, _ := readResp(t, br, "POST")
		if resp.StatusCode != 400 || !closed(c, br) {
			t.Fatalf("%q: %d", bad, resp.StatusCode)
		}
	}
}

func TestExpectContinue(t *testing.T) {
	_, addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Kept in the request, as net/http keeps it.
		if r.Header.Get("Expect") != "100-continue" {
			t.Errorf("Expect header %q", r.Header.Get("Expect"))
		}
		if r.URL.Path == "/read" {
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "got %s", b)
			return
		}
		w.WriteHeader(403)
	}))
	// Read: 100 Continue first, then the answer.
	c, br := dial(t, addr)
	io.WriteString(c, "PUT /read HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
	line, _ := br.ReadString('\n')
	if line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("want 100 Continue, got %q", line)
	}
	if l, _ := br.ReadString('\n'); l != "\r\n" {
		t.Fatalf("after 100: %q", l)
	}
	io.WriteString(c, "hello")
	if _, body := readResp(t, br, "PUT"); body != "got hello" {
		t.Fatalf("body %q", body)
	}
	// Unread: no 100 Continue, a final answer and a close.
	c, br = dial(t, addr)
	io.WriteString(c, "PUT /no HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
	resp, _ := readResp(t, br, "PUT")
	if resp.StatusCode != 403 || !resp.Close || !closed(c, br) {
		t.Fatalf("unread 100-continue: %d close=%v", resp.StatusCode, resp.Close)
	}
	// An expectation the server cannot meet.
	c, br = dial(t, addr)
	io.WriteString(c, "PUT /read HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: teapot\r\n\r\n")
	if resp, _ := readResp(t, br, "PUT"); resp.StatusCode != http.StatusExpectationFailed {
		t.Fatalf("Expect: teapot: %d", resp.StatusCode)
	}
}

func TestUnreadBody(t *testing.T) {
	_, addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(201)
	}))
	// A small unread body is dropped and the connection reused.
	c, br := dial(t, addr)
	io.WriteString(c, "PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\n"+strings.Repeat("x", 1000))
	io.WriteString(c, "PUT / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
	for i := 0; i < 2; i++ {
		if resp, _ := readResp(t, br, "PUT"); resp.StatusCode != 201 || resp.Close {
			t.Fatalf("small unread body %d: %d close=%v", i, resp.StatusCode, resp.Close)
		}
	}
	// A large one closes the connection, and the client still gets the
	// answer while it is sending.
	c, br = dial(t, addr)
	go func() {
		io.WriteString(c, "PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 4000000\r\n\r\n")
		c.Write(make([]byte, 4000000))
	}()
	resp, _ := readResp(t, br, "PUT")
	if resp.StatusCode != 201 || !resp.Close || !closed(c, br) {
		t.Fatalf("large unread body: %d close=%v", resp.StatusCode, resp.Close)
	}
}

func TestHeadAndNoBodyStatuses(t *testing.T) {
	var errs sync.Map
	_, addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/204":
			w.WriteHeader(204)
		case "/304":
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("ETag", `"x"`)
			w.WriteHeader(304)
		}
		_, err := io.WriteString(w, "body bytes")
		errs.Store(r.Method+r.URL.Path, err)
	}))
	c, br := dial(t, addr)
	io.WriteString(c, "HEAD / HTTP/1.1\r\nHost: h\r\n\r\nGET /204 HTTP/1.1\r\nHost: h\r\n\r\nGET /304 HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, body := readResp(t, br, "HEAD")
	if resp.StatusCode != 200 || body != "" || resp.Header.Get("Content-Length") != "10" {
		t.Fatalf("HEAD: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	for _, code := range []int{204, 304} {
		resp, body := readResp(t, br, "GET")
		if resp.StatusCode != code || body != "" || resp.Header.Get("Content-Length") != "" || resp.TransferEncoding != nil {
			t.Fatalf("%d: %q %v", code, body, resp.Header)
		}
		if code == 304 && (resp.Header.Get("Content-Type") != "" || resp.Header.Get("Etag") != `"x"`) {
			t.Fatalf("304 headers: %v", resp.Header)
		}
	}
	if _, body := readResp(t, br, "GET"); body != "body bytes" {
		t.Fatalf("after: %q", body)
	}
	for k, want := range map[string]error{"HEAD/": nil, "GET/204": http.ErrBodyNotAllowed, "GET/304": http.ErrBodyNotAllowed} {
		if got, _ := errs.Load(k); got != want && !(got == nil && want == nil) {
			t.Errorf("%s: Write error %v, want %v", k, got, want)
		}
	}
}

func TestContentLengthMismatch(t *testing.T) {
	var overErr atomic.Value
	_, addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "10")
		switch r.URL.Path {
		case "/over":
			_, err := io.WriteString(w, strings.Repeat("x", 20))
			overErr.Store(fmt.Sprint(err))
		case "/under":
			io.WriteString(w, "12345")
		}
	}))
	c, br := dial(t, addr)
	io.WriteString(c, "GET /over HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.ContentLength != 10 {
		t.Fatalf("over: %v %v", resp, err)
	}
	if !closed(c, br) || overErr.Load() != http.ErrContentLength.Error() {
		t.Fatalf("over: write error %v", overErr.Load())
	}
	c, br = dial(t, addr)
	io.WriteString(c, "GET /under HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, err = http.ReadResponse(br, nil)
	if err != nil || resp.ContentLength != 10 {
		t.Fatalf("under: %v %v", resp, err)
	}
	if b, err := io.ReadAll(resp.Body); string(b) != "12345" || err != io.ErrUnexpectedEOF {
		t.Fatalf("under: %q %v", b, err)
	}
}

func TestMalformedRequests(t *testing.T) {
	var served atomic.Int32
	_, addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) }))
	for _, tc := range []struct {
		req  string
		code int
	}{
		{"GET\r\n\r\n", 400},
		{"GET / HTTP/1.1 extra\r\nHost: h\r\n\r\n", 400},
		{"GET /  HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"G\x00T / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505},
		{"GET / HTTP/9.9\r\nHost: h\r\n\r\n", 505},
		{"GET / HTTX/1.1\r\nHost: h\r\n\r\n", 400},
		{"GET / HTTP/1.10\r\nHost: h\r\n\r\n", 400},
		{"GET /a%zz HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"GET a HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost: h\r\nno colon\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost: h\r\nBad Name: v\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost: h\r\n: v\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost: h\r\nX: a\x00b\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\n Host: h\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost: h\r\nX-Big: " + strings.Repeat("b", 2<<20) + "\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost: h\r\nX-Big: " + strings.Repeat("b", MaxFieldBytes) + "\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost: h\r\n" + strings.Repeat("X-Many: "+strings.Repeat("m", 1000)+"\r\n", 70) + "\r\n", 400},
		{"GET /" + strings.Repeat("u", MaxURIBytes) + " HTTP/1.1\r\nHost: h\r\n\r\n", 414},
		{"GET /" + strings.Repeat("u", 2<<20) + " HTTP/1.1\r\nHost: h\r\n\r\n", 414},
		{"PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400},
		{"PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", 400},
		{"PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: ten\r\n\r\n", 400},
		{"PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\n", 400},
		{"PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: \r\n\r\n", 400},
		{"PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 400},
		{"PUT / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
		{"PUT / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 501},
	} {
		c, br := dial(t, addr)
		io.WriteString(c, tc.req)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Errorf("%.40q: %v", tc.req, err)
			continue
		}
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != tc.code || !closed(c, br) {
			t.Errorf("%.40q: got %d, want %d and a close", tc.req, resp.StatusCode, tc.code)
		}
	}
	if n := served.Load(); n != 0 {
		t.Errorf("%d malformed requests reached the handler", n)
	}
}

// With Server.Refused set, a head refused for a limit is answered by the
// hook, which is told why and gets the request line's method and target
// when they were read, and never reaches the Handler.
func TestRefusedHook(t *testing.T) {
	var served atomic.Int32
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) }),
		ErrorLog: log.New(io.Discard, "", 0),
		Refused: func(w http.ResponseWriter, r *http.Request, err error) {
			w.Header().Set("X-Refused", r.Method+" "+r.URL.Path+" "+map[error]string{ErrURITooLong: "uri", ErrFieldTooLong: "field", ErrHeadTooLarge: "head", ErrOverBudget: "budget"}[err])
			w.WriteHeader(499)
			io.WriteString(w, "refused")
		}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	defer s.Close()
	for _, tc := range []struct{ req, want string }{
		{"DELETE /" + strings.Repeat("u", MaxURIBytes) + " HTTP/1.1\r\nHost: h\r\n\r\n", "DELETE / uri"},
		{"PUT /a/b HTTP/1.1\r\nHost: h\r\nX-Big: " + strings.Repeat("b", MaxFieldBytes) + "\r\n\r\n", "PUT /a/b field"},
		{"HEAD /c HTTP/1.1\r\nHost: h\r\n" + strings.Repeat("X-Many: "+strings.Repeat("m", 1000)+"\r\n", 70) + "\r\n", "HEAD /c head"},
	} {
		c, br := dial(t, ln.Addr().String())
		io.WriteString(c, tc.req)
		method := strings.Fields(tc.want)[0]
		resp, body := readResp(t, br, method)
		if resp.StatusCode != 499 || resp.Header.Get("X-Refused") != tc.want || !resp.Close || !closed(c, br) {
			t.Errorf("%.40q: %d %q %q close=%v, want 499 %q and a close", tc.req, resp.StatusCode, resp.Header.Get("X-Refused"), body, resp.Close, tc.want)
		}
		if method != http.MethodHead && body != "refused" {
			t.Errorf("%.40q: body %q", tc.req, body)
		}
	}
	// The budget: a head the server's budget cannot hold.
	s2 := &Server{Handler: s.Handler, ErrorLog: s.ErrorLog, Refused: s.Refused, HeaderBudget: NewBudget(0)}
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s2.Serve(ln2)
	defer s2.Close()
	c, br := dial(t, ln2.Addr().String())
	io.WriteString(c, "GET /d HTTP/1.1\r\nHost: h\r\nX-Pad: "+strings.Repeat("p", 8000)+"\r\n\r\n")
	if resp, _ := readResp(t, br, "GET"); resp.Header.Get("X-Refused") != "GET /d budget" {
		t.Errorf("over budget: %d %q", resp.StatusCode, resp.Header.Get("X-Refused"))
	}
	if n := served.Load(); n != 0 {
		t.Errorf("%d refused requests reached the handler", n)
	}
}

func TestRequestFields(t *testing.T) {
	type seen struct {
		r   *http.Request
		key any
	}
	got := make(chan seen, 1)
	type ctxKey struct{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r, r.Context().Value(ctxKey{})}
	}), ConnContext: func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, ctxKey{}, c.LocalAddr().String())
	}}
	go s.Serve(ln)
	defer s.Close()
	c, br := dial(t, ln.Addr().String())
	io.WriteString(c, "GET http://other:1/p/a%20th?q=1&r HTTP/1.1\r\nHost: h:9\r\nx-ms-meta-Abc:  v1 \r\nX-MS-META-ABC: v2\r\nFolded: a\r\n  b\r\nPragma: no-cache\r\nAccept:\r\n\r\n")
	readResp(t, br, "GET")
	sn := <-got
	r := sn.r
	if r.Host != "other:1" || r.URL.Path != "/p/a th" || r.URL.RawQuery != "q=1&r" || r.RequestURI != "http://other:1/p/a%20th?q=1&r" {
		t.Errorf("url %+v host %q uri %q", r.URL, r.Host, r.RequestURI)
	}
	if sn.key != ln.Addr().String() || r.RemoteAddr != c.LocalAddr().String() || r.TLS != nil || r.Body != http.NoBody {
		t.Errorf("context %v remote %q tls %v body %T", sn.key, r.RemoteAddr, r.TLS, r.Body)
	}
	// Metadata names keep the case the client sent (the first spelling).
	want := http.Header{"x-ms-meta-Abc": {"v1", "v2"}, "Folded": {"a b"}, "Pragma": {"no-cache"}, "Cache-Control": {"no-cache"}, "Accept": {""}}
	if fmt.Sprint(r.Header) != fmt.Sprint(want) {
		t.Errorf("header %v, want %v", r.Header, want)
	}
}

func TestTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil) // only for its certificate
	srv.StartTLS()
	cert := srv.TLS.Certificates
	client := srv.Client()
	srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "tls=%v", r.TLS != nil && r.TLS.HandshakeComplete)
	})}
	go s.Serve(tls.NewListener(ln, &tls.Config{Certificates: cert}))
	defer s.Close()
	for i := 0; i < 2; i++ {
		resp, err := client.Get("https://" + ln.Addr().String() + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "tls=true" {
			t.Fatalf("got %q", b)
		}
	}
}

func TestPanicClosesConnection(t *testing.T) {
	var logged bytes.Buffer
	var mu sync.Mutex
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/abort" {
			panic(http.ErrAbortHandler)
		}
		panic("boom")
	}), ErrorLog: log.New(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logged.Write(p)
	}), "", 0)}
	go s.Serve(ln)
	defer s.Close()
	for _, p := range []string{"/boom", "/abort"} {
		c, br := dial(t, ln.Addr().String())
		io.WriteString(c, "GET "+p+" HTTP/1.1\r\nHost: h\r\n\r\n")
		if !closed(c, br) {
			t.Fatalf("%s: connection left open", p)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logged.String(), "boom") || strings.Count(logged.String(), "panic serving") != 1 {
		t.Fatalf("log: %s", logged.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestShutdownWaitsForInFlight(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	var states sync.Map
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		io.WriteString(w, "done")
	}), ConnState: func(c net.Conn, st http.ConnState) { states.Store(st, true) }}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	busy, busyR := dial(t, ln.Addr().String())
	dial(t, ln.Addr().String()) // a silent connection must not hold Shutdown up
	io.WriteString(busy, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	<-entered
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with a request in flight", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Fatal("still accepting")
	}
	close(release)
	resp, body := readResp(t, busyR, "GET")
	if body != "done" || !resp.Close {
		t.Fatalf("in-flight answer %q close=%v", body, resp.Close)
	}
	select {
	case err := <-shut:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown did not return")
	}
	for _, st := range []http.ConnState{http.StateNew, http.StateActive, http.StateClosed} {
		if _, ok := states.Load(st); !ok {
			t.Errorf("ConnState never saw %v", st)
		}
	}
}

func TestClose(t *testing.T) {
	entered := make(chan struct{})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		r.Body.Read(make([]byte, 1)) // blocks until the connection closes
	})}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	c, br := dial(t, ln.Addr().String())
	io.WriteString(c, "PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n")
	<-entered
	s.Close()
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("Serve: %v", err)
	}
	if !closed(c, br) {
		t.Fatal("connection left open")
	}
	if err := s.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("Serve after Close: %v", err)
	}
}

func TestResponseFraming(t *testing.T) {
	_, addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/empty":
		case "/html":
			io.WriteString(w, "<html><body>x</body></html>")
		case "/typed":
			w.Header().Set("Content-Type", "application/xml")
			w.Header().Set("Date", "fixed")
			w.Write([]byte("<a/>"))
		case "/flush":
			io.WriteString(w, "part1")
			w.(http.Flusher).Flush()
			io.WriteString(w, "part2")
		case "/controller":
			rc := http.NewResponseController(w)
			io.WriteString(w, "x")
			if err := rc.Flush(); err != nil {
				panic(err)
			}
		case "/info":
			w.Header().Set("Link", "</a>; rel=preload")
			w.WriteHeader(103)
			w.WriteHeader(201)
			w.WriteHeader(202) // ignored
		case "/close":
			w.Header().Set("Connection", "close")
		case "/unknown":
			w.WriteHeader(599)
		case "/injected":
			w.Header().Set("X-A", "a\r\nX-Injected: b")
		}
	}))
	c, br := dial(t, addr)
	check := func(path string, f func(*http.Response, string) bool) {
		t.Helper()
		io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: h\r\n\r\n")
		resp, body := readResp(t, br, "GET")
		if !f(resp, body) {
			t.Fatalf("%s: %d %v %q te=%v", path, resp.StatusCode, resp.Header, body, resp.TransferEncoding)
		}
	}
	check("/empty", func(r *http.Response, b string) bool {
		return r.ContentLength == 0 && r.Header.Get("Content-Type") == ""
	})
	check("/html", func(r *http.Response, b string) bool {
		return r.Header.Get("Content-Type") == "text/html; charset=utf-8" && r.ContentLength == int64(len(b))
	})
	check("/typed", func(r *http.Response, b string) bool {
		return r.Header.Get("Content-Type") == "application/xml" && r.Header.Get("Date") == "fixed" && b == "<a/>"
	})
	check("/flush", func(r *http.Response, b string) bool { return b == "part1part2" && r.ContentLength == -1 })
	check("/controller", func(r *http.Response, b string) bool { return b == "x" })
	io.WriteString(c, "GET /info HTTP/1.1\r\nHost: h\r\n\r\n")
	if l, _ := br.ReadString('\n'); l != "HTTP/1.1 103 Early Hints\r\n" {
		t.Fatalf("103: %q", l)
	}
	tp := textproto.NewReader(br)
	if h, _ := tp.ReadMIMEHeader(); h.Get("Link") == "" {
		t.Fatalf("103 headers: %v", h)
	}
	if r, _ := readResp(t, br, "GET"); r.StatusCode != 201 {
		t.Fatalf("after 103: %d", r.StatusCode)
	}
	check("/unknown", func(r *http.Response, b string) bool { return r.Status == "599 status code 599" })
	check("/injected", func(r *http.Response, b string) bool {
		return r.Header.Get("X-Injected") == "" && r.Header.Get("X-A") == "a  X-Injected: b"
	})
	check("/close", func(r *http.Response, b string) bool { return r.Close })
	if !closed(c, br) {
		t.Fatal("Connection: close from the handler left the connection open")
	}
}

func TestInvalidStatusPanics(t *testing.T) {
	var msg atomic.Value
	_, addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { msg.Store(fmt.Sprint(recover())) }()
		w.WriteHeader(1000)
	}))
	c, br := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	readResp(t, br, "GET")
	if msg.Load() != "invalid WriteHeader code 1000" {
		t.Fatalf("recovered %v", msg.Load())
	}
}

// TestCanonicalKeyMatchesTextproto compares canonicalKey with
// textproto.CanonicalMIMEHeaderKey over a corpus of random names.
func TestCanonicalKeyMatchesTextproto(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := "aAzZ-_09.xX!#~ :\x00\x7f\xff\t"
	corpus := []string{"", "-", "a", "x-ms-meta-MyKey", "CONTENT-type", "content-md5", "X--Y", "-x-", "www-authenticate", strings.Repeat("ab-", 60)}
	for i := 0; i < 100000; i++ {
		n := rng.Intn(20)
		b := make([]byte, n)
		for j := range b {
			if rng.Intn(4) == 0 {
				b[j] = byte(rng.Intn(256))
			} else {
				b[j] = alphabet[rng.Intn(len(alphabet))]
			}
		}
		corpus = append(corpus, string(b))
	}
	for _, s := range corpus {
		got, ok := canonicalKey([]byte(s))
		valid := s != ""
		for i := 0; i < len(s); i++ {
			if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(s[i])) && !('0' <= s[i] && s[i] <= '9') && !('a' <= s[i] && s[i] <= 'z') && !('A' <= s[i] && s[i] <= 'Z') {
				valid = false
			}
		}
		if ok != valid {
			t.Fatalf("%q: ok=%v, want %v", s, ok, valid)
		}
		if ok && got != textproto.CanonicalMIMEHeaderKey(s) {
			t.Fatalf("%q: %q, textproto %q", s, got, textproto.CanonicalMIMEHeaderKey(s))
		}
	}
}

// fakeConn is a connection whose input is fixed and whose output is
// dropped.
type fakeConn struct {
	r *bytes.Reader
	w bytes.Buffer
}

func (f *fakeConn) Read(p []byte) (int, error)         { return f.r.Read(p) }
func (f *fakeConn) Write(p []byte) (int, error)        { return f.w.Write(p) }
func (f *fakeConn) Close() error                       { return nil }
func (f *fakeConn) LocalAddr() net.Addr                { return &net.TCPAddr{} }
func (f *fakeConn) RemoteAddr() net.Addr               { return &net.TCPAddr{} }
func (f *fakeConn) SetDeadline(t time.Time) error      { return nil }
func (f *fakeConn) SetReadDeadline(t time.Time) error  { return nil }
func (f *fakeConn) SetWriteDeadline(t time.Time) error { return nil }

// FuzzServeConn feeds arbitrary bytes to a connection: the server must
// neither panic nor hang, and every response it writes must parse.
func FuzzServeConn(f *testing.F) {
	for _, s := range []string{
		"GET / HTTP/1.1\r\nHost: h\r\n\r\n",
		"POST /a?b HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.0\r\n\r\n",
		"PUT / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3;x\r\nabc\r\n0\r\nT: v\r\n\r\n",
		"PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nab",
		"HEAD / HTTP/1.1\r\nHost: h\r\nA: b\r\n c\r\n\r\n",
		"GET http://x/ HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/a" {
			w.WriteHeader(204)
		}
		w.Write(b)
	}), ErrorLog: log.New(io.Discard, "", 0)}
	f.Fuzz(func(t *testing.T, in []byte) {
		fc := &fakeConn{r: bytes.NewReader(in)}
		c := s.newConn(fc)
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.trackConn(c, true)
			c.serve()
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("hung on %q", in)
		}
		br := bufio.NewReader(&fc.w)
		for {
			if _, err := br.Peek(1); err == io.EOF {
				break
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("unparsable response to %q: %v\n%s", in, err, fc.w.String())
			}
			if resp.StatusCode == 100 {
				continue
			}
			if _, err := io.Copy(io.Discard, resp.Body); err != nil && resp.ContentLength >= 0 {
				t.Fatalf("response body to %q: %v", in, err)
			}
			if resp.ContentLength < 0 && resp.TransferEncoding == nil {
				break // close-delimited
			}
		}
	})
}

func TestServeConnCorpus(t *testing.T) {
	// A deterministic sweep over mutations of valid requests, so the
	// properties FuzzServeConn checks hold in ordinary test runs too.
	rng := rand.New(rand.NewSource(2))
	seeds := []string{
		"POST /a?b HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.0\r\n\r\n",
		"PUT / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3;x\r\nabc\r\n0\r\nT: v\r\n\r\n",
	}
	s := &Server{Handler: echo, ErrorLog: log.New(io.Discard, "", 0)}
	for i := 0; i < 3000; i++ {
		b := []byte(seeds[i%len(seeds)])
		for k := rng.Intn(4); k >= 0; k-- {
			b[rng.Intn(len(b))] = byte(rng.Intn(256))
		}
		fc := &fakeConn{r: bytes.NewReader(b)}
		c := s.newConn(fc)
		s.trackConn(c, true)
		c.serve()
		if !strings.HasPrefix(fc.w.String(), "HTTP/1.") && fc.w.Len() > 0 {
			t.Fatalf("%q: wrote %q", b, fc.w.String())
		}
	}
}

// BenchmarkServers compares net/http's server with this one on a small
// handler over loopback with 16 keep-alive connections; cpu-ns/op is the
// process's CPU time (client included) per request.
func BenchmarkServers(b *testing.B) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("X-Ms-Request-Id", "0f8fad5b-d9cb-469f-a165-70867728950e")
		io.WriteString(w, "hello, world")
	})
	for _, kind := range []string{"net-http", "h1"} {
		b.Run(kind, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			var closeFn func()
			if kind == "h1" {
				s := &Server{Handler: h}
				go s.Serve(ln)
				closeFn = func() { s.Close() }
			} else {
				s := &http.Server{Handler: h}
				go s.Serve(ln)
				closeFn = func() { s.Close() }
			}
			defer closeFn()
			const conns = 16
			req := []byte("GET /devstoreaccount1/c/b HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Ms-Version: 2025-11-05\r\nX-Ms-Date: Mon, 01 Jan 2026 00:00:00 GMT\r\nAuthorization: SharedKey devstoreaccount1:abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG=\r\nUser-Agent: bench\r\n\r\n")
			var next atomic.Int64
			var wg sync.WaitGroup
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < conns; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c, err := net.Dial("tcp", ln.Addr().String())
					if err != nil {
						b.Error(err)
						return
					}
					defer c.Close()
					br := bufio.NewReaderSize(c, 8192)
					for next.Add(1) <= int64(b.N) {
						if _, err := c.Write(req); err != nil {
							b.Error(err)
							return
						}
						if err := skipResponse(br); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// skipResponse reads one response with a Content-Length body.
func skipResponse(br *bufio.Reader) error {
	cl := -1
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(line) <= 2 {
			break
		}
		if len(line) > 16 && (line[0] == 'C' || line[0] == 'c') && strings.EqualFold(string(line[:15]), "Content-Length:") {
			cl, _ = strconv.Atoi(strings.TrimSpace(string(line[15:])))
		}
	}
	if cl < 0 {
		return errors.New("no Content-Length")
	}
	_, err := br.Discard(cl)
	return err
}

// Heads at the limits are served: a target of MaxURIBytes, a field of
// MaxFieldBytes and a head just under MaxHeaderBytes.
func TestHeadLimitsAllowAzureSizes(t *testing.T) {
	_, addr := start(t, echo)
	for _, req := range []string{
		"GET /" + strings.Repeat("u", MaxURIBytes-1) + " HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h\r\nX-Big: " + strings.Repeat("b", MaxFieldBytes-len("X-Big: ")) + "\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h\r\n" + strings.Repeat("X-Ms-Meta-A: "+strings.Repeat("m", 1000)+"\r\n", 60) + "\r\n",
	} {
		c, br := dial(t, addr)
		io.WriteString(c, req)
		if resp, _ := readResp(t, br, "GET"); resp.StatusCode != 200 {
			t.Errorf("%.40q: %d", req, resp.StatusCode)
		}
	}
}

// When the heads being read use up the server's budget, the connection
// that would go over it is answered 503 and closed; the budget is whole
// again once the requests are over.
func TestHeaderBudget(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	budget := NewBudget(64 << 10)
	s := &Server{Handler: echo, ErrorLog: log.New(io.Discard, "", 0), HeaderBudget: budget}
	go s.Serve(ln)
	defer s.Close()
	addr := ln.Addr().String()
	// Two slow clients each hold a 40 KiB head without finishing it.
	part := "GET / HTTP/1.1\r\nHost: h\r\n" + strings.Repeat("X-Pad: "+strings.Repeat("p", 1000)+"\r\n", 40)
	c1, _ := dial(t, addr)
	io.WriteString(c1, part)
	waitFor(t, func() bool { return budget.Used() >= 32<<10 })
	c2, br2 := dial(t, addr)
	io.WriteString(c2, part)
	resp, err := http.ReadResponse(br2, nil)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
	}
	if err != nil || resp.StatusCode != 503 || !closed(c2, br2) {
		t.Fatalf("head over budget: %v %v", resp, err)
	}
	c2.Close()
	io.WriteString(c1, "\r\n")
	waitFor(t, func() bool { return budget.Used() == 0 })
	c3, br3 := dial(t, addr)
	io.WriteString(c3, part+"\r\n")
	if resp, _ := readResp(t, br3, "GET"); resp.StatusCode != 200 {
		t.Fatalf("after the budget came back: %d", resp.StatusCode)
	}
	c1.Close()
	c3.Close()
	waitFor(t, func() bool { return budget.Used() == 0 })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A request's context is cancelled when its client goes away while the
// handler runs, with or without a body; a pipelined request that arrives
// while a slow handler runs is served as usual.
func TestContextCancelledWhenClientGoesAway(t *testing.T) {
	cancelled := make(chan string, 4)
	_, addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/wait":
			io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
				cancelled <- r.Method
			case <-time.After(5 * time.Second):
				cancelled <- "not cancelled"
			}
		case "/slow":
			time.Sleep(3 * watchDelay)
			if r.Context().Err() != nil {
				t.Errorf("context of a live client cancelled")
			}
			io.WriteString(w, "slow")
		case "/upload":
			_, err := io.Copy(io.Discard, r.Body)
			if err == nil {
				t.Errorf("cut body read without error")
			}
			select {
			case <-r.Context().Done():
				cancelled <- "upload"
			case <-time.After(5 * time.Second):
				cancelled <- "not cancelled"
			}
		default:
			io.WriteString(w, "next")
		}
	}))
	for _, req := range []string{
		"GET /wait HTTP/1.1\r\nHost: h\r\n\r\n",
		"PUT /wait HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc",
		"PUT /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc",
	} {
		c, _ := dial(t, addr)
		io.WriteString(c, req)
		time.Sleep(2 * watchDelay)
		c.Close()
		if got := <-cancelled; got == "not cancelled" {
			t.Errorf("%q: context not cancelled when the client went away", req)
		}
	}
	c, br := dial(t, addr)
	io.WriteString(c, "GET /slow HTTP/1.1\r\nHost: h\r\n\r\n")
	time.Sleep(2 * watchDelay)
	io.WriteString(c, "GET /next HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, body := readResp(t, br, "GET"); body != "slow" {
		t.Fatalf("first response %q", body)
	}
	if _, body := readResp(t, br, "GET"); body != "next" {
		t.Fatalf("pipelined response %q", body)
	}
}
