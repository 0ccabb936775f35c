// Package server is the composition root: it opens the storage engine,
// builds the four services with their shared plumbing, listens on one port
// per service and shuts everything down in order.
//
// It is the only package that knows every other one: cmd/lazuli turns
// flags and environment into a Config, the emulator package turns Options
// into one, and Server owns the engine, the HTTP and SMB listeners and the
// background workers (purges, chunk collection) until Close.
package server

import (
	"cmp"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lazuli-storage/lazuli/internal/admin"
	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/cluster"
	"github.com/lazuli-storage/lazuli/internal/engine/chunkgc"
	"github.com/lazuli-storage/lazuli/internal/engine/logstore"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/engine/pgstore"
	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/internal/faults"
	"github.com/lazuli-storage/lazuli/internal/file"
	"github.com/lazuli-storage/lazuli/internal/filehttp"
	"github.com/lazuli-storage/lazuli/internal/h1"
	"github.com/lazuli-storage/lazuli/internal/httpx"
	"github.com/lazuli-storage/lazuli/internal/md5lanes"
	"github.com/lazuli-storage/lazuli/internal/queuehttp"
	"github.com/lazuli-storage/lazuli/internal/smb"
	"github.com/lazuli-storage/lazuli/internal/smbfile"
	"github.com/lazuli-storage/lazuli/internal/tablehttp"
	"github.com/lazuli-storage/lazuli/internal/tlscert"
	"github.com/lazuli-storage/lazuli/storage"
)

// Config is everything the server needs; the CLI fills it from flags.
type Config struct {
	// Location is the data directory (ignored with InMemory).
	Location string
	// InMemory keeps all data in memory.
	InMemory bool
	// Sync makes writes fsync before they are acknowledged (the CLI's
	// default): they survive the machine losing power, not only the
	// process being killed.
	Sync bool
	// Salvage lets the log engine start past damage other than a torn
	// tail, moving the damaged files aside (logstore.Options.Salvage).
	Salvage bool
	// EngineKind chooses the engine of a data directory: EngineLog,
	// EngineSQLite, or "" for the one the directory already holds
	// (EngineLog for a new directory).
	EngineKind string

	// Addresses per service as host:port; port 0 picks a free port. An
	// empty address disables the listener.
	BlobAddr, QueueAddr, TableAddr, FileAddr string
	// SMBAddr is the SMB listener of the File service's shares (host:port,
	// port 0 picks a free port; empty disables it).
	SMBAddr string
	// AdminAddr is the admin listener (health, metrics, test clock,
	// faults, console; host:port, port 0 picks a free port, empty
	// disables it). Beyond loopback it asks for an account's credentials.
	AdminAddr string
	// WebAddr is the static website listener: the $web container of each
	// account, served anonymously at /<account>/<path> (host:port, port
	// 0 picks a free port, empty disables it).
	WebAddr string
	// Console replaces the web console the admin listener serves at /
	// (nil: lazuli's own, package console).
	Console http.Handler

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
	// EncryptionScopes are the Blob encryption scopes every account has,
	// which x-ms-encryption-scope and x-ms-default-encryption-scope may
	// name.
	EncryptionScopes []string
	// BlobVersioning keeps blob versions in every account, and
	// BlobVersioningAccounts in the accounts it names (Azure's account
	// setting IsVersioningEnabled, which lives in the management plane).
	BlobVersioning         bool
	BlobVersioningAccounts []string
	// ContainerDeleteRetentionDays keeps deleted containers that many
	// days for Restore Container (0: off; Azure's account setting
	// ContainerDeleteRetentionPolicy).
	ContainerDeleteRetentionDays int
	// ContainerDeleteRetentionAccounts gives the accounts it names their
	// own container delete retention days, over
	// ContainerDeleteRetentionDays (0: off for that account).
	ContainerDeleteRetentionAccounts map[string]int
	// HierarchicalNamespace gives every account a hierarchical namespace
	// (the dfs API on the Blob port); HierarchicalNamespaceAccounts names
	// accounts that have one when it is off.
	HierarchicalNamespace         bool
	HierarchicalNamespaceAccounts []string
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
	// ChunkGCInterval is the time between chunk collections (zero: the
	// default of package chunkgc). Unreferenced chunks go within two
	// intervals of the end of the requests in flight when they were
	// found. ChunkGCGrace plays no part then: the server knows its requests.
	// With the postgres engine other instances' requests are unknown, and
	// a chunk goes only once it has been unreferenced for ChunkGCGrace
	// (zero: chunkgc.DefaultGrace), by the database's clock.
	ChunkGCGrace, ChunkGCInterval time.Duration
	// ServicesNow, when set, is the clock of the domain services' rules
	// and written times instead of Now: the import's, which replays the
	// times the reference emulator recorded.
	ServicesNow func() time.Time
	// Now overrides the clock (tests).
	// With the postgres engine it is the instance's own clock, which the
	// engine corrects against the database's (pgstore.Store.Now), so every
	// instance decides times by one clock.
	Now func() time.Time

	// PostgresURL is the database of the postgres engine (EngineKind
	// EnginePostgres); PostgresMaxConns bounds its connection pool (0:
	// the driver's default).
	PostgresURL      string
	PostgresMaxConns int
	// Advertise names, per service, the host:port that URLs in responses
	// carry instead of the listener's address: the load balancer's, when
	// several instances serve one database behind it.
	Advertise map[auth.Service]string
	// ProgressTimeout closes a connection whose request body or response
	// makes no progress for this long (zero: h1.DefaultProgressTimeout).
	ProgressTimeout time.Duration
	// InstanceExpiry is, with the postgres engine, how long an instance
	// may go without renewing its membership before the others release
	// its SMB handles (cluster.Membership; zero: DefaultInstanceExpiry).
	// They are released within InstanceExpiry*4/3 of its last renewal.
	InstanceExpiry time.Duration
}

