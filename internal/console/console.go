// Package console is lazuli's web console: a page to browse and change
// every service (containers and blobs, queues and messages, tables and
// entities, shares, directories, files and their open handles), served
// from files embedded in the binary.
//
// The page's script speaks the Azure REST protocols themselves, through a
// proxy under /api/{service}/{account}/...: the console signs each request
// with the account's Shared Key and hands it, in process, to the same
// service handler the service port runs. So every change made in the
// console goes through the code and the rules the SDKs meet, and the
// console needs no second implementation of any operation.
package console

import (
	"embed"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/guid"
	"github.com/lazuli-storage/lazuli/internal/redact"
)

//go:embed static
var static embed.FS

// Config configures the console.
type Config struct {
	// Accounts are the storage accounts the console may act as, with their
	// keys (the server's account registry).
	Accounts []auth.Account
	// Handlers are the complete REST handlers of the services, as the
	// service ports serve them; a missing service is shown as off.
	Handlers map[auth.Service]http.Handler
	// Caller tells which account an authenticated admin request acts as.
	// With restricted false (or a nil Caller) the request may act as every
	// account: the admin listener is on loopback and asks for no
	// credentials.
	Caller func(r *http.Request) (account string, restricted bool)
	// MaxBody bounds the body of one proxied request (zero:
	// DefaultMaxBody). The page uploads larger files in blocks and ranges.
	MaxBody int64
	// Now is the clock the requests are dated by (the services' clock);
	// nil means time.Now.
	Now func() time.Time
	Log *slog.Logger
}

// DefaultMaxBody is Config.MaxBody's default. The page sends blocks and
// ranges of 4 MiB, so this leaves room without letting one request hold
// an unbounded body.
const DefaultMaxBody = 64 << 20

// HeaderName is the header every /api request must carry. A page of
// another origin cannot set it without a CORS preflight, which the console
// never grants, so it cannot make the browser act as the console (CSRF).
const HeaderName = "X-Lazuli-Console"

// Console serves the page and its proxy.
type Console struct {
	cfg      Config
	accounts map[string]auth.Account
	names    []string
	assets   http.Handler
}

// New returns the console's handler. It serves "/" (the page), "/static/"
// (its script and style sheet), "/api/accounts" and the proxy under
// "/api/{service}/{account}/".
func New(cfg Config) *Console {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	c := &Console{cfg: cfg, accounts: map[string]auth.Account{}}
	for _, a := range cfg.Accounts {
		if len(a.Keys) == 0 || a.Name == "" {
			continue
		}
		if _, dup := c.accounts[a.Name]; !dup {
			c.names = append(c.names, a.Name)
		}
		// A later entry replaces an earlier one, as in the account registry.
		c.accounts[a.Name] = a
	}
	slices.Sort(c.names)
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	c.assets = http.FileServerFS(sub)
	return c
}

// securityHeaders are sent with every response: the page loads nothing
// from elsewhere, runs only its own script, and may not be framed.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
}

// ServeHTTP routes a console request.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	p := r.URL.Path
	switch {
	case p == "/api" || strings.HasPrefix(p, "/api/"):
		c.serveAPI(w, r)
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	case p == "/" || p == "/index.html":
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, static, "static/index.html")
	case strings.HasPrefix(p, "/static/"):
		w.Header().Set("Cache-Control", "no-cache")
		http.StripPrefix("/static", c.assets).ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

// serveAPI checks that the request comes from the console's own page and
// answers /api/accounts or proxies to a service.
func (c *Console) serveAPI(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(HeaderName) == "" {
		c.refuse(w, r, azerr.Newf(azerr.AuthorizationFailure, "Console API requests must carry the %s header.", HeaderName))
		return
	}
	if !sameOrigin(r) {
		c.refuse(w, r, azerr.Newf(azerr.AuthorizationFailure, "Cross-origin requests are refused."))
		return
	}
	account, restricted := "", false
	if c.cfg.Caller != nil {
		account, restricted = c.cfg.Caller(r)
	}
	if !restricted && !loopbackHost(r.Host) {
		// Without credentials only a loopback name may reach the console:
		// a DNS name that resolves to 127.0.0.1 (DNS rebinding) would make
		// another site's page same-origin with it.
		c.refuse(w, r, azerr.Newf(azerr.AuthorizationFailure, "Without credentials the console answers only at a loopback address."))
		return
	}
	rest := strings.TrimPrefix(r.URL.EscapedPath(), "/api/")
	if rest == "accounts" {
		w.Header().Set("Cache-Control", "no-store")
		c.serveAccounts(w, r, account, restricted)
		return
	}
	c.proxy(w, r, rest, account, restricted)
}

// serveAccounts lists the accounts the caller may act as and the services
// that are on. Keys never leave the server.
func (c *Console) serveAccounts(w http.ResponseWriter, r *http.Request, account string, restricted bool) {
	if r.Method != http.MethodGet {
		c.refuse(w, r, azerr.New(azerr.UnsupportedHttpVerb))
		return
	}
	out := struct {
		Accounts   []string `json:"accounts"`
		Services   []string `json:"services"`
		Restricted bool     `json:"restricted"`
	}{Accounts: []string{}, Services: []string{}, Restricted: restricted}
	for _, n := range c.names {
		if !restricted || n == account {
			out.Accounts = append(out.Accounts, n)
		}
	}
	for _, s := range services {
		if c.cfg.Handlers[s.svc] != nil {
			out.Services = append(out.Services, s.name)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// sameOrigin reports whether the request's Origin, when the browser sent
// one, is the console's own.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, r.Host)
}

// loopbackHost reports whether host (host[:port]) names the loopback
// interface: a loopback IP literal or "localhost".
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// refuse answers a request the console itself turns down with an Azure
// error in the XML form of the Blob, Queue and File services (the page
// reads Code and Message from it whatever the service).
func (c *Console) refuse(w http.ResponseWriter, r *http.Request, e *azerr.Error) {
	id := guid.NewString()
	h := w.Header()
	h.Set("X-Ms-Request-Id", id)
	h.Set("X-Ms-Error-Code", e.Code.String())
	h.Set("Content-Type", "application/xml")
	w.WriteHeader(e.Status)
	c.cfg.Log.Debug("console refused a request", "method", r.Method, "path", redact.String(r.URL.Path), "error_code", e.Code.String(), "request_id", id)
	if r.Method != http.MethodHead {
		_ = azerr.WriteXML(w, e, id, c.cfg.Now())
	}
}
