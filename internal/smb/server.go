// Package smb serves the File service's shares over SMB 2 and 3
// (MS-SMB2): dialects 2.0.2 to 3.1.1, NTLMv2 in SPNEGO with the storage
// account name as user and the account key as password, signing, SMB 3
// encryption, compounding, credits and asynchronous lock waits. The wire
// format lives in package wire, NTLM in package ntlm; this package keeps
// connections, sessions, tree connects and opens, and turns each command
// into a call on the Backend, which is the File service.
package smb

import (
	"crypto/rand"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lazuli-storage/lazuli/internal/smb/ntlm"
)

// Config configures a Server.
type Config struct {
	Backend Backend
	// Passwords returns the passwords of a user (an account name): its
	// keys as base64 strings. false means no such account.
	Passwords func(user string) ([]string, bool)
	Log       *slog.Logger
	Now       func() time.Time
	// MaxOpensPerSession bounds the opens of one session (default 4096).
	MaxOpensPerSession int
	// MaxAsyncPerConn bounds pending asynchronous operations (waiting
	// locks) of one connection (default 256).
	MaxAsyncPerConn int
	// MaxSessionsPerConn bounds sessions of one connection (default 64).
	MaxSessionsPerConn int
	// IdleTimeout closes a connection that sent nothing for this long
	// before authenticating (default 30 s) or at all (default 15 min).
	AuthTimeout, IdleTimeout time.Duration
	// MaxUnauthenticated bounds connections without a logon yet; more
	// are closed at once (default 512).
	MaxUnauthenticated int
}

// Server is an SMB server.
type Server struct {
	cfg     Config
	guid    [16]byte
	started time.Time
	auth    ntlm.Server

	// unauth counts connections that have not logged on yet.
	unauth atomic.Int64
	// breaks counts the oplock and lease breaks sent.
	breaks atomic.Int64
	// parked holds durable opens of lost connections.
	parked parked
	// workers runs the requests connections handle concurrently.
	workers *workers

	// sessions holds every session by id, for binding (multichannel.go).
	smu      sync.Mutex
	sessions map[uint64]*session

	mu       sync.Mutex
	lns      map[net.Listener]struct{}
	conns    map[*conn]uint64 // by order of arrival (accepted counts them)
	accepted uint64
	closed   bool
	wg       sync.WaitGroup
}

// New returns a server.
func New(cfg Config) *Server {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxOpensPerSession <= 0 {
		cfg.MaxOpensPerSession = 4096
	}
	if cfg.MaxAsyncPerConn <= 0 {
		cfg.MaxAsyncPerConn = 256
	}
	if cfg.MaxSessionsPerConn <= 0 {
		cfg.MaxSessionsPerConn = 64
	}
	if cfg.AuthTimeout <= 0 {
		cfg.AuthTimeout = 30 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 15 * time.Minute
	}
	if cfg.MaxUnauthenticated <= 0 {
		cfg.MaxUnauthenticated = 512
	}
	s := &Server{cfg: cfg, started: cfg.Now(), lns: map[net.Listener]struct{}{}, conns: map[*conn]uint64{}}
	rand.Read(s.guid[:])
	s.auth = ntlm.Server{Lookup: cfg.Passwords, Target: "LAZULI", Now: cfg.Now}
	s.workers = newWorkers(workerIdle)
	return s
}

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("smb: server closed")

// Serve accepts connections on ln until Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.lns[ln] = struct{}{}
	s.mu.Unlock()
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		if s.unauth.Load() >= int64(s.cfg.MaxUnauthenticated) {
			nc.Close()
			continue
		}
		c := newConn(s, nc)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return ErrServerClosed
		}
		s.accepted++
		s.conns[c] = s.accepted
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			c.serve()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// Close stops the listeners, closes every connection (releasing their
// opens) and waits for them.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for ln := range s.lns {
		ln.Close()
	}
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.workers.close()
	return nil
}

// DropConnections closes every connection (releasing their opens) and
// goes on serving: the File service's membership lapsed, so the handles
// these connections hold may already be released by other instances.
func (s *Server) DropConnections() {
	s.mu.Lock()
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
}

// Stats are the server's figures as of now.
type Stats struct {
	Connections, Sessions, Opens, Locks int
	// Leases counts the opens holding an oplock or lease; Breaks the
	// breaks sent since the server started.
	Leases int
	Breaks int64
}

// Stats counts the connections, sessions, opens and byte-range locks this
// server holds.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	st := Stats{Connections: len(conns), Breaks: s.breaks.Load()}
	seen := map[*session]bool{} // a session bound to several channels counts once
	for _, c := range conns {
		c.mu.Lock()
		sessions := make([]*session, 0, len(c.sessions))
		for _, ss := range c.sessions {
			if ss.valid.Load() && !seen[ss] {
				seen[ss] = true
				st.Sessions++
				sessions = append(sessions, ss)
			}
		}
		c.mu.Unlock()
		for _, ss := range sessions {
			ss.mu.Lock()
			st.Opens += len(ss.opens)
			for _, o := range ss.opens {
				st.Locks += int(max(0, o.locks.Load()))
				if o.caching() {
					st.Leases++
				}
			}
			ss.mu.Unlock()
		}
	}
	return st
}

// Conns returns the number of open connections (tests).
func (s *Server) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// fileTime converts t to a Windows FILETIME (100 ns since 1601).
func fileTime(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano()/100 + 116444736000000000)
}

// fromFileTime converts a FILETIME; 0 and -1 (0xFFFF...) mean "no
// change" and give the zero time.
func fromFileTime(v uint64) time.Time {
	if v == 0 || v == ^uint64(0) || v == ^uint64(0)-1 {
		return time.Time{}
	}
	return time.Unix(0, (int64(v)-116444736000000000)*100).UTC()
}
