// Package server is the composition root: it opens the storage engine,
// builds the four services with their shared plumbing, listens on one port
// per service and shuts everything down in order.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/blobhttp"
	"github.com/lazuli-storage/lazuli/internal/file"
	"github.com/lazuli-storage/lazuli/internal/filehttp"
	"github.com/lazuli-storage/lazuli/internal/h1"
	"github.com/lazuli-storage/lazuli/internal/httpx"
	"github.com/lazuli-storage/lazuli/internal/queuehttp"
	"github.com/lazuli-storage/lazuli/internal/tablehttp"
	"github.com/lazuli-storage/lazuli/internal/tlscert"
	"github.com/lazuli-storage/lazuli/storage"
	"github.com/lazuli-storage/lazuli/storage/chunkgc"
	"github.com/lazuli-storage/lazuli/storage/memstore"
	"github.com/lazuli-storage/lazuli/storage/sqlitestore"
)

// Config is everything the server needs; the CLI fills it from flags.
type Config struct {
	// Location is the data directory (ignored with InMemory).
	Location string
	// InMemory keeps all data in memory.
	InMemory bool
	// Sync makes writes fsync before they are acknowledged.
	Sync bool
	// EngineKind chooses the engine of a data directory: EngineLog,
	// EngineSQLite, or "" for the one the directory already holds
	// (EngineLog for a new directory).
	EngineKind string

	// Addresses per service as host:port; port 0 picks a free port. An
	// empty address disables the listener.
	BlobAddr, QueueAddr, TableAddr, FileAddr string

	Accounts      []auth.Account
	Log           *slog.Logger
	Silent        bool
	Debug         io.Writer
	StrictVersion bool
	Loose         bool

	// TLS certificate and key (PEM files), or a PFX certificate file with
	// CertPassword and no KeyFile. Empty means plain HTTP.
	CertFile, KeyFile, CertPassword string
	// OAuth accepts Azure AD bearer tokens (needs TLS); see auth.Config.
	OAuth bool
	// PathStyleOnly takes the account from the first path segment of every
	// request, never from the host name.
	PathStyleOnly bool
	// KeepAlive is how long an idle kept-alive connection of a service
	// stays open (zero: the HTTP server's default).
	KeepAlive map[auth.Service]time.Duration

	// Engine overrides the engine chosen from InMemory/Location (tests).
	Engine storage.Engine
	// ChunkMarkers report chunks referenced outside the built-in services
	// (whose markers are always included).
	ChunkMarkers []storage.ChunkMarker
	// ChunkGCGrace and ChunkGCInterval tune the collector (zero: defaults
	// of package chunkgc).
	ChunkGCGrace, ChunkGCInterval time.Duration
	// Now overrides the clock (tests).
	Now func() time.Time
	// HTTPServer picks the HTTP/1.1 implementation: "" or "h1" for lazuli's
	// own (internal/h1), "std" for net/http's.
	HTTPServer string
}

// Server is a running lazuli.
type Server struct {
	conns    connTracker
	cfg      Config
	engine   storage.Engine
	ownsEng  bool
	handlers map[auth.Service]http.Handler
	servers  []httpServer
	addrs    map[auth.Service]string
	tls      bool
	// listeners are bound by New, before anything is created on disk.
	listeners map[auth.Service]net.Listener
	recovered Recovered
	wg        sync.WaitGroup
	// workers are the background workers of the services (purges) and
	// the chunk collector: Start runs them, Close stops them.
	workers     []func(context.Context) error
	stopWorkers context.CancelFunc
	workersDone sync.WaitGroup
}

