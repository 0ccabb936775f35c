package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
	"github.com/lazuli-storage/lazuli/internal/h1"
)

// startServer runs an in-memory lazuli with Blob, Queue and Table listeners.
func startServer(t *testing.T) *Server {
	t.Helper()
	s, err := New(context.Background(), Config{InMemory: true, BlobAddr: "127.0.0.1:0", QueueAddr: "127.0.0.1:0", TableAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// sendRaw sends raw request bytes and returns the response, its body
// read.
func sendRaw(t *testing.T, addr, req string) (*http.Response, string) {
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
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

// The HTTP server refuses a request target longer than 32 KiB, a header
// field longer than 16 KiB and a head larger than 64 KiB before any
// handler, with Azure's error of the service (400, x-ms-error-code, a
// request id, the XML or OData JSON error body), and keep the case of
// metadata names as sent.
func TestHeadLimits(t *testing.T) {
	s := startServer(t)
	addr := s.Addr(auth.Blob)
	pad := func(n int) string { return strings.Repeat("X-Pad: "+strings.Repeat("p", 1000)+"\r\n", n) }
	for _, c := range []struct {
		name, head, code string
	}{
		{"long URL", "GET /devstoreaccount1/c/" + strings.Repeat("u", 33<<10) + " HTTP/1.1\r\nHost: h\r\n\r\n", "InvalidUri"},
		{"very long URL", "GET /devstoreaccount1/c/" + strings.Repeat("u", 100<<10) + " HTTP/1.1\r\nHost: h\r\n\r\n", "InvalidUri"},
		{"long header field", "GET /devstoreaccount1/c HTTP/1.1\r\nHost: h\r\nX-Ms-Meta-Big: " + strings.Repeat("b", 17<<10) + "\r\n\r\n", "InvalidHeaderValue"},
		{"very long header field", "DELETE /devstoreaccount1/c HTTP/1.1\r\nHost: h\r\nAuthorization: SharedKey devstoreaccount1:" + strings.Repeat("A", 100000) + "\r\n\r\n", "InvalidHeaderValue"},
		{"long head", "GET /devstoreaccount1/c HTTP/1.1\r\nHost: h\r\n" + pad(66) + "\r\n", "InvalidHeaderValue"},
		{"very long head", "GET /devstoreaccount1/c HTTP/1.1\r\nHost: h\r\n" + pad(200) + "\r\n", "InvalidHeaderValue"},
	} {
		for _, svc := range []auth.Service{auth.Blob, auth.Table} {
			resp, body := sendRaw(t, s.Addr(svc), c.head)
			if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != c.code || resp.Header.Get("x-ms-request-id") == "" {
				t.Errorf("%s on %s: %d %q, want 400 %s with a request id", c.name, svc, resp.StatusCode, resp.Header.Get("x-ms-error-code"), c.code)
			}
			want := "<Code>" + c.code + "</Code>"
			if svc == auth.Table {
				want = `"code":"` + c.code + `"`
			}
			if !strings.Contains(body, want) {
				t.Errorf("%s on %s: body %q, want the service's error body", c.name, svc, body)
			}
			if !resp.Close {
				t.Errorf("%s on %s: the connection stays open", c.name, svc)
			}
		}
	}
	// Under the limits, a head is served.
	if resp, _ := sendRaw(t, addr, "GET /devstoreaccount1/c HTTP/1.1\r\nHost: h\r\n"+pad(60)+"\r\n"); resp.StatusCode >= 500 || resp.Header.Get("x-ms-error-code") == "InvalidHeaderValue" {
		t.Errorf("60 KiB head: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
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
}

// When the server's budget of unauthenticated head bytes is spent, a head
// that needs more of it is answered 503 ServerBusy, as an Azure error of
// the service; a small head (within what a
// connection's read buffer holds anyway) is still served, and so is a
// large one once the budget is back.
func TestHeadBudgetRefusal(t *testing.T) {
	s := startServer(t)
	big := "GET /devstoreaccount1/c?restype=container HTTP/1.1\r\nHost: h\r\nX-Pad: " + strings.Repeat("p", 12<<10) + "\r\n\r\n"
	small := "GET /devstoreaccount1/c?restype=container HTTP/1.1\r\nHost: h\r\n\r\n"
	if !s.budget.Reserve(h1.DefaultHeaderBudget) {
		t.Fatal("the budget is in use")
	}
	for _, svc := range []auth.Service{auth.Blob, auth.Table} {
		resp, body := sendRaw(t, s.Addr(svc), big)
		if resp.StatusCode != 503 || resp.Header.Get("x-ms-error-code") != "ServerBusy" || !strings.Contains(body, "ServerBusy") {
			t.Errorf("%s, budget spent: %d %q %q, want 503 ServerBusy", svc, resp.StatusCode, resp.Header.Get("x-ms-error-code"), body)
		}
		if resp, _ := sendRaw(t, s.Addr(svc), small); resp.StatusCode == 503 {
			t.Errorf("%s, budget spent: a small head is refused too", svc)
		}
	}
	s.budget.Release(h1.DefaultHeaderBudget)
	if resp, _ := sendRaw(t, s.Addr(auth.Blob), big); resp.StatusCode == 503 {
		t.Errorf("budget back: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	// Given back once each request is over (just after its response).
	for deadline := time.Now().Add(5 * time.Second); s.budget.Used() != 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if used := s.budget.Used(); used != 0 {
		t.Errorf("%d bytes of the budget still held after the requests", used)
	}
}

// A request without credentials never gets its body read into memory
// before it is refused: Table's batch (up to 4 MiB) and entity bodies are
// answered 401 from the headers, while the body has not been sent.
func TestAnonymousBodiesAreNotRead(t *testing.T) {
	s := startServer(t)
	for _, head := range []string{
		"POST /devstoreaccount1/$batch HTTP/1.1\r\nHost: h\r\nContent-Type: multipart/mixed; boundary=b\r\nContent-Length: 4000000\r\n\r\n",
		"POST /devstoreaccount1/t HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n",
		"PUT /devstoreaccount1/t(PartitionKey='p',RowKey='r') HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n",
	} {
		resp, body := sendRaw(t, s.Addr(auth.Table), head)
		if resp.StatusCode != 401 || resp.Header.Get("x-ms-error-code") != "NoAuthenticationInformation" {
			t.Errorf("%.40q: %d %s %s, want 401 NoAuthenticationInformation", head, resp.StatusCode, resp.Header.Get("x-ms-error-code"), body)
		}
	}
}
