package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/lazuli-storage/lazuli/internal/admin"
	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/console"
	"github.com/lazuli-storage/lazuli/storage"
)

// startAdmin serves the admin listener bound by bind.
func (s *Server) startAdmin() {
	ln := s.adminListener
	s.adminListener = nil
	cfg := admin.Config{Console: s.cfg.Console, Ready: s.ready, Log: s.cfg.Log, Metrics: s.metrics.Handler(), Faults: s.faults,
		Clock: s.clock}
	restricted := !loopback(ln.Addr())
	if restricted {
		// Reachable from other machines: only an account's holder may
		// read the data or steer the server.
		cfg.Keys = func(name string) ([][]byte, bool) {
			acc, ok := s.authn.Account(name)
			return acc.Keys, ok
		}
	}
	if cfg.Console == nil {
		cfg.Console = s.console(restricted)
	}
	s.adminSrv = &http.Server{Handler: admin.New(cfg), ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: slog.NewLogLogger(s.cfg.Log.Handler(), slog.LevelWarn)}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.adminSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.cfg.Log.Error("serve", "service", "admin", "err", err)
		}
	}()
	s.cfg.Log.Info("listening", "service", "admin", "address", s.adminAddr)
}

// loopback reports whether addr is a loopback address.
func loopback(addr net.Addr) bool {
	ta, ok := addr.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// ready is the admin listener's readiness check: every listener serves,
// the server is not shutting down, and an engine that depends on a
// database server reaches it.
func (s *Server) ready(ctx context.Context) error {
	switch {
	case s.closing.Load():
		return errors.New("shutting down")
	case !s.started.Load():
		return errors.New("starting")
	}
	if p, ok := s.engine.(storage.Pinger); ok {
		if err := p.Ping(ctx); err != nil {
			return errors.New("storage unreachable: " + err.Error())
		}
	}
	return nil
}

// AdminAddr returns the address of the admin listener ("" if off).
func (s *Server) AdminAddr() string { return s.adminAddr }

// console builds the web console over the services' handlers. When the
// admin listener asks for credentials, a request reaches the console only
// with an account's name and key (admin.Config.Keys), and the console acts
// as that account alone.
func (s *Server) console(restricted bool) http.Handler {
	// The console dates its requests by the clock the services check
	// request dates against: real time, even with the test clock moved.
	cfg := console.Config{Accounts: s.authn.Accounts(), Handlers: map[auth.Service]http.Handler{}, Now: s.realNow, Log: s.cfg.Log}
	for svc, h := range s.handlers {
		// A service whose port is off is off in the console too.
		if s.addrs[svc] != "" {
			cfg.Handlers[svc] = h
		}
	}
	if restricted {
		cfg.Caller = func(r *http.Request) (string, bool) {
			user, _, _ := r.BasicAuth()
			return user, true
		}
	}
	return console.New(cfg)
}

// floor is the test clock's floor for written times and ETag stamps (nil
// without a test clock).
func (s *Server) floor() func() time.Time {
	if s.clock == nil {
		return nil
	}
	return s.clock.Floor
}