// New opens the engine and builds the handlers; it does not listen yet.
func New(cfg Config) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	// Every service that stores chunks reports them to the collector.
	cfg.ChunkMarkers = append([]storage.ChunkMarker{blob.MarkChunks, file.MarkChunks}, cfg.ChunkMarkers...)
	s := &Server{cfg: cfg, addrs: map[auth.Service]string{}, tls: cfg.CertFile != ""}
	if cfg.OAuth && !s.tls {
		return nil, errors.New("OAuth needs HTTPS: give a certificate")
	}
	// Bind first: a port in use must not leave a new data directory
	// behind, and the engine's recovery should not run for nothing.
	if err := s.bind(); err != nil {
		return nil, err
	}
	started := time.Now()
	switch {
	case cfg.Engine != nil:
		s.engine = cfg.Engine
	case cfg.InMemory:
		s.engine, s.ownsEng = memstore.New(), true
	default:
		dir := cfg.Location
		if dir == "" {
			dir = DefaultLocation
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			s.closeListeners()
			return nil, err
		}
		eng, err := openEngine(filepath.Clean(dir), cfg)
		if err != nil {
			s.closeListeners()
			return nil, fmt.Errorf("open data directory %s: %w", dir, err)
		}
		s.engine, s.ownsEng = eng, true
		s.logRecovered(dir, time.Since(started))
	}
	authn := auth.New(auth.Config{Accounts: cfg.Accounts, Log: cfg.Log, Debug: cfg.Debug != nil, Now: cfg.Now, OAuth: cfg.OAuth})
	opts := httpx.Options{Auth: authn, Log: cfg.Log, Silent: cfg.Silent, Debug: cfg.Debug,
		StrictVersion: cfg.StrictVersion, Loose: cfg.Loose, Now: cfg.Now, PathStyleOnly: cfg.PathStyleOnly}
	mk := func(svc auth.Service, newHandler func(httpx.Deps) http.Handler) http.Handler {
		d := httpx.Deps{Engine: s.engine, Auth: authn, Log: cfg.Log, Now: cfg.Now, BaseURL: s.baseURL(svc),
			Workers: func(run func(context.Context) error) { s.workers = append(s.workers, run) }}
		return httpx.Wrap(svc, newHandler(d), opts)
	}
	s.handlers = map[auth.Service]http.Handler{
		auth.Blob:  mk(auth.Blob, blobhttp.New),
		auth.Queue: mk(auth.Queue, queuehttp.New),
		auth.Table: mk(auth.Table, tablehttp.New),
		auth.File:  mk(auth.File, filehttp.New),
	}
	return s, nil
}

// Engines of a data directory (Config.EngineKind).
const (
	// EngineLog keeps every key in memory and appends each write to a
	// log in the directory (memstore.Open): the fastest, for data that
	// fits in memory.
	EngineLog = "log"
	// EngineSQLite keeps the keys in a SQLite database in the directory
	// (sqlitestore): for data larger than memory.
	EngineSQLite = "sqlite"
)

// openEngine opens the engine of the data directory dir.
func openEngine(dir string, cfg Config) (storage.Engine, error) {
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	hasDB := exists(sqlitestore.DBFile)
	kind := cfg.EngineKind
	if kind == "" {
		kind = EngineLog
		if hasDB {
			kind = EngineSQLite
		}
	}
	switch kind {
	case EngineLog:
		if hasDB {
			return nil, fmt.Errorf("the directory holds a SQLite database (%s); use the %s engine", sqlitestore.DBFile, EngineSQLite)
		}
		return memstore.Open(memstore.Options{Dir: dir, Sync: cfg.Sync, Log: cfg.Log})
	case EngineSQLite:
		if exists(memstore.LogDir) {
			return nil, fmt.Errorf("the directory holds a log (%s/); use the %s engine", memstore.LogDir, EngineLog)
		}
		return sqlitestore.Open(sqlitestore.Options{Dir: dir, Sync: cfg.Sync})
	}
	return nil, fmt.Errorf("unknown engine %q (want %s or %s)", kind, EngineLog, EngineSQLite)
}

// DefaultLocation is the data directory used when none is given.
const DefaultLocation = "lazuli-data"

// Engine returns the storage engine.
func (s *Server) Engine() storage.Engine { return s.engine }

// Handler returns the complete handler of a service (plumbing included).
func (s *Server) Handler(svc auth.Service) http.Handler { return s.handlers[svc] }

func (s *Server) baseURL(svc auth.Service) func(string) string {
	return func(account string) string {
		scheme := "http"
		if s.tls {
			scheme = "https"
		}
		addr := s.addrs[svc]
		if addr == "" {
			addr = "127.0.0.1"
		}
		return scheme + "://" + addr + "/" + account
	}
}

// ListenError is a service address that could not be bound.
type ListenError struct {
	Service auth.Service
	Addr    string
	Err     error
}

func (e *ListenError) Error() string {
	return fmt.Sprintf("%s service: listen on %s: %v", e.Service, e.Addr, e.Err)
}

func (e *ListenError) Unwrap() error { return e.Err }

// bind loads the certificate and binds every configured address.
func (s *Server) bind() error {
	var tlsCfg *tls.Config
	if s.tls {
		cert, err := tlscert.Load(s.cfg.CertFile, s.cfg.KeyFile, s.cfg.CertPassword)
		if err != nil {
			return err
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}}
	}
	s.listeners = map[auth.Service]net.Listener{}
	for _, l := range []struct {
		svc  auth.Service
		addr string
	}{{auth.Blob, s.cfg.BlobAddr}, {auth.Queue, s.cfg.QueueAddr}, {auth.Table, s.cfg.TableAddr}, {auth.File, s.cfg.FileAddr}} {
		if l.addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			s.closeListeners()
			return &ListenError{Service: l.svc, Addr: l.addr, Err: err}
		}
		if tlsCfg != nil {
			ln = tls.NewListener(ln, tlsCfg)
		}
		// Record raw header names (Azure keeps metadata names' case).
		ln = httpx.RawListener{Listener: ln}
		s.listeners[l.svc] = ln
		s.addrs[l.svc] = ln.Addr().String()
	}
	return nil
}