// DefaultInstanceExpiry is Config.InstanceExpiry's default: the handles
// of a dead instance go within about 27 s (20 s plus two beats of 3.3 s).
const DefaultInstanceExpiry = 20 * time.Second

// Server is a running lazuli.
type Server struct {
	conns    connTracker
	cfg      Config
	engine   storage.Engine
	ownsEng  bool
	handlers map[auth.Service]http.Handler
	servers  []*h1.Server
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
	activity    chunkgc.Activity // requests in flight, for the chunk collector
	// budget bounds the request head bytes all listeners hold before
	// their handlers run.
	budget *h1.Budget
	smb    *smb.Server
	// md5 hashes the request bodies of the Blob and File services.
	md5 *md5lanes.Lanes
	// services are the domain services, built once and shared by every
	// protocol layer (HTTP, SMB, the console through the handlers).
	services Services
	smbAddr  string
	// members is this instance's membership among those serving SMB
	// from the engine: its handles are released by the others if it dies.
	members *cluster.Membership
	// smbListener is bound by New with the others and served by Start.
	smbListener net.Listener
	// adminListener is bound by New and served by Start; adminSrv serves
	// it, adminAddr is its address.
	adminListener net.Listener
	adminSrv      *http.Server
	adminAddr     string
	// webListener is bound by New and served by Start (see web.go).
	webListener net.Listener
	webSrv      *http.Server
	webAddr     string
	authn       *auth.Authenticator
	metrics     *admin.Metrics // nil without an admin listener
	faults      *faults.Set    // nil without an admin listener
	clock       *cluster.Clock // nil without an admin listener
	realNow     func() time.Time
	// started is set once Start has served every listener, closing once
	// Close begins (for the readiness check).
	started, closing atomic.Bool
}

