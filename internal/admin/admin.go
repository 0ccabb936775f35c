// Package admin is lazuli's admin listener: health and readiness checks,
// Prometheus metrics, the test clock, fault injection, and the mount
// point of the web console.
//
// It knows no service domain: the composition root (internal/server)
// hands it what it serves as functions and handlers. Bound to a loopback
// address it is open to every local process, as the service ports are to
// the well-known development account; bound beyond loopback, every request
// except /healthz and /readyz must carry HTTP Basic credentials: an
// account name and one of its keys (base64, as in connection strings).
package admin

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/lazuli-storage/lazuli/internal/faults"
)

// Config is what the admin listener serves.
type Config struct {
	// Keys returns the keys of an account (false: no such account). When
	// set, every request but the health checks must authenticate with
	// HTTP Basic as an account and one of its keys; nil leaves the
	// listener open (loopback).
	Keys func(account string) ([][]byte, bool)
	// Console serves GET / and every path no other endpoint claims
	// (nil: a page saying the console is not built in).
	Console http.Handler
	// Ready reports whether the server can serve requests: storage open,
	// listeners up, the database reachable. Nil means always ready.
	Ready func(ctx context.Context) error
	// Metrics serves GET /metrics (nil: 404).
	Metrics http.Handler
	// Clock is the test clock of GET, POST and DELETE /clock (nil: 404).
	Clock Clock
	// Faults holds the rules of GET, POST and DELETE /faults (nil: 404).
	Faults *faults.Set
	Log    *slog.Logger
}

// New returns the admin listener's handler.
func New(cfg Config) http.Handler {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeText(w, http.StatusOK, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if cfg.Ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
			defer cancel()
			if err := cfg.Ready(ctx); err != nil {
				writeText(w, http.StatusServiceUnavailable, "not ready: "+err.Error()+"\n")
				return
			}
		}
		writeText(w, http.StatusOK, "ok\n")
	})
	if cfg.Metrics != nil {
		mux.Handle("GET /metrics", cfg.Metrics)
	}
	if cfg.Clock != nil {
		clockRoutes(mux, cfg.Clock)
	}
	if cfg.Faults != nil {
		faultRoutes(mux, cfg.Faults)
	}
	console := cfg.Console
	if console == nil {
		console = http.HandlerFunc(noConsole)
	}
	mux.Handle("/", console)
	if cfg.Keys == nil {
		return mux
	}
	return requireAuth(mux, cfg.Keys)
}

// requireAuth lets through the health checks and requests carrying HTTP
// Basic credentials of an account and one of its keys.
func requireAuth(next http.Handler, keys func(string) ([][]byte, bool)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" || authorized(r, keys) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="lazuli admin", charset="UTF-8"`)
		writeText(w, http.StatusUnauthorized, "authentication required: HTTP Basic with an account name and one of its keys\n")
	})
}

// authorized checks the request's Basic credentials. Every key of the
// account is compared, in constant time, whichever matches.
func authorized(r *http.Request, keys func(string) ([][]byte, bool)) bool {
	user, pass, ok := r.BasicAuth()
	if !ok {
		return false
	}
	ks, ok := keys(user)
	if !ok {
		return false
	}
	given, err := base64.StdEncoding.DecodeString(pass)
	if err != nil {
		return false
	}
	match := 0
	for _, k := range ks {
		match |= subtle.ConstantTimeCompare(given, k)
	}
	return match == 1
}

// noConsole answers the console's paths when no console is built in.
func noConsole(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write([]byte(`<!doctype html><title>lazuli admin</title>
<h1>lazuli admin</h1>
<p>The web console is not built into this binary.</p>
<ul><li><a href="/metrics">/metrics</a><li><a href="/healthz">/healthz</a><li><a href="/readyz">/readyz</a>
<li><a href="/clock">/clock</a><li><a href="/faults">/faults</a></ul>
`))
}

func writeText(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write([]byte(text))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// problem is the JSON body of a refused admin request.
type problem struct {
	Error string `json:"error"`
}
