package server

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/lazuli-storage/lazuli/internal/blobhttp"
)

// bindWeb binds the static website listener (Config.WebAddr), with TLS
// when the services have it.
func (s *Server) bindWeb(tlsCfg *tls.Config) error {
	if s.cfg.WebAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.WebAddr)
	if err != nil {
		return &ListenError{Service: "web", Addr: s.cfg.WebAddr, Err: err}
	}
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	s.webListener = ln
	s.webAddr = boundAddr(s.cfg.WebAddr, ln)
	return nil
}

// startWeb serves the static website listener bound by bindWeb: the $web
// container of every account, read anonymously.
func (s *Server) startWeb() {
	ln := s.webListener
	s.webListener = nil
	s.webSrv = &http.Server{Handler: s.track(blobhttp.NewWeb(s.services.Blob, s.cfg.Now)), ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout: 120 * time.Second, ErrorLog: slog.NewLogLogger(s.cfg.Log.Handler(), slog.LevelWarn)}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.webSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.cfg.Log.Error("serve", "service", "web", "err", err)
		}
	}()
	s.cfg.Log.Info("listening", "service", "web", "address", s.webAddr)
}

// WebAddr returns the address of the static website listener ("" if off).
func (s *Server) WebAddr() string { return s.webAddr }