// New opens the engine and builds the services and their handlers; it
// does not listen yet. ctx bounds the opening (a database engine's
// connection, the test clock's offset), not the server's life.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	// Every service that stores chunks reports them to the collector.
	cfg.ChunkMarkers = append([]storage.ChunkMarker{blob.MarkChunks, file.MarkChunks}, cfg.ChunkMarkers...)
	s := &Server{cfg: cfg, addrs: map[auth.Service]string{}, tls: cfg.CertFile != "", budget: h1.NewBudget(h1.DefaultHeaderBudget)}
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
	case cfg.EngineKind == EnginePostgres:
		pg, err := pgstore.Open(ctx, pgstore.Options{URL: cfg.PostgresURL,
			MaxConns: int32(cfg.PostgresMaxConns), Clock: cfg.Now, Log: cfg.Log})
		if err != nil {
			s.closeListeners()
			return nil, fmt.Errorf("open PostgreSQL: %w", err)
		}
		s.engine, s.ownsEng = pg, true
		cfg.Now = pg.Now
		s.cfg.Now = pg.Now
		s.logRecovered(ctx, "", time.Since(started))
	case cfg.InMemory:
		s.engine, s.ownsEng = memstore.New(), true
	default:
		dir := cfg.Location
		if dir == "" {
			dir = DefaultLocation
		}
		if err := checkNotAzurite(dir); err != nil {
			s.closeListeners()
			return nil, err
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
		s.logRecovered(ctx, dir, time.Since(started))
	}
	// realNow is the clock before any test offset: the chunk collector's
	// grace periods are real time.
	s.realNow = cfg.Now
	if cfg.AdminAddr != "" {
		// The admin listener steers the services' clock.
		var shared storage.Engine
		if s.sharedEngine() {
			shared = s.engine
		}
		s.clock = cluster.NewClock(cfg.Now, shared)
		if err := s.clock.Refresh(ctx); err != nil {
			s.closeListeners()
			if s.ownsEng {
				s.engine.Close()
			}
			return nil, fmt.Errorf("read the clock's offset: %w", err)
		}
		s.workers = append(s.workers, func(ctx context.Context) error { return s.clock.Run(ctx, cfg.Log) })
		cfg.Now = s.clock.Now
		s.cfg.Now = s.clock.Now
	}
	authn := auth.New(auth.Config{Accounts: cfg.Accounts, Log: cfg.Log, Debug: cfg.Debug != nil, Now: cfg.Now,
		DateClock: s.realNow, OAuth: cfg.OAuth})
	s.authn = authn
	var debug io.Writer
	if cfg.Debug != nil {
		// The four services write their debug dumps to one writer.
		debug = &lockedWriter{w: cfg.Debug}
	}
	opts := httpx.Options{Auth: authn, Log: cfg.Log, Silent: cfg.Silent, Debug: debug,
		StrictVersion: cfg.StrictVersion, Loose: cfg.Loose, Now: cfg.Now, PathStyleOnly: cfg.PathStyleOnly}
	if cfg.AdminAddr != "" {
		// Metrics are kept only when something can read them.
		s.metrics = admin.NewMetrics()
		opts.Observer = s.metrics
		s.faults = &faults.Set{}
		opts.Faults = s.faults
		if r, ok := s.engine.(storage.StatsReporter); ok {
			s.metrics.AddEngine(r)
		}
	}
	s.md5 = md5lanes.New()
	servicesNow := cfg.Now
	if cfg.ServicesNow != nil {
		servicesNow = cfg.ServicesNow
	}
	s.buildServices(servicesNow)
	hd := func(svc auth.Service) httpx.Deps {
		return httpx.Deps{Auth: authn, Log: cfg.Log, Now: cfg.Now, BaseURL: s.baseURL(svc), EncryptionScopes: cfg.EncryptionScopes}
	}
	wrap := func(svc auth.Service, h http.Handler) http.Handler { return s.track(httpx.Wrap(svc, h, opts)) }
	sv := s.services
	s.handlers = map[auth.Service]http.Handler{
		auth.Blob:  s.dfsFront(wrap(auth.Blob, s.blobHandler(hd(auth.Blob), sv.Blob))),
		auth.Queue: wrap(auth.Queue, queuehttp.New(hd(auth.Queue), sv.Queue)),
		auth.Table: wrap(auth.Table, tablehttp.New(hd(auth.Table), sv.Table)),
		auth.File:  wrap(auth.File, filehttp.New(hd(auth.File), sv.File, sv.Blob)),
	}
	if cfg.SMBAddr != "" {
		var expiry time.Duration
		if s.sharedEngine() {
			expiry = cmp.Or(cfg.InstanceExpiry, DefaultInstanceExpiry)
		}
		s.members = cluster.New(s.engine, cluster.Config{Holder: sv.File, Expiry: expiry, Log: cfg.Log,
			Lost: func() { s.smb.DropConnections() }})
		backend := smbfile.New(sv.File, s.members)
		// Oplock and lease breaks reach this instance's clients through
		// the backend's worker.
		s.workers = append(s.workers, backend.Run)
		s.smb = smb.New(smb.Config{Backend: backend, Log: cfg.Log, Now: cfg.Now,
			Passwords: func(user string) ([]string, bool) {
				acc, ok := authn.Account(user)
				if !ok {
					return nil, false
				}
				keys := make([]string, len(acc.Keys))
				for i, k := range acc.Keys {
					keys[i] = base64.StdEncoding.EncodeToString(k)
				}
				return keys, true
			}})
		if s.metrics != nil {
			s.metrics.AddSMB(func() admin.SMBStats {
				st := s.smb.Stats()
				return admin.SMBStats{Connections: st.Connections, Sessions: st.Sessions, Opens: st.Opens, Locks: st.Locks,
					Leases: st.Leases, LeaseBreaks: st.Breaks}
			})
		}
	}
	return s, nil
}

