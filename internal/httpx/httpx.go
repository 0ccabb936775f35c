// Package httpx is the plumbing every service shares: request ids, version
// and date headers, account resolution from path-style or host-style URLs,
// authentication, Azure error rendering, panic recovery, the access log,
// the raw header debug log, and the Router that reads each service's
// operation table.
//
// It sits under the four <service>http packages: the server wraps each of
// them with Wrap, so by the time a service handler runs the request has an
// Info (account, caller, version, request id) and every answer, error or
// not, gets Azure's common headers.
package httpx

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/faults"
	"github.com/lazuli-storage/lazuli/internal/guid"
	"github.com/lazuli-storage/lazuli/internal/redact"
)

// DefaultVersion is the x-ms-version answered when a request sends none.
const DefaultVersion = "2025-11-05"

// Info is what the plumbing learned about a request, available to handlers
// through FromContext.
type Info struct {
	Service   auth.Service
	RequestID string
	Account   string
	// Path is the resource path after the account, without the leading
	// slash, still percent-encoded as on the wire (for example
	// "container/dir%2Fblob").
	Path     string
	Version  string
	Identity *auth.Identity
	Start    time.Time
	// Operation is set by the service handler for the access log.
	Operation string
	// ErrorCode is set when an error response is written.
	ErrorCode string

	log    *slog.Logger
	faults *faults.Set
	// reset cuts the connection mid-response (an injected fault).
	reset bool
}

