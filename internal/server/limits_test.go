package server

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

// startServer runs an in-memory lazuli with Blob, Queue and Table listeners on the given
// HTTP server implementation.
func startServer(t *testing.T, httpServer string) *Server {
	t.Helper()
	s, err := New(Config{InMemory: true, BlobAddr: "127.0.0.1:0", QueueAddr: "127.0.0.1:0", TableAddr: "127.0.0.1:0", HTTPServer: httpServer})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// rawStatus sends raw request bytes and returns the response status.
func rawStatus(t *testing.T, addr, req string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go io.WriteString(c, req)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%.50q: %v", req, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Both HTTP servers refuse a request target longer than 32 KiB with 414
// and a header field longer than 16 KiB with 400 before any handler, and
// keep the case of metadata names as sent.
func TestHeadLimitsBothServers(t *testing.T) {
	for _, kind := range []string{"h1", "std"} {
		t.Run(kind, func(t *testing.T) {
			s := startServer(t, kind)
			addr := s.Addr(auth.Blob)
			if got := rawStatus(t, addr, "GET /devstoreaccount1/c/"+strings.Repeat("u", 33<<10)+" HTTP/1.1\r\nHost: h\r\n\r\n"); got != 414 {
				t.Errorf("long URL: %d, want 414", got)
			}
			if got := rawStatus(t, addr, "GET /devstoreaccount1/c HTTP/1.1\r\nHost: h\r\nX-Ms-Meta-Big: "+strings.Repeat("b", 17<<10)+"\r\n\r\n"); got != 400 {
				t.Errorf("long header field: %d, want 400", got)
			}
			if got := rawStatus(t, addr, "GET /devstoreaccount1/c HTTP/1.1\r\nHost: h\r\n"+strings.Repeat("X-Pad: "+strings.Repeat("p", 1000)+"\r\n", 80)+"\r\n"); got != 400 && got != 431 {
				t.Errorf("long head: %d, want 400 (431 on net/http)", got)
			}

			// do sends a signed request and returns the raw response head.
			do := func(method, path string, hdr map[string]string) string {
				t.Helper()
				req, _ := http.NewRequest(method, "http://"+addr+"/devstoreaccount1/"+path, nil)
				req.Header.Set("x-ms-version", "2025-11-05")
				req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
				for k, v := range hdr {
					req.Header[k] = []string{v}
				}
				if err := sharedkey.Sign(req, auth.DevAccount, auth.DevelopmentAccount().Keys[0], false); err != nil {
					t.Fatal(err)
				}
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				req.Write(c)
				br := bufio.NewReader(c)
				var head strings.Builder
				for {
					line, err := br.ReadString('\n')
					head.WriteString(line)
					if err != nil || line == "\r\n" {
						return head.String()
					}
				}
			}
			if r := do("PUT", "meta?restype=container", map[string]string{"x-ms-meta-MixedCase": "v"}); !strings.HasPrefix(r, "HTTP/1.1 201") {
				t.Fatalf("create container: %s", r)
			}
			if r := do("GET", "meta?restype=container", nil); !strings.Contains(r, "\r\nx-ms-meta-MixedCase: v\r\n") {
				t.Errorf("metadata name case lost: %s", r)
			}
		})
	}
}
