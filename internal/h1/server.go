// Package h1 is a lean HTTP/1.1 server for lazuli's services.
//
// It serves an ordinary http.Handler over a net.Listener, handing it a real
// *http.Request and an http.ResponseWriter with the semantics net/http gives
// handlers (framing, keep-alive, 100-continue, content sniffing, unread body
// handling), but with less work per request: one goroutine per connection
// and no background read for quick requests (see watch.go), pooled
// buffers, header names canonicalized without allocating for the common
// ones, no per-request context, and one write per response in the common
// case. A request's context is the connection's, cancelled when the client
// goes away.
//
// Its parser agrees with net/http's on every request (FuzzDifferential
// checks it). Deliberate differences from net/http: no HTTP/2, no
// Hijacker, no response trailers, request trailers are read and dropped,
// x-ms-meta-* header names keep the case the client sent, a request with
// both Transfer-Encoding: chunked and Content-Length is refused, and the
// limits on request heads are Azure's (limits.go).
package h1

import (
	"context"
	"errors"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the timeouts.
const (
	DefaultReadHeaderTimeout = 30 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultProgressTimeout   = 60 * time.Second
)

// Server serves HTTP/1.x requests to Handler. Its zero value (plus a
// Handler) is ready to use; the fields must not change once serving.
type Server struct {
	Handler http.Handler
	// ConnContext derives the context of a connection's requests, as
	// http.Server.ConnContext does.
	ConnContext func(ctx context.Context, c net.Conn) context.Context
	// ConnState is told of every connection's state changes, as with
	// http.Server.ConnState (StateHijacked never happens).
	ConnState func(net.Conn, http.ConnState)
	// ErrorLog receives handler panics and protocol misuse by handlers;
	// nil means the log package's standard logger.
	ErrorLog *log.Logger
	// ReadHeaderTimeout bounds reading a request's line and headers.
	ReadHeaderTimeout time.Duration
	// IdleTimeout bounds waiting for the next request on a kept-alive
	// connection.
	IdleTimeout time.Duration
	// ProgressTimeout closes a connection whose request body brings no
	// byte, or whose response the client takes no byte of, for this long;
	// a slow transfer that keeps moving is never cut off. Zero means
	// DefaultProgressTimeout.
	ProgressTimeout time.Duration
	// Unwrap, when set, returns the connection beneath one accepted from
	// the listener (a recording wrapper, say), so that the server can find
	// a *tls.Conn for Request.TLS and a TCP connection to half-close.
	Unwrap func(net.Conn) net.Conn
	// HeaderBudget bounds the request head bytes held by this server's
	// connections (and those of every server sharing it); nil means a
	// budget of DefaultHeaderBudget for this server alone.
	HeaderBudget *Budget
	// Refused, when set, answers a request whose head is refused for one
	// of the limits (ErrURITooLong, ErrFieldTooLong, ErrHeadTooLarge,
	// ErrOverBudget) in place of a plain-text answer. The request has no
	// header fields and no body, its method and target are those of the
	// request line when they could be read (GET and "/" otherwise), and
	// the connection closes after the response.
	Refused func(w http.ResponseWriter, r *http.Request, err error)

	budgetOnce sync.Once
	mu         sync.Mutex
	listeners  map[*net.Listener]struct{}
	conns      map[*conn]struct{}
	shutdown   atomic.Bool
}

func (s *Server) logf(format string, args ...any) {
	if s.ErrorLog != nil {
		s.ErrorLog.Printf(format, args...)
		return
	}
	log.Printf(format, args...)
}

func (s *Server) budget() *Budget {
	s.budgetOnce.Do(func() {
		if s.HeaderBudget == nil {
			s.HeaderBudget = NewBudget(DefaultHeaderBudget)
		}
	})
	return s.HeaderBudget
}

func (s *Server) headerTimeout() time.Duration {
	if s.ReadHeaderTimeout > 0 {
		return s.ReadHeaderTimeout
	}
	return DefaultReadHeaderTimeout
}

func (s *Server) progressTimeout() time.Duration {
	if s.ProgressTimeout > 0 {
		return s.ProgressTimeout
	}
	return DefaultProgressTimeout
}

func (s *Server) idleTimeout() time.Duration {
	if s.IdleTimeout > 0 {
		return s.IdleTimeout
	}
	return DefaultIdleTimeout
}

// Serve accepts connections on ln and serves each on its own goroutine. It
// always returns a non-nil error and closes ln; after Shutdown or Close the
// error is http.ErrServerClosed.
func (s *Server) Serve(ln net.Listener) error {
	if !s.trackListener(&ln, true) {
		ln.Close()
		return http.ErrServerClosed
	}
	defer s.trackListener(&ln, false)
	var delay time.Duration
	for {
		rwc, err := ln.Accept()
		if err != nil {
			if s.shutdown.Load() {
				return http.ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				// Out of file descriptors and the like: back off.
				if delay == 0 {
					delay = 5 * time.Millisecond
				} else {
					delay = min(2*delay, time.Second)
				}
				s.logf("h1: accept error: %v; retrying in %v", err, delay)
				time.Sleep(delay)
				continue
			}
			ln.Close()
			return err
		}
		delay = 0
		c := s.newConn(rwc)
		if !s.trackConn(c, true) {
			rwc.Close()
			return http.ErrServerClosed
		}
		if s.ConnState != nil {
			s.ConnState(rwc, http.StateNew)
		}
		go c.serve()
	}
}

func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

func (s *Server) trackListener(ln *net.Listener, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		if s.shutdown.Load() {
			return false
		}
		if s.listeners == nil {
			s.listeners = map[*net.Listener]struct{}{}
		}
		s.listeners[ln] = struct{}{}
	} else {
		delete(s.listeners, ln)
	}
	return true
}

func (s *Server) trackConn(c *conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		if s.shutdown.Load() {
			return false
		}
		if s.conns == nil {
			s.conns = map[*conn]struct{}{}
		}
		s.conns[c] = struct{}{}
	} else {
		delete(s.conns, c)
	}
	return true
}

func (s *Server) closeListeners() {
	for ln := range s.listeners {
		(*ln).Close()
	}
	clear(s.listeners)
}

// Close closes the listeners and every connection at once, without waiting
// for requests in flight.
func (s *Server) Close() error {
	s.shutdown.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeListeners()
	for c := range s.conns {
		c.state.Store(stateClosing)
		c.rwc.Close()
	}
	return nil
}

// Shutdown stops accepting connections, closes the idle ones (including
// those that have not yet sent a byte), and waits for requests in flight to
// finish (their connections then close) or ctx to end, whose error it then
// returns.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutdown.Store(true)
	s.mu.Lock()
	s.closeListeners()
	s.mu.Unlock()
	wait := time.Millisecond
	for {
		if s.closeIdle() {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// closeIdle closes every connection waiting for a request and reports
// whether none is left.
func (s *Server) closeIdle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.state.CompareAndSwap(stateIdle, stateClosing) || c.state.CompareAndSwap(stateNew, stateClosing) {
			c.rwc.Close()
		}
	}
	return len(s.conns) == 0
}
