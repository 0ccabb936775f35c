package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
	"github.com/lazuli-storage/lazuli/internal/console"
)

// startAdminServer starts an in-memory server with only the admin
// listener (and Blob) on addr.
func startAdminServer(t *testing.T, addr string) *Server {
	t.Helper()
	s, err := New(context.Background(), Config{InMemory: true, BlobAddr: "127.0.0.1:0", AdminAddr: addr})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ready(t.Context()); err == nil {
		t.Error("ready before Start")
	}
	if err := s.Start(context.Background()); err != nil {
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

// TestInjectedReset: a reset rule cuts Get Blob mid-body and Put Blob
// before its head.
func TestInjectedReset(t *testing.T) {
	s, err := New(context.Background(), Config{InMemory: true, BlobAddr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	signedDo(t, s, auth.Blob, "PUT", "resets?restype=container", nil, nil)
	body := strings.Repeat("0123456789", 1000)
	if r := signedDo(t, s, auth.Blob, "PUT", "resets/b", []byte(body), map[string]string{"x-ms-blob-type": "BlockBlob"}); r.StatusCode != 201 {
		t.Fatalf("Put Blob: %d", r.StatusCode)
	}
	resp, err := http.Post("http://"+s.AdminAddr()+"/faults", "application/json",
		strings.NewReader(`[{"operation":"GetBlob","reset":true,"count":1},{"operation":"PutBlob","reset":true,"count":1}]`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("POST /faults: %d", resp.StatusCode)
	}
	// Get Blob: the head, then part of the body, then the end.
	req, _ := http.NewRequest("GET", "http://"+s.Addr(auth.Blob)+"/devstoreaccount1/resets/b", nil)
	req.Header.Set("x-ms-version", "2025-11-05")
	sharedkey.Sign(req, auth.DevAccount, auth.DevelopmentAccount().Keys[0], false)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err = client.Do(req)
	if err != nil {
		t.Fatalf("Get Blob: no head: %v", err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || err == nil || len(got) == 0 || len(got) >= len(body) {
		t.Errorf("Get Blob cut: status %d, %d of %d bytes, err %v", resp.StatusCode, len(got), len(body), err)
	}
	// Put Blob answers no body: the connection ends before the head.
	req, _ = http.NewRequest("PUT", "http://"+s.Addr(auth.Blob)+"/devstoreaccount1/resets/c", strings.NewReader("x"))
	req.Header.Set("x-ms-version", "2025-11-05")
	req.Header.Set("x-ms-blob-type", "BlockBlob")
	sharedkey.Sign(req, auth.DevAccount, auth.DevelopmentAccount().Keys[0], false)
	if resp, err := client.Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("Put Blob cut: answered %d", resp.StatusCode)
	}
}