// Engines of a data directory (Config.EngineKind).
const (
	// EngineLog keeps every key in memory and appends each write to a
	// log in the directory (logstore): the fastest, for data that
	// fits in memory.
	EngineLog = "log"
	// EngineSQLite keeps the keys in a SQLite database in the directory
	// (sqlitestore): for data larger than memory.
	EngineSQLite = "sqlite"
	// EnginePostgres keeps everything in a PostgreSQL database
	// (pgstore) that several instances may share; no data directory.
	EnginePostgres = "postgres"
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
		eng, err := logstore.Open(logstore.Options{Dir: dir, Sync: cfg.Sync, Salvage: cfg.Salvage, Log: cfg.Log})
		if derr := (*logstore.DamageError)(nil); errors.As(err, &derr) {
			return nil, fmt.Errorf("%w. To start anyway, run once with --salvage", err)
		}
		return eng, err
	case EngineSQLite:
		if exists(logstore.LogDir) {
			return nil, fmt.Errorf("the directory holds a log (%s/); use the %s engine", logstore.LogDir, EngineLog)
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
		addr := s.cfg.Advertise[svc]
		if addr == "" {
			addr = s.addrs[svc]
		}
		if addr == "" {
			addr = "127.0.0.1"
		}
		return scheme + "://" + addr + "/" + account
	}
}

// ListenError is a service address that could not be bound.
type ListenError struct {
	// Service is "blob", "queue", "table", "file" or "smb".
	Service string
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
			return &ListenError{Service: l.svc.String(), Addr: l.addr, Err: err}
		}
		if tlsCfg != nil {
			ln = tls.NewListener(ln, tlsCfg)
		}
		s.listeners[l.svc] = ln
		s.addrs[l.svc] = boundAddr(l.addr, ln)
	}
	if s.cfg.SMBAddr != "" {
		ln, err := net.Listen("tcp", s.cfg.SMBAddr)
		if err != nil {
			s.closeListeners()
			return &ListenError{Service: "smb", Addr: s.cfg.SMBAddr, Err: err}
		}
		s.smbListener = ln
	}
	if s.cfg.AdminAddr != "" {
		ln, err := net.Listen("tcp", s.cfg.AdminAddr)
		if err != nil {
			s.closeListeners()
			return &ListenError{Service: "admin", Addr: s.cfg.AdminAddr, Err: err}
		}
		s.adminListener = ln
		s.adminAddr = boundAddr(s.cfg.AdminAddr, ln)
	}
	if err := s.bindWeb(tlsCfg); err != nil {
		s.closeListeners()
		return err
	}
	return nil
}