// SetOperation names the request's operation, once the service has
// routed it and before it runs: the access log and metrics use the name,
// and injected faults (Options.Faults) apply here. A non-nil error is
// the injected Azure error to answer with instead of running the
// operation.
func (i *Info) SetOperation(ctx context.Context, name string) error {
	i.Operation = name
	if i.faults == nil {
		return nil
	}
	a, ok := i.faults.Match(i.Service.String(), name, time.Now())
	if !ok {
		return nil
	}
	if a.Latency > 0 {
		t := time.NewTimer(a.Latency)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	if a.Err != nil {
		return a.Err
	}
	i.reset = a.Reset
	return nil
}

type ctxKey struct{}

// FromContext returns the request's Info. It is never nil inside a wrapped
// handler.
func FromContext(ctx context.Context) *Info {
	i, _ := ctx.Value(ctxKey{}).(*Info)
	if i == nil {
		return &Info{}
	}
	return i
}

type refusalKey struct{}

// WithRefusal marks a request that the HTTP server refused before its head
// was read in full (a limit on its size, or the server's budget of head
// bytes): Wrap answers it with e, and closes the connection, without
// looking at the request any further.
func WithRefusal(ctx context.Context, e *azerr.Error) context.Context {
	return context.WithValue(ctx, refusalKey{}, e)
}

// Options configures the plumbing shared by all services.
type Options struct {
	Auth *auth.Authenticator
	Log  *slog.Logger
	// Silent turns the access log off.
	Silent bool
	// Debug, when set, receives raw request and response headers, one
	// Write per request; requests running at once write at once, so a
	// writer shared with other handlers must serialize its writes (the
	// server's does).
	Debug io.Writer
	// StrictVersion rejects x-ms-version values lazuli does not know.
	StrictVersion bool
	// Loose accepts and ignores headers and query parameters lazuli does
	// not support (kept for compatibility with the reference emulator's
	// flag; lazuli is lenient already).
	Loose bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// PathStyleOnly takes the account from the first path segment of every
	// request, whatever the host name.
	PathStyleOnly bool
	// Observer, when set, receives every finished request (metrics).
	Observer RequestObserver
	// Faults, when set, holds the faults to inject (Info.SetOperation).
	Faults *faults.Set
}

// UnroutedOperation is the operation a RequestObserver is told of for a
// request that no operation claimed (refused before routing, or matching
// no operation).
const UnroutedOperation = "Unrouted"

// RequestObserver receives every request once it is answered: its
// service, operation (as in the access log), status, Azure error code
// ("" for none), declared request body bytes, response body bytes
// written, and time taken. It runs on the request path and must be quick.
type RequestObserver interface {
	ObserveRequest(service, operation string, status int, errorCode string, bytesIn, bytesOut int64, elapsed time.Duration)
}

// Wrap puts the shared plumbing around a service handler.
func Wrap(svc auth.Service, h http.Handler, o Options) http.Handler {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	serverName := map[auth.Service]string{
		auth.Blob:  "Windows-Azure-Blob/1.0 Microsoft-HTTPAPI/2.0",
		auth.Queue: "Windows-Azure-Queue/1.0 Microsoft-HTTPAPI/2.0",
		auth.Table: "Windows-Azure-Table/1.0 Microsoft-HTTPAPI/2.0",
		auth.File:  "Windows-Azure-File/1.0 Microsoft-HTTPAPI/2.0",
	}[svc]
	svcName := svc.String()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// One allocation for the request's bookkeeping.
		st := &struct {
			info Info
			rw   recorder
		}{}
		info, rw := &st.info, &st.rw
		*info = Info{Service: svc, RequestID: guid.NewString(), Start: o.Now(), log: o.Log, faults: o.Faults}
		// Latency is measured on the monotonic clock: the service clock
		// may be a test clock moved while the request runs.
		var began time.Time
		if o.Observer != nil {
			began = time.Now()
		}
		*rw = recorder{ResponseWriter: w, status: http.StatusOK, info: info}
		hdr := rw.Header()
		// Keys in canonical form, assigned directly.
		hdr["X-Ms-Request-Id"] = []string{info.RequestID}
		hdr["Server"] = []string{serverName}
		if cid := r.Header["X-Ms-Client-Request-Id"]; len(cid) > 0 && cid[0] != "" {
			hdr["X-Ms-Client-Request-Id"] = cid[:1:1]
		}
		r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, info))

		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				o.Log.Error("panic", "request_id", info.RequestID, "method", r.Method, "url", redact.String(r.URL.String()), "panic", redact.String(fmt.Sprint(p)))
				if !rw.wrote {
					WriteError(rw, r, azerr.New(azerr.InternalError))
				}
			}
			if o.Observer != nil {
				// A request no operation claimed is counted as one
				// label: its shape carries the client's comp value,
				// and clients must not grow the set of series.
				op := info.Operation
				if op == "" {
					op = UnroutedOperation
				}
				o.Observer.ObserveRequest(svcName, op, rw.status, info.ErrorCode, max(r.ContentLength, 0), rw.bytes, time.Since(began))
			}
			if !o.Silent {
				if info.Operation == "" {
					path := info.Path
					if info.Account == "" {
						_, path, _ = splitAccount(r, o.PathStyleOnly)
					}
					info.Operation = RequestShape(r, path)
				}
				o.Log.Info("request",
					"service", svcName, "op", info.Operation, "method", r.Method,
					"account", info.Account, "path", info.Path, "status", rw.status,
					"error_code", info.ErrorCode, "bytes_out", rw.bytes, "bytes_in", r.ContentLength,
					"latency_ms", float64(o.Now().Sub(info.Start).Microseconds())/1000,
					"request_id", info.RequestID, "client_request_id", r.Header.Get("X-Ms-Client-Request-Id"))
			}
			if o.Debug != nil {
				writeDebug(o.Debug, r, rw)
			}
		}()

		version := r.Header.Get("X-Ms-Version")
		if version == "" {
			version = DefaultVersion
		}
		hdr["X-Ms-Version"] = []string{version}
		hdr["Date"] = []string{FormatHTTPTime(info.Start)}
		info.Version = version
		if e, ok := r.Context().Value(refusalKey{}).(*azerr.Error); ok {
			hdr["Connection"] = []string{"close"}
			WriteError(rw, r, e)
			return
		}
		if !validVersion(version) || (o.StrictVersion && !KnownVersion(version)) {
			WriteError(rw, r, azerr.InvalidHeader("x-ms-version", version))
			return
		}
		if name, ok := repeatedHeader(r.Header); ok {
			// Azure joins repeated headers into one value ("a, b"), which
			// no single-valued x-ms header accepts.
			WriteError(rw, r, azerr.InvalidHeader(name, strings.Join(r.Header.Values(name), ", ")))
			return
		}
		if cid := r.Header.Get("X-Ms-Client-Request-Id"); len(cid) > 1024 {
			WriteError(rw, r, azerr.InvalidHeader("x-ms-client-request-id", cid))
			return
		}

		account, path, ok := splitAccount(r, o.PathStyleOnly)
		if !ok {
			WriteError(rw, r, azerr.New(azerr.InvalidUri))
			return
		}
		info.Account, info.Path = account, path

		// CORS preflight carries no credentials; the service answers it.
		if r.Method == http.MethodOptions {
			info.Identity = &auth.Identity{Kind: auth.Anonymous, Account: account}
			h.ServeHTTP(rw, r)
			return
		}
		if o.Auth != nil {
			id, err := o.Auth.Authenticate(r, svc, account)
			if err != nil {
				WriteError(rw, r, err)
				return
			}
			info.Identity = id
		} else {
			info.Identity = &auth.Identity{Kind: auth.SharedKey, Account: account}
		}
		h.ServeHTTP(rw, r)
		if info.reset {
			// An injected reset whose answer had no body to cut.
			panic(http.ErrAbortHandler)
		}
	})
}

// FormatHTTPTime renders t as an HTTP date (http.TimeFormat). Rendered
// seconds are kept in a small direct-mapped cache: the times a server
// sends cluster (the Date of responses in the current second, the
// Last-Modified times of the objects being read).
func FormatHTTPTime(t time.Time) string {
	sec := t.Unix()
	slot := &httpTimes[uint64(sec)%uint64(len(httpTimes))]
	if e := slot.Load(); e != nil && e.sec == sec {
		return e.text
	}
	var buf [len(http.TimeFormat)]byte
	text := string(t.UTC().AppendFormat(buf[:0], http.TimeFormat))
	slot.Store(&renderedTime{sec: sec, text: text})
	return text
}

