package server

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/console"
)

// startAdminServer starts an in-memory server with only the admin
// listener (and Blob) on addr.
func startAdminServer(t *testing.T, addr string) *Server {
	t.Helper()
	s, err := New(Config{InMemory: true, BlobAddr: "127.0.0.1:0", AdminAddr: addr})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ready(t.Context()); err == nil {
		t.Error("ready before Start")
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func adminGet(t *testing.T, url string, user, key string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if user != "" {
		req.SetBasicAuth(user, key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func TestAdminListenerOnLoopbackIsOpen(t *testing.T) {
	s := startAdminServer(t, "127.0.0.1:0")
	base := "http://" + s.AdminAddr()
	for _, p := range []string{"/healthz", "/readyz", "/"} {
		if code := adminGet(t, base+p, "", ""); code != 200 {
			t.Errorf("GET %s: %d", p, code)
		}
	}
	s.Close()
	if err := s.ready(t.Context()); err == nil {
		t.Error("ready after Close")
	}
}

// TestAdminListenerBeyondLoopbackAsksForAccount: bound to every address,
// the admin listener wants an account and its key for all but health.
func TestAdminListenerBeyondLoopbackAsksForAccount(t *testing.T) {
	s := startAdminServer(t, "0.0.0.0:0")
	_, port, _ := net.SplitHostPort(s.AdminAddr())
	base := "http://127.0.0.1:" + port
	if code := adminGet(t, base+"/healthz", "", ""); code != 200 {
		t.Errorf("healthz: %d", code)
	}
	if code := adminGet(t, base+"/readyz", "", ""); code != 200 {
		t.Errorf("readyz: %d", code)
	}
	if code := adminGet(t, base+"/", "", ""); code != 401 {
		t.Errorf("console without credentials: %d, want 401", code)
	}
	if code := adminGet(t, base+"/", auth.DevAccount, auth.DevKey); code != 200 {
		t.Errorf("console with the account's key: %d", code)
	}
}

// TestConsoleRequestsStayValidWithTheClockMoved: with the test clock an
// hour ahead, the console's signed requests still pass the services'
// request-date check, which stays on real time.
func TestConsoleRequestsStayValidWithTheClockMoved(t *testing.T) {
	s := startAdminServer(t, "127.0.0.1:0")
	base := "http://" + s.AdminAddr()
	resp, err := http.Post(base+"/clock", "application/json", strings.NewReader(`{"advance":"1h"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("advance: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("PUT", base+"/api/blob/devstoreaccount1/movedclock?restype=container", nil)
	req.Header.Set(console.HeaderName, "1")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("Create Container through the console, clock +1h: %d %s", resp.StatusCode, b)
	}
}