// boundAddr is the address a listener reports: the host as configured
// with the port it bound (port 0 resolved). Go reports a listener on
// 0.0.0.0 as [::]; users, and tools that wait for the address they gave,
// expect 0.0.0.0.
func boundAddr(configured string, ln net.Listener) string {
	host, _, err := net.SplitHostPort(configured)
	_, port, err2 := net.SplitHostPort(ln.Addr().String())
	if err != nil || err2 != nil || host == "" {
		return ln.Addr().String()
	}
	return net.JoinHostPort(host, port)
}

// closeListeners closes the listeners bound by bind and not yet served.
func (s *Server) closeListeners() {
	for svc, ln := range s.listeners {
		ln.Close()
		delete(s.listeners, svc)
	}
	if s.smbListener != nil {
		s.smbListener.Close()
		s.smbListener = nil
	}
	if s.adminListener != nil {
		s.adminListener.Close()
		s.adminListener = nil
	}
	if s.webListener != nil {
		s.webListener.Close()
		s.webListener = nil
	}
}

// Start serves every bound address and starts the background workers.
// ctx bounds the start (joining the SMB instances' membership); the
// server runs until Close.
func (s *Server) Start(ctx context.Context) error {
	for _, l := range []struct {
		svc  auth.Service
		addr string
	}{{auth.Blob, s.cfg.BlobAddr}, {auth.Queue, s.cfg.QueueAddr}, {auth.Table, s.cfg.TableAddr}, {auth.File, s.cfg.FileAddr}} {
		ln := s.listeners[l.svc]
		if ln == nil {
			continue
		}
		delete(s.listeners, l.svc)
		srv := s.newHTTPServer(s.handlers[l.svc], s.cfg.KeepAlive[l.svc])
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
	if s.smb != nil {
		if err := s.startSMB(ctx); err != nil {
			s.Close()
			return err
		}
	}
	if s.adminListener != nil {
		s.startAdmin()
	}
	if s.webListener != nil {
		s.startWeb()
	}
	if s.stopWorkers == nil {
		if len(s.cfg.ChunkMarkers) > 0 {
			s.workers = append(s.workers, func(ctx context.Context) error {
				c := chunkgc.New(s.engine, s.cfg.ChunkMarkers, s.cfg.ChunkGCGrace)
				if s.sharedEngine() {
					// Other instances may be mid-upload: wait out the grace.
					c.Now = s.realNow // the database's clock, like the chunks' write times
				} else {
					c.Activity = &s.activity
				}
				c.Run(ctx, s.cfg.ChunkGCInterval, s.cfg.Log)
				return nil
			})
		}
		// The workers live until Close, whatever becomes of ctx.
		wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		s.stopWorkers = cancel
		for _, run := range s.workers {
			s.workersDone.Go(func() { run(wctx) })
		}
	}
	s.started.Store(true)
	return nil
}

// track reports every request to the chunk collector's Activity, so that
// chunks go once no request that could still use them is in flight.
func (s *Server) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g := s.activity.Begin()
		defer s.activity.End(g)
		h.ServeHTTP(w, r)
	})
}

