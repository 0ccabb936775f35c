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
