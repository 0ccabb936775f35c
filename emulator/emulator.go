// Package emulator starts lazuli inside a Go program, for users' tests. It
// is the public face of the composition root (internal/server): the same
// services, engines and authentication as the lazuli command, without
// flags or environment.
//
// Over real sockets:
//
//	emu, err := emulator.Start(emulator.Options{InMemory: true})
//	defer emu.Close()
//	client, _ := azblob.NewClientFromConnectionString(emu.ConnectionString(), nil)
//
// Or without any (Options.NoListen), through the in-process Transport:
//
//	emu, err := emulator.Start(emulator.Options{InMemory: true, NoListen: true})
//	opts := &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: emu.Transport()}}
//	client, _ := azblob.NewClientFromConnectionString(emu.ConnectionString(), opts)
package emulator

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/server"
	"github.com/lazuli-storage/lazuli/storage"
)

// Options configures an embedded lazuli.
type Options struct {
	// InMemory keeps data in memory; otherwise Dir holds it.
	InMemory bool
	Dir      string
	// Sync makes writes fsync before they are acknowledged.
	Sync bool
	// EngineKind chooses the engine of Dir: "log" (every key in memory,
	// writes appended to a log), "sqlite", or "" for the one Dir already
	// holds ("log" for a new directory).
	EngineKind string
	// PostgresURL is the database of EngineKind "postgres" (Dir is then
	// unused); several emulators on one database serve the same data.
	PostgresURL string
	// Advertise names, per service, the host:port that URLs in responses
	// carry instead of the emulator's own (a load balancer's).
	Advertise map[Service]string
	// Engine, when set, is used instead of InMemory/Dir (and not closed).
	Engine storage.Engine
	// Host to listen on; default 127.0.0.1. Ports are picked freely.
	Host string
	// NoListen builds the handlers without opening ports: requests reach
	// them through Transport (or Handler), and Endpoint names Azure's
	// default emulator ports (10000 to 10003) on 127.0.0.1, which nothing
	// needs to listen on.
	NoListen bool
	// SMB also serves the File service's shares over SMB 2/3 on a free
	// port of Host (see SMBAddr).
	SMB bool
	// Admin also serves the admin listener (health, metrics, test clock,
	// fault injection) on a free port of Host (see AdminURL).
	Admin bool
	// Web also serves the static website endpoint (each account's $web
	// container) on a free port of Host, even with NoListen (see WebURL).
	Web bool
	// Log receives the server log; nil discards it.
	Log *slog.Logger
	// Now overrides the clock.
	Now func() time.Time
	// CertFile and KeyFile serve HTTPS with this PEM certificate and key
	// (Endpoint then answers https URLs).
	CertFile, KeyFile string
	// OAuth accepts Azure AD bearer tokens (needs CertFile): the basic
	// level of the reference emulator.
	OAuth bool
	// EncryptionScopes are the Blob encryption scopes every account has.
	EncryptionScopes []string
	// BlobVersioning keeps blob versions in every account, and
	// BlobVersioningAccounts in the accounts it names.
	BlobVersioning         bool
	BlobVersioningAccounts []string
	// ContainerDeleteRetentionDays keeps deleted containers that many
	// days for Restore Container (0: off).
	ContainerDeleteRetentionDays int
	// ContainerDeleteRetentionAccounts gives the accounts it names their
	// own container delete retention days (0: off for that account).
	ContainerDeleteRetentionAccounts map[string]int
	// HierarchicalNamespace gives every account a hierarchical namespace:
	// the Data Lake Storage Gen2 (dfs) API on the Blob endpoint.
	HierarchicalNamespace bool
}

// Service names one of the four services.
type Service = auth.Service

// The services.
const (
	Blob  = auth.Blob
	Queue = auth.Queue
	Table = auth.Table
	File  = auth.File
)

// Account and Key are the development account credentials every lazuli
// accepts.
const (
	Account = auth.DevAccount
	Key     = auth.DevKey
)

// Emulator is a running embedded lazuli.
type Emulator struct {
	srv    *server.Server
	scheme string
}