// closeListeners closes the listeners bound by bind and not yet served.
func (s *Server) closeListeners() {
	for svc, ln := range s.listeners {
		ln.Close()
		delete(s.listeners, svc)
	}
}

// Start serves every bound address in the background.
func (s *Server) Start() error {
	for _, l := range []struct {
		svc  auth.Service
		addr string
	}{{auth.Blob, s.cfg.BlobAddr}, {auth.Queue, s.cfg.QueueAddr}, {auth.Table, s.cfg.TableAddr}, {auth.File, s.cfg.FileAddr}} {
		ln := s.listeners[l.svc]
		if ln == nil {
			continue
		}
		delete(s.listeners, l.svc)
		srv, err := s.newHTTPServer(s.handlers[l.svc], s.cfg.KeepAlive[l.svc])
		if err != nil {
			ln.Close()
			s.Close()
			return err
		}
		s.servers = append(s.servers, srv)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.cfg.Log.Error("serve", "service", l.svc.String(), "err", err)
			}
		}()
		s.cfg.Log.Info("listening", "service", l.svc.String(), "address", ln.Addr().String())
	}
	if s.stopWorkers == nil {
		if len(s.cfg.ChunkMarkers) > 0 {
			s.workers = append(s.workers, func(ctx context.Context) error {
				chunkgc.Run(ctx, s.engine, s.cfg.ChunkMarkers, s.cfg.ChunkGCGrace, s.cfg.ChunkGCInterval, s.cfg.Log)
				return nil
			})
		}
		ctx, cancel := context.WithCancel(context.Background())
		s.stopWorkers = cancel
		for _, run := range s.workers {
			s.workersDone.Go(func() { run(ctx) })
		}
	}
	return nil
}

// httpServer is what Start and Close need of an HTTP server.
type httpServer interface {
	Serve(net.Listener) error
	Shutdown(context.Context) error
	Close() error
}

func (s *Server) newHTTPServer(h http.Handler, idle time.Duration) (httpServer, error) {
	errLog := slog.NewLogLogger(s.cfg.Log.Handler(), slog.LevelWarn)
	if idle <= 0 {
		idle = 120 * time.Second
	}
	switch s.cfg.HTTPServer {
	case "", "h1":
		return &h1.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: idle,
			ErrorLog: errLog, ConnState: s.conns.track, ConnContext: httpx.ConnContext, Unwrap: unwrapConn}, nil
	case "std":
		return &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: idle,
			ErrorLog: errLog, ConnState: s.conns.track, ConnContext: httpx.ConnContext}, nil
	}
	return nil, fmt.Errorf("unknown HTTP server %q (want h1 or std)", s.cfg.HTTPServer)
}

// unwrapConn reaches the connection beneath the raw-header recorder, so
// the server can see TLS state and half-close TCP.
func unwrapConn(c net.Conn) net.Conn {
	if rc, ok := c.(*httpx.RawConn); ok {
		return rc.Conn
	}
	return c
}

// Addr returns the address a service listens on (after Start).
func (s *Server) Addr(svc auth.Service) string { return s.addrs[svc] }

// Close stops the listeners, waits for requests in flight, and closes the
// engine.
func (s *Server) Close() error {
	s.closeListeners()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	shut := make(chan struct{})
	go func() {
		for _, srv := range s.servers {
			srv.Shutdown(ctx)
		}
		close(shut)
	}()
	// Shutdown waits for requests in flight, but also up to 5 s for
	// connections that were opened and never sent a request. Once nothing
	// is in flight, close whatever is left at once.
	for s.conns.busy() > 0 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	for _, srv := range s.servers {
		srv.Close()
	}
	<-shut
	s.wg.Wait()
	if s.stopWorkers != nil {
		s.stopWorkers()
		s.workersDone.Wait()
	}
	if s.ownsEng {
		return s.engine.Close()
	}
	return nil
}

// connTracker counts connections with a request in flight, for Close.
type connTracker struct {
	mu     sync.Mutex
	active map[net.Conn]struct{}
}

func (t *connTracker) track(c net.Conn, st http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.active == nil {
		t.active = map[net.Conn]struct{}{}
	}
	if st == http.StateActive {
		t.active[c] = struct{}{}
	} else {
		delete(t.active, c)
	}
}

func (t *connTracker) busy() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.active)
}
