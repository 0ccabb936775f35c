package server

import (
	"context"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/console"
)

// consoleDo sends a request as the console's page does (with Basic
// credentials when user is set) and returns the status and body.
func consoleDo(t *testing.T, method, url, user, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	req.Header.Set(console.HeaderName, "1")
	if user != "" {
		req.SetBasicAuth(user, key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestConsoleOnAdminListener: the admin listener serves the web console,
// whose proxy reaches the services' data.
func TestConsoleOnAdminListener(t *testing.T) {
	s := startAdminServer(t, "127.0.0.1:0")
	base := "http://" + s.AdminAddr()
	code, page := consoleDo(t, "GET", base+"/", "", "")
	if code != 200 || !strings.Contains(page, "lazuli console") {
		t.Fatalf("GET /: %d %.200s", code, page)
	}
	if code, _ := consoleDo(t, "PUT", base+"/api/blob/devstoreaccount1/made-here?restype=container", "", ""); code != 201 {
		t.Fatalf("create container: %d", code)
	}
	_, list := consoleDo(t, "GET", base+"/api/blob/devstoreaccount1/?comp=list", "", "")
	if !strings.Contains(list, "<Name>made-here</Name>") {
		t.Fatalf("listing %s", list)
	}
	// Only Blob listens: the console offers Blob alone.
	code, accounts := consoleDo(t, "GET", base+"/api/accounts", "", "")
	if code != 200 || !strings.Contains(accounts, `"services":["blob"]`) {
		t.Fatalf("accounts: %d %s", code, accounts)
	}
	if code, _ := consoleDo(t, "GET", base+"/api/queue/devstoreaccount1/?comp=list", "", ""); code != 404 {
		t.Fatalf("queue with its port off: %d, want 404", code)
	}
}

// TestConsoleBeyondLoopbackActsAsTheSignedInAccount: with credentials
// asked for, the console shows and acts as the signed-in account only.
func TestConsoleBeyondLoopbackActsAsTheSignedInAccount(t *testing.T) {
	key := []byte("the other account's key")
	s, err := New(context.Background(), Config{InMemory: true, BlobAddr: "127.0.0.1:0", AdminAddr: "0.0.0.0:0", Accounts: []auth.Account{{Name: "other", Keys: [][]byte{key}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, port, _ := net.SplitHostPort(s.AdminAddr())
	base := "http://127.0.0.1:" + port
	k := base64.StdEncoding.EncodeToString(key)
	if code, _ := consoleDo(t, "GET", base+"/api/accounts", "", ""); code != 401 {
		t.Fatalf("without credentials: %d", code)
	}
	code, body := consoleDo(t, "GET", base+"/api/accounts", "other", k)
	if code != 200 || !strings.Contains(body, `"accounts":["other"]`) {
		t.Fatalf("accounts: %d %s", code, body)
	}
	if code, body := consoleDo(t, "PUT", base+"/api/blob/other/mine?restype=container", "other", k); code != 201 {
		t.Fatalf("own account: %d %s", code, body)
	}
	if code, _ := consoleDo(t, "GET", base+"/api/blob/devstoreaccount1/?comp=list", "other", k); code != 403 {
		t.Fatalf("another account: %d, want 403", code)
	}
}