type renderedTime struct {
	sec  int64
	text string
}

var httpTimes [256]atomic.Pointer[renderedTime]

// validVersion reports whether v has the form of a service version,
// dddd-dd-dd (ASCII digits).
func validVersion(v string) bool {
	if len(v) != 10 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if i == 4 || i == 7 {
			if v[i] != '-' {
				return false
			}
		} else if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// KnownVersion reports whether v is a service version lazuli was written
// against (used with the strict version flag).
func KnownVersion(v string) bool {
	return v >= "2009-09-19" && v <= "2026-12-06"
}

// splitAccount finds the account: the first path segment for path-style
// URLs (IP hosts, localhost and other non-account hosts), else the first
// DNS label of the host (unless pathOnly). The "-secondary" suffix is
// stripped.
func splitAccount(r *http.Request, pathOnly bool) (account, rest string, ok bool) {
	return accountIn(r.Host, r.URL.EscapedPath(), pathOnly)
}

// URLAccount finds the account and the escaped path below it in a URL of
// this server another request names (a copy source), as for requests.
func URLAccount(u *url.URL) (account, rest string, ok bool) {
	return accountIn(u.Host, u.EscapedPath(), false)
}

// PathStyleHost reports whether requests to host (with or without a port)
// name their account in the path: IP addresses and names without dots
// ("localhost" is path-style; "devstoreaccount1.blob.localhost" is
// host-style).
func PathStyleHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	return host == "" || net.ParseIP(host) != nil || !strings.Contains(host, ".") || host == "host.docker.internal"
}

func accountIn(host, p string, pathOnly bool) (account, rest string, ok bool) {
	p = strings.TrimPrefix(p, "/")
	if pathOnly || PathStyleHost(host) {
		seg, after, _ := strings.Cut(p, "/")
		account, rest = seg, after
	} else {
		account, _, _ = strings.Cut(host, ".")
		rest = p
	}
	account = strings.TrimSuffix(account, "-secondary")
	if account == "" {
		return "", "", false
	}
	return account, rest, true
}

// recorder remembers the status and byte count for the access log, and
// carries out an injected reset.
type recorder struct {
	http.ResponseWriter
	info   *Info
	status int
	bytes  int64
	wrote  bool
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status = code
		r.wrote = true
	}
	if r.info.reset {
		// The head goes out only with part of a body (Write): an answer
		// without one is cut before its head, or the client would read
		// it whole.
		return
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.info.reset {
		// Send the head and half of this first part of the body, then
		// drop the connection.
		r.wrote = true
		r.ResponseWriter.WriteHeader(r.status)
		r.ResponseWriter.Write(b[:len(b)/2])
		if f, ok := r.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		panic(http.ErrAbortHandler)
	}
	r.wrote = true
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Flush forwards to the underlying writer when it can flush.
func (r *recorder) Flush() {
	if r.info.reset {
		return // the head waits for part of a body (Write)
	}
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func writeDebug(w io.Writer, r *http.Request, rw *recorder) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s\n", time.Now().UTC().Format(time.RFC3339Nano), r.Method, redact.String(r.URL.RequestURI()))
	for k, vs := range r.Header {
		for _, v := range vs {
			fmt.Fprintf(&b, "> %s: %s\n", k, redact.Header(k, v))
		}
	}
	fmt.Fprintf(&b, "< %d\n", rw.status)
	for k, vs := range rw.Header() {
		for _, v := range vs {
			fmt.Fprintf(&b, "< %s: %s\n", k, redact.Header(k, v))
		}
	}
	b.WriteString("\n")
	io.WriteString(w, b.String())
}

// repeatedHeader finds an x-ms-* header sent more than once, other than
// metadata (whose repeated values are joined) and the client request id.
func repeatedHeader(h http.Header) (string, bool) {
	for k, vs := range h {
		if len(vs) < 2 || len(k) < 5 || !strings.EqualFold(k[:5], "x-ms-") {
			continue
		}
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-ms-meta-") || lk == "x-ms-client-request-id" {
			continue
		}
		return k, true
	}
	return "", false
}

// RequestShape names a request that no operation claimed (refused before
// routing, or matching no operation) for the access log: the method, how
// deep the path goes and the comp or restype parameter, e.g.
// "PUT object?comp=block" or "GET service?comp=properties".
func RequestShape(r *http.Request, path string) string {
	level := "service"
	if path = strings.Trim(path, "/"); path != "" {
		level = "container"
		if strings.Contains(path, "/") {
			level = "object"
		}
	}
	out := r.Method + " " + level
	q := r.URL.Query()
	if c := q.Get("comp"); c != "" {
		out += "?comp=" + c
	} else if rt := q.Get("restype"); rt != "" {
		out += "?restype=" + rt
	}
	return out
}