// newHTTPServer is the HTTP/1.1 server (internal/h1) of one listener.
func (s *Server) newHTTPServer(h http.Handler, idle time.Duration) *h1.Server {
	if idle <= 0 {
		idle = 120 * time.Second
	}
	return &h1.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: idle,
		ErrorLog: slog.NewLogLogger(s.cfg.Log.Handler(), slog.LevelWarn), ConnState: s.conns.track, HeaderBudget: s.budget,
		ProgressTimeout: s.cfg.ProgressTimeout, Refused: refusedBy(h)}
}

// sharedEngine reports whether other lazuli instances may use the engine
// too (storage.Shared).
func (s *Server) sharedEngine() bool {
	_, ok := s.engine.(storage.Shared)
	return ok
}

// startSMB joins the instances serving SMB from the engine and serves
// SMB. An embedded engine is this process's alone: the handles an earlier
// process left are released (no SMB connection survives a restart). With
// the postgres engine other instances' handles live in the same database;
// those of instances that died are released by the membership's watch.
func (s *Server) startSMB(ctx context.Context) error {
	if err := s.members.Join(ctx, !s.sharedEngine()); err != nil {
		return fmt.Errorf("smb: join the instances' membership: %w", err)
	}
	s.workers = append(s.workers, s.members.Run)
	ln := s.smbListener
	if ln == nil {
		return errors.New("smb: no listener (the server was closed)")
	}
	s.smbListener = nil
	s.smbAddr = boundAddr(s.cfg.SMBAddr, ln)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.smb.Serve(ln); err != nil && !errors.Is(err, smb.ErrServerClosed) {
			s.cfg.Log.Error("serve", "service", "smb", "err", err)
		}
	}()
	s.cfg.Log.Info("listening", "service", "smb", "address", s.smbAddr)
	return nil
}

// SMBAddr returns the address SMB listens on (after Start; "" if off).
func (s *Server) SMBAddr() string { return s.smbAddr }

// Addr returns the address a service listens on (after Start).
func (s *Server) Addr(svc auth.Service) string { return s.addrs[svc] }

// Close stops the listeners, waits for requests in flight, and closes the
// engine.
func (s *Server) Close() error {
	s.closing.Store(true)
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
	if s.adminSrv != nil {
		s.adminSrv.Close()
	}
	if s.webSrv != nil {
		s.webSrv.Close()
	}
	if s.smb != nil {
		s.smb.Close()
		lctx, lcancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := s.members.Leave(lctx); err != nil {
			s.cfg.Log.Warn("smb: leave the membership", "err", err)
		}
		lcancel()
	}
	s.wg.Wait()
	if s.stopWorkers != nil {
		s.stopWorkers()
		s.workersDone.Wait()
	}
	s.md5.Close()
	if !s.ownsEng {
		return nil
	}
	err := s.engine.Close()
	if sm, ok := s.engine.(storage.Summarizer); ok {
		if msg, attrs := sm.Summary(); msg != "" {
			s.cfg.Log.LogAttrs(context.Background(), slog.LevelInfo, msg, attrs...)
		}
	}
	return err
}

// lockedWriter serializes writes to w, so that dumps written at once by
// several handlers do not interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
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

// blobVersioning says which accounts keep blob versions (nil: none).
func (cfg Config) blobVersioning() func(string) bool {
	if cfg.BlobVersioning {
		return func(string) bool { return true }
	}
	if len(cfg.BlobVersioningAccounts) == 0 {
		return nil
	}
	on := map[string]bool{}
	for _, a := range cfg.BlobVersioningAccounts {
		on[a] = true
	}
	return func(acct string) bool { return on[acct] }
}

// containerRetention is the container delete retention of each account
// (nil: off).
func (cfg Config) containerRetention() func(string) int {
	days := max(min(cfg.ContainerDeleteRetentionDays, 365), 0)
	if days == 0 && len(cfg.ContainerDeleteRetentionAccounts) == 0 {
		return nil
	}
	per := cfg.ContainerDeleteRetentionAccounts
	return func(acct string) int {
		if d, ok := per[acct]; ok {
			return max(min(d, 365), 0)
		}
		return days
	}
}
