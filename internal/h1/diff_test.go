package h1

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// seenRequest is what a handler got: the fields a request smuggling or
// desync attack would make two parsers disagree on.
type seenRequest struct {
	Method, URI, Host, Proto string
	Header                   http.Header
	ContentLength            int64
	TE                       []string
	Close                    bool
	Body                     string
	BodyErr                  bool
}

func (s seenRequest) String() string {
	keys := make([]string, 0, len(s.Header))
	for k := range s.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q %s host=%q cl=%d te=%q close=%v body=%q bodyErr=%v hdr={", s.Method, s.URI, s.Proto, s.Host, s.ContentLength, s.TE, s.Close, s.Body, s.BodyErr)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s:%q ", k, s.Header[k])
	}
	b.WriteString("}")
	return b.String()
}

// recorder is a handler that reads each request's body and records it.
type recorder struct {
	mu   sync.Mutex
	seen []seenRequest
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	// Header names compared as net/http spells them: h1 keeps the case of
	// x-ms-meta-* names by design.
	hdr := http.Header{}
	for k, vs := range r.Header {
		ck := textproto.CanonicalMIMEHeaderKey(k)
		hdr[ck] = append(hdr[ck], vs...)
	}
	rec.mu.Lock()
	rec.seen = append(rec.seen, seenRequest{Method: r.Method, URI: r.RequestURI, Host: r.Host, Proto: r.Proto,
		Header: hdr, ContentLength: r.ContentLength, TE: r.TransferEncoding, Close: r.Close,
		Body: string(body), BodyErr: err != nil})
	rec.mu.Unlock()
}

// oneConnListener hands out one connection, then blocks until closed.
type oneConnListener struct {
	c    chan net.Conn
	done chan struct{}
	once sync.Once
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.c:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}
func (l *oneConnListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *oneConnListener) Addr() net.Addr { return &net.TCPAddr{} }

// serveStd runs net/http's server over one connection carrying in and
// returns what its handler saw.
func serveStd(in []byte) []seenRequest {
	rec := &recorder{}
	ln := &oneConnListener{c: make(chan net.Conn, 1), done: make(chan struct{})}
	ln.c <- &fakeConn{r: bytes.NewReader(in)}
	srv := &http.Server{Handler: rec, ErrorLog: log.New(io.Discard, "", 0),
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateClosed {
				ln.Close()
			}
		}}
	srv.Serve(ln)
	return rec.seen
}

// serveH1 does the same with h1, and returns what h1 wrote too.
func serveH1(in []byte) ([]seenRequest, string) {
	rec := &recorder{}
	s := &Server{Handler: rec, ErrorLog: log.New(io.Discard, "", 0)}
	fc := &fakeConn{r: bytes.NewReader(in)}
	c := s.newConn(fc)
	s.trackConn(c, true)
	c.serve()
	return rec.seen, fc.w.String()
}

// diffServers returns a description of how h1 and net/http disagree on
// in, or "" when they agree.
func diffServers(in []byte) string {
	std := serveStd(in)
	own, out := serveH1(in)
	for i := 0; i < max(len(std), len(own)); i++ {
		switch {
		case i >= len(own):
			// h1 stopped first. It may refuse what net/http serves only
			// for a request that declares both Transfer-Encoding and
			// Content-Length (RFC 9112 allows refusing it; it is the
			// classic smuggling form, and net/http drops the length).
			if strings.HasSuffix(out, "Transfer-Encoding and Content-Length together") && len(std[i].TE) > 0 {
				return ""
			}
			return fmt.Sprintf("request %d served by net/http only:\n std %s", i, std[i])
		case i >= len(std):
			return fmt.Sprintf("request %d served by h1 only:\n h1  %s", i, own[i])
		case std[i].String() != own[i].String():
			return fmt.Sprintf("request %d differs:\n std %s\n h1  %s", i, std[i], own[i])
		}
	}
	return ""
}

// FuzzDifferential feeds the same bytes to h1 and to net/http's server:
// they must agree on where each request starts and ends, its method,
// target, header fields and body, or both refuse it. The seeds are the
// known request smuggling and desync forms.
func FuzzDifferential(f *testing.F) {
	for _, s := range smugglingSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 4096 {
			// The servers' size limits differ by design.
			return
		}
		if d := diffWithTimeout(t, in); d != "" {
			t.Fatalf("h1 and net/http disagree on %q:\n%s", in, d)
		}
	})
}

func diffWithTimeout(t *testing.T, in []byte) string {
	done := make(chan string, 1)
	go func() { done <- diffServers(in) }()
	select {
	case d := <-done:
		return d
	case <-time.After(10 * time.Second):
		t.Fatalf("hung on %q", in)
		return ""
	}
}

// TestDifferentialSeeds runs the differential check over the seed corpus
// in ordinary test runs.
func TestDifferentialSeeds(t *testing.T) {
	for _, s := range smugglingSeeds {
		if d := diffWithTimeout(t, []byte(s)); d != "" {
			t.Errorf("h1 and net/http disagree on %q:\n%s", s, d)
		}
	}
}

const hostH = "Host: h\r\n"

