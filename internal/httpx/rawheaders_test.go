package httpx

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestMetadataNamesKeepTheirCase sends requests over a real connection with
// metadata header names in mixed case and checks the handler sees them as
// sent, across keep-alive requests with bodies of known and chunked length.
func TestMetadataNamesKeepTheirCase(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, 10)
	srv := &http.Server{ConnContext: ConnContext, Handler: Wrap(0, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		var names []string
		for k := range r.Header {
			if strings.HasPrefix(strings.ToLower(k), "x-ms-meta-") {
				names = append(names, k)
			}
		}
		seen <- strings.Join(names, ",")
	}), Options{})}
	go srv.Serve(RawListener{ln})
	defer srv.Close()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	send := func(raw string) {
		t.Helper()
		if _, err := io.WriteString(c, raw); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	body := "x-ms-meta-Decoy: no\r\n\r\n" // body text that looks like a header
	send(fmt.Sprintf("PUT /devstoreaccount1/c/b HTTP/1.1\r\nHost: 127.0.0.1\r\nx-ms-meta-MyKey: 1\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
	if got := <-seen; got != "x-ms-meta-MyKey" {
		t.Fatalf("first request: %q", got)
	}
	send("PUT /devstoreaccount1/c/b2 HTTP/1.1\r\nHost: 127.0.0.1\r\nx-ms-meta-lower_case: 1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
	if got := <-seen; got != "x-ms-meta-lower_case" {
		t.Fatalf("chunked request: %q", got)
	}
	send("GET /devstoreaccount1/c/b3 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-MS-META-ABC: 1\r\n\r\n")
	if got := <-seen; got != "X-MS-META-ABC" {
		t.Fatalf("third request: %q", got)
	}
}

// An idle connection's recorder holds a few KiB, whatever the request
// before sent (a chunked body is recorded, since its end is not known
// without parsing it), and the next request's names are still found.
func TestRawConnIdleLetsGo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, 10)
	idle := make(chan *RawConn, 10)
	srv := &http.Server{ConnContext: ConnContext, Handler: Wrap(0, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		var names []string
		for k := range r.Header {
			if strings.HasPrefix(strings.ToLower(k), "x-ms-meta-") {
				names = append(names, k)
			}
		}
		seen <- strings.Join(names, ",")
	}), Options{}), ConnState: func(c net.Conn, st http.ConnState) {
		if rc, ok := c.(*RawConn); ok && st == http.StateIdle {
			rc.Idle()
			idle <- rc
		}
	}}
	go srv.Serve(RawListener{ln})
	defer srv.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	send := func(raw string) {
		t.Helper()
		go io.WriteString(c, raw)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	chunk := strings.Repeat("z", 64<<10)
	send("PUT /devstoreaccount1/c/b HTTP/1.1\r\nHost: h\r\nx-ms-meta-First: 1\r\nTransfer-Encoding: chunked\r\n\r\n" +
		strings.Repeat(fmt.Sprintf("%x\r\n%s\r\n", len(chunk), chunk), 4) + "0\r\n\r\n")
	<-seen
	rc := <-idle
	rc.mu.Lock()
	held := cap(rc.buf)
	rc.mu.Unlock()
	if held > 2*idleKeep {
		t.Errorf("idle connection's recorder holds %d bytes after a 256 KiB chunked body", held)
	}
	send("GET /devstoreaccount1/c/b2 HTTP/1.1\r\nHost: h\r\nx-ms-meta-MixedCase: 1\r\n\r\n")
	if got := <-seen; got != "x-ms-meta-MixedCase" {
		t.Fatalf("next request: %q", got)
	}
}
