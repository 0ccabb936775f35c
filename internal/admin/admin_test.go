package admin_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/admin"
)

// get sends a GET to h and returns the status and body.
func get(t *testing.T, h http.Handler, path string, setup func(*http.Request)) (int, string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, path, nil)
	if setup != nil {
		setup(r)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	b, _ := io.ReadAll(w.Result().Body)
	return w.Code, string(b)
}

func TestHealthAndReadiness(t *testing.T) {
	var notReady error
	h := admin.New(admin.Config{Ready: func(context.Context) error { return notReady }})
	if code, body := get(t, h, "/healthz", nil); code != 200 || body != "ok\n" {
		t.Errorf("healthz: %d %q", code, body)
	}
	if code, _ := get(t, h, "/readyz", nil); code != 200 {
		t.Errorf("readyz when ready: %d", code)
	}
	notReady = errors.New("storage unreachable")
	if code, body := get(t, h, "/readyz", nil); code != 503 || !strings.Contains(body, "storage unreachable") {
		t.Errorf("readyz when not ready: %d %q", code, body)
	}
	// The process still serves.
	if code, _ := get(t, h, "/healthz", nil); code != 200 {
		t.Errorf("healthz when not ready: %d", code)
	}
}

func TestConsoleMount(t *testing.T) {
	h := admin.New(admin.Config{})
	if code, body := get(t, h, "/", nil); code != 200 || !strings.Contains(body, "not built") {
		t.Errorf("no console: %d %q", code, body)
	}
	if code, _ := get(t, h, "/containers/x", nil); code != 404 {
		t.Errorf("no console, sub-path: %d", code)
	}
	console := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "console "+r.URL.Path) })
	h = admin.New(admin.Config{Console: console})
	for _, p := range []string{"/", "/blob/devstoreaccount1/c/b", "/assets/app.js"} {
		if code, body := get(t, h, p, nil); code != 200 || body != "console "+p {
			t.Errorf("console %s: %d %q", p, code, body)
		}
	}
	// The admin endpoints stay the admin's.
	if code, body := get(t, h, "/healthz", nil); code != 200 || body != "ok\n" {
		t.Errorf("healthz beside the console: %d %q", code, body)
	}
}

// TestAuthBeyondLoopback: with Keys set (a listener beyond loopback) every
// request but the health checks needs an account's name and key.
func TestAuthBeyondLoopback(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	other := []byte("fedcba9876543210fedcba9876543210")
	keys := func(name string) ([][]byte, bool) {
		if name != "acct" {
			return nil, false
		}
		return [][]byte{key, other}, true
	}
	console := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "console") })
	h := admin.New(admin.Config{Keys: keys, Console: console})
	basic := func(user string, k []byte) func(*http.Request) {
		return func(r *http.Request) { r.SetBasicAuth(user, base64.StdEncoding.EncodeToString(k)) }
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, _ := get(t, h, p, nil); code != 200 {
			t.Errorf("%s without credentials: %d", p, code)
		}
	}
	for name, setup := range map[string]func(*http.Request){
		"none":          nil,
		"wrong key":     basic("acct", []byte("nope")),
		"unknown user":  basic("someone", key),
		"not base64":    func(r *http.Request) { r.SetBasicAuth("acct", "%%%") },
		"bearer scheme": func(r *http.Request) { r.Header.Set("Authorization", "Bearer x") },
	} {
		code, _ := get(t, h, "/", setup)
		if code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", name, code)
		}
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Basic ") {
		t.Errorf("401 without a Basic challenge: %q", w.Header().Get("WWW-Authenticate"))
	}
	for _, k := range [][]byte{key, other} {
		if code, body := get(t, h, "/", basic("acct", k)); code != 200 || body != "console" {
			t.Errorf("with a key: %d %q", code, body)
		}
	}
}