var smugglingSeeds = []string{
	// Plain and pipelined.
	"GET / HTTP/1.1\r\n" + hostH + "\r\n",
	"POST /a HTTP/1.1\r\n" + hostH + "Content-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\n" + hostH + "\r\n",
	"GET / HTTP/1.0\r\n\r\nGET /x HTTP/1.0\r\n\r\n",
	"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /x HTTP/1.0\r\n\r\n",
	// CL.TE and TE.CL.
	"POST / HTTP/1.1\r\n" + hostH + "Content-Length: 13\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nSMUGGLED",
	"POST / HTTP/1.1\r\n" + hostH + "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n8\r\nSMUGGLED\r\n0\r\n\r\n",
	// Obfuscated Transfer-Encoding.
	"POST / HTTP/1.1\r\n" + hostH + "Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\n" + hostH + "Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\n" + hostH + "Transfer-Encoding: chunked\r\nTransfer-encoding: x\r\n\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\n" + hostH + "Transfer-Encoding:\tchunked\r\n\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\n" + hostH + "Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\n" + hostH + "Transfer-Encoding: identity\r\n\r\n",
	"POST / HTTP/1.1\r\n" + hostH + "Transfer-Encoding: CHUNKED\r\n\r\n1\r\na\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\n" + hostH + "Transfer-Encoding: \"chunked\"\r\n\r\n0\r\n\r\n",
	"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\na",
	"POST / HTTP/1.1\r\n" + hostH + "Transfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n",
	// Duplicate and odd Content-Length.
	"POST / HTTP/1.1\r\n" + hostH + "Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
	"POST / HTTP/1.1\r\n" + hostH + "Content-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
	"POST / HTTP/1.1\r\n" + hostH + "Content-Length: 3, 3\r\n\r\nabc",
	"POST / HTTP/1.1\r\n" + hostH + "Content-Length: +3\r\n\r\nabc",
	"POST / HTTP/1.1\r\n" + hostH + "Content-Length: 0x3\r\n\r\nabc",
	"POST / HTTP/1.1\r\n" + hostH + "Content-Length:  3 \r\n\r\nabc",
	"POST / HTTP/1.1\r\n" + hostH + "Content-Length: 03\r\n\r\nabc",
	// Obsolete line folding.
	"GET / HTTP/1.1\r\n" + hostH + "X-A: a\r\n b\r\n\r\n",
	"GET / HTTP/1.1\r\n" + hostH + "X-A: a\r\n\tb\r\n\r\n",
	"GET / HTTP/1.1\r\n Host: h\r\n\r\n",
	"POST / HTTP/1.1\r\n" + hostH + "Content-Length:\r\n 3\r\n\r\nabc",
	// Bare CR and LF.
	"GET / HTTP/1.1\n" + "Host: h\n\n",
	"GET / HTTP/1.1\r\nHost: h\rX-A: b\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: h\r\nX-A: a\rb\r\n\r\n",
	"GET /\r HTTP/1.1\r\n" + hostH + "\r\n",
	"POST / HTTP/1.1\r\n" + hostH + "Transfer-Encoding: chunked\r\n\r\n3\nabc\n0\n\n",
	"POST / HTTP/1.1\r\n" + hostH + "Transfer-Encoding: chunked\r\n\r\n3\rabc\r\n0\r\n\r\n",
	// Chunk extensions, sizes and trailers.
	"POST / HTTP/1.1\r\n" + hostH + "Transfer-Encoding: chunked\r\n\r\n3;ext=\"x;y\"\r\nabc\r\n0;a=b\r\n\r\n",
	"POST / HTTP/1.1\r\n" + hostH + "Transfer-Encoding: chunked\r\n\r\n3 ;x\r\nabc\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\n" + hostH + "Transfer-Encoding: chunked\r\n\r\n003\r\nabc\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\n" + hostH + "Transfer-Encoding: chunked\r\n\r\n0x3\r\nabc\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\n" + hostH + "Transfer-Encoding: chunked\r\n\r\nffffffffffffffff1\r\nabc\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\n" + hostH + "Transfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\n" + hostH + "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nTrailer: v\r\n\r\nGET /n HTTP/1.1\r\n" + hostH + "\r\n",
	"POST / HTTP/1.1\r\n" + hostH + "Transfer-Encoding: chunked\r\n\r\n-1\r\nabc\r\n0\r\n\r\n",
	// Request line and Host oddities.
	"GET  / HTTP/1.1\r\n" + hostH + "\r\n",
	"GET / HTTP/1.1 \r\n" + hostH + "\r\n",
	"GET http://other/p HTTP/1.1\r\n" + hostH + "\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a@b\r\n\r\n",
	"GET / HTTP/1.1\r\n\r\n",
	"OPTIONS * HTTP/1.1\r\n" + hostH + "\r\n",
	"CONNECT h:443 HTTP/1.1\r\n" + hostH + "\r\n",
	"GET / HTTP/1.1\r\n" + hostH + "Expect: 100-continue\r\n\r\n",
	"PUT / HTTP/1.1\r\n" + hostH + "Expect: 100-continue\r\nContent-Length: 2\r\n\r\nab",
	"PUT / HTTP/1.1\r\n" + hostH + "Expect: something\r\nContent-Length: 2\r\n\r\nab",
	"GET / HTTP/1.1\r\n" + hostH + "Pragma: no-cache\r\n\r\n",
	"GET / HTTP/1.1\r\n" + hostH + "Connection: close\r\n\r\nGET /after HTTP/1.1\r\n" + hostH + "\r\n",
	"GET / HTTP/1.1\r\n" + hostH + "X-Ms-Meta-Abc: 1\r\nx-ms-meta-abc: 2\r\n\r\n",
	"GET / HTTP/1.1\r\n" + hostH + "X: \x7f\r\n\r\n",
	"GET / HTTP/1.1\r\n" + hostH + "X\x00: v\r\n\r\n",
}