// Start starts lazuli.
func Start(o Options) (*Emulator, error) {
	host := o.Host
	if host == "" {
		host = "127.0.0.1"
	}
	cfg := server.Config{InMemory: o.InMemory, Location: o.Dir, Sync: o.Sync, EngineKind: o.EngineKind, Engine: o.Engine,
		Log: o.Log, Silent: o.Log == nil, Now: o.Now, CertFile: o.CertFile, KeyFile: o.KeyFile, OAuth: o.OAuth,
		EncryptionScopes: o.EncryptionScopes, BlobVersioning: o.BlobVersioning, BlobVersioningAccounts: o.BlobVersioningAccounts,
		ContainerDeleteRetentionDays: o.ContainerDeleteRetentionDays, ContainerDeleteRetentionAccounts: o.ContainerDeleteRetentionAccounts, HierarchicalNamespace: o.HierarchicalNamespace, PostgresURL: o.PostgresURL, Advertise: o.Advertise}
	if !o.NoListen {
		addr := host + ":0"
		cfg.BlobAddr, cfg.QueueAddr, cfg.TableAddr, cfg.FileAddr = addr, addr, addr, addr
		if o.SMB {
			cfg.SMBAddr = addr
		}
	}
	if o.Admin {
		cfg.AdminAddr = host + ":0"
	}
	if o.Web {
		cfg.WebAddr = host + ":0"
	}
	srv, err := server.New(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	if err := srv.Start(context.Background()); err != nil {
		return nil, err
	}
	scheme := "http"
	if o.CertFile != "" {
		scheme = "https"
	}
	return &Emulator{srv: srv, scheme: scheme}, nil
}

// Handler returns the complete HTTP handler of a service, for in-process
// transports.
func (e *Emulator) Handler(s Service) http.Handler { return e.srv.Handler(s) }

// Endpoint returns the service URL including the account path segment,
// e.g. "http://127.0.0.1:41234/devstoreaccount1".
func (e *Emulator) Endpoint(s Service) string {
	return fmt.Sprintf("%s://%s/%s", e.scheme, e.host(s), Account)
}

// host is the host:port of a service's Endpoint: where it listens, or
// else Azure's emulator port for it.
func (e *Emulator) host(s Service) string {
	if a := e.srv.Addr(s); a != "" {
		return a
	}
	switch s {
	case Queue:
		return "127.0.0.1:10001"
	case Table:
		return "127.0.0.1:10002"
	case File:
		return "127.0.0.1:10003"
	}
	return "127.0.0.1:10000"
}

// Addr returns the host:port a service listens on.
func (e *Emulator) Addr(s Service) string { return e.srv.Addr(s) }

// ConnectionString returns a connection string for all four services.
func (e *Emulator) ConnectionString() string {
	return fmt.Sprintf("DefaultEndpointsProtocol=%s;AccountName=%s;AccountKey=%s;BlobEndpoint=%s;QueueEndpoint=%s;TableEndpoint=%s;FileEndpoint=%s;",
		e.scheme, Account, Key, e.Endpoint(Blob), e.Endpoint(Queue), e.Endpoint(Table), e.Endpoint(File))
}

// SMBAddr is the host:port of the SMB listener ("" without Options.SMB).
func (e *Emulator) SMBAddr() string { return e.srv.SMBAddr() }

// AdminURL is the base URL of the admin listener, e.g.
// "http://127.0.0.1:41236" ("" without Options.Admin).
func (e *Emulator) AdminURL() string {
	if a := e.srv.AdminAddr(); a != "" {
		return "http://" + a
	}
	return ""
}

// WebURL is the static website URL of the account, e.g.
// "http://127.0.0.1:41237/devstoreaccount1" ("" without Options.Web).
func (e *Emulator) WebURL() string {
	if a := e.srv.WebAddr(); a != "" {
		return e.scheme + "://" + a + "/" + Account
	}
	return ""
}

// Engine returns the storage engine the emulator serves, for tests that
// look at or prepare stored state directly.
func (e *Emulator) Engine() storage.Engine { return e.srv.Engine() }

// Close stops lazuli.
func (e *Emulator) Close() error { return e.srv.Close() }
