// Package dfshttp is the HTTP surface of Data Lake Storage Gen2 (the dfs
// API) for accounts with a hierarchical namespace. It is served on the
// Blob port: Azure routes by endpoint (<account>.dfs.core.windows.net),
// an emulator has one URL per service, so a request is taken to be a dfs
// request by what only the dfs API sends (see IsDFS). Everything else goes
// to the Blob handler, which reads and writes the same records.
package dfshttp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// handler serves dfs requests of HNS accounts and hands the rest to next.
type handler struct {
	d    httpx.Deps
	svc  *blob.Service
	next http.Handler
	hns  func(account string) bool
}

// New returns the Blob port's handler: dfs requests of accounts for which
// hns reports true are served here, every other request by blobHandler.
func New(d httpx.Deps, svc *blob.Service, blobHandler http.Handler, hns func(account string) bool) http.Handler {
	now := d.Now
	if now == nil {
		now = time.Now
	}
	d.Now = now
	return &handler{d: d, svc: svc, next: blobHandler, hns: hns}
}

// IsDFS reports whether r is a request of the dfs API: one carrying
// resource= (filesystem, directory, file, account), action=, mode= or
// x-ms-rename-source, a POST lease on a path (Blob leases are PUT
// comp=lease), or a recursive / paginated delete.
func IsDFS(r *http.Request) bool {
	q := r.URL.Query()
	if q.Get("comp") != "" || q.Get("restype") != "" {
		return false
	}
	switch q.Get("resource") {
	case "filesystem", "directory", "file", "account":
		return true
	}
	if q.Has("action") || q.Has("mode") || r.Header.Get("X-Ms-Rename-Source") != "" {
		return true
	}
	if r.Method == http.MethodPost && r.Header.Get("X-Ms-Lease-Action") != "" {
		return true
	}
	if r.Method == http.MethodPatch {
		return true
	}
	return r.Method == http.MethodDelete && (q.Has("recursive") || q.Has("continuation") || q.Has("paginated"))
}

// rq is one request.
type rq struct {
	w    http.ResponseWriter
	r    *http.Request
	info *httpx.Info
	q    url.Values
	fs   string
	path string
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	info := httpx.FromContext(r.Context())
	if info == nil || !h.hns(info.Account) {
		h.next.ServeHTTP(w, r)
		return
	}
	h.learnUPN(r.Context(), info.Account, info.Identity)
	if caller(info.Identity) != nil {
		// The namespace checks this caller's ACL permissions, found when
		// an operation checks them: after the signature was verified.
		r = r.WithContext(blob.WithCallerOf(r.Context(), func() *blob.Caller { return caller(info.Identity) }))
	}
	if !IsDFS(r) {
		h.blobRequest(w, r, info)
		return
	}
	httpx.CanonicalizeHeaders(r)
	x := &rq{w: w, r: r, info: info, q: r.URL.Query()}
	fs, p, _ := strings.Cut(info.Path, "/")
	var err error
	if x.fs, err = url.PathUnescape(fs); err == nil {
		x.path, err = url.PathUnescape(p)
	}
	if err != nil {
		writeError(x, azerr.New(azerr.InvalidUri))
		return
	}
	x.path = strings.Trim(x.path, "/")
	if err := h.route(x); err != nil {
		writeError(x, err)
	}
}

// route picks the operation from method, resource and action.
func (h *handler) route(x *rq) error {
	res, action := x.q.Get("resource"), x.q.Get("action")
	m := x.r.Method
	switch {
	case x.fs == "" && res == "account" && m == http.MethodGet:
		return h.listFilesystems(x)
	case x.fs == "":
		return azerr.New(azerr.InvalidUri)
	case x.path == "" && res == "filesystem":
		switch m {
		case http.MethodPut:
			return h.createFilesystem(x)
		case http.MethodDelete:
			return h.deleteFilesystem(x)
		case http.MethodHead:
			return h.getFilesystem(x)
		case http.MethodPatch:
			return h.setFilesystem(x)
		case http.MethodGet:
			return h.listPaths(x)
		}
	case x.path == "" && m == http.MethodHead:
		return h.getRootProperties(x)
	case x.path == "" && m == http.MethodPatch && action == "setAccessControl":
		return h.setRootAccessControl(x)
	case x.path == "" && m == http.MethodPatch && action == "setAccessControlRecursive":
		return h.setAccessControlRecursive(x)
	case x.path == "":
		return azerr.New(azerr.InvalidUri)
	case m == http.MethodPut:
		return h.createPath(x)
	case m == http.MethodPatch:
		switch action {
		case "append":
			return h.appendData(x)
		case "flush":
			return h.flushData(x)
		case "setProperties":
			return h.setProperties(x)
		case "setAccessControl":
			return h.setAccessControl(x)
		case "setAccessControlRecursive":
			return h.setAccessControlRecursive(x)
		}
		return azerr.InvalidQuery("action", action, "")
	case m == http.MethodHead:
		return h.getProperties(x)
	case m == http.MethodDelete:
		return h.deletePath(x)
	case m == http.MethodPost:
		return h.leasePath(x)
	}
	return azerr.New(azerr.UnsupportedHttpVerb).WithStatus(http.StatusMethodNotAllowed)
}

// authorize checks the caller against a Blob access of the request's
// filesystem (and path).
func (h *handler) authorize(x *rq, res auth.ResourceType, perms string, serviceSASDenied bool) error {
	a := auth.Access{Service: auth.Blob, Resource: res, Perms: perms, Container: x.fs, ServiceSASDenied: serviceSASDenied}
	if res == auth.ResObject {
		a.Object = x.path
	}
	return h.d.Auth.Authorize(x.info.Identity, x.r, a)
}

func (x *rq) ctx() context.Context { return x.r.Context() }

func (x *rq) ref() blob.Ref {
	return blob.Ref{Account: x.info.Account, Container: x.fs, Name: x.path}
}

// writeError answers err as the dfs API does: the status, x-ms-error-code
// and a JSON body {"error":{"code","message"}} (none for HEAD). Blob codes
// that name the wrong resource become their Data Lake names.
func writeError(x *rq, err error) {
	e, ok := azerr.As(azerr.FromEngine(err))
	if !ok {
		httpx.WriteError(x.w, x.r, err)
		return
	}
	switch e.Code {
	case azerr.ContainerNotFound:
		e = azerr.New(azerr.FilesystemNotFound)
	case azerr.ContainerAlreadyExists:
		e = azerr.New(azerr.FilesystemAlreadyExists)
	case azerr.BlobNotFound:
		e = azerr.New(azerr.PathNotFound)
	case azerr.BlobAlreadyExists:
		e = azerr.New(azerr.PathAlreadyExists)
	}
	x.info.ErrorCode = e.Code.String()
	h := x.w.Header()
	for k, vs := range e.Header {
		h[k] = vs
	}
	h.Set("X-Ms-Error-Code", e.Code.String())
	if x.r.Method == http.MethodHead {
		x.w.WriteHeader(e.Status)
		return
	}
	h.Set("Content-Type", "application/json;charset=utf-8")
	x.w.WriteHeader(e.Status)
	msg := e.Message + "\nRequestId:" + x.info.RequestID + "\nTime:" + x.info.Start.UTC().Format("2006-01-02T15:04:05.0000000Z")
	json.NewEncoder(x.w).Encode(map[string]any{"error": map[string]string{"code": e.Code.String(), "message": msg}})
}

// ---- x-ms-properties ----

// parseProperties reads x-ms-properties: comma-separated name=value pairs
// whose values are Base64.
func parseProperties(v string) ([]blob.KV, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var out []blob.KV
	for _, p := range strings.Split(v, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || name == "" {
			return nil, azerr.InvalidHeader("x-ms-properties", v)
		}
		raw, err := base64.StdEncoding.DecodeString(val)
		if err != nil {
			return nil, azerr.InvalidHeader("x-ms-properties", v)
		}
		out = append(out, blob.KV{name, string(raw)})
	}
	if err := content.ValidateMetadata(out); err != nil {
		return nil, azerr.New(azerr.InvalidPropertyName)
	}
	return out, nil
}

// formatProperties renders metadata as x-ms-properties.
func formatProperties(m []blob.KV) string {
	parts := make([]string, 0, len(m))
	for _, kv := range m {
		parts = append(parts, kv[0]+"="+base64.StdEncoding.EncodeToString([]byte(kv[1])))
	}
	return strings.Join(parts, ",")
}

// RenameDestination fixes the destination URL of a path-style rename as
// the Data Lake SDKs build it: they replace the whole URL path with
// /{filesystem}/{path}, dropping the account segment. The account is the
// one the source names (x-ms-rename-source: /{account}/{filesystem}/{path},
// as the JavaScript SDK sends it) or else the one of the Shared Key
// signature (the Python SDK's source has no account either). When that is
// an HNS account and the URL does not start with it, the account is put
// back, so the request reaches the account it was signed for (Shared Key
// signs "/" + account + the URL path, which the verifier accepts with or
// without the account segment).
//
// known reports whether an account exists: a URL whose first segment is
// one is left alone.
func RenameDestination(next http.Handler, hns, known func(account string) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if src := r.Header.Get("X-Ms-Rename-Source"); src != "" && r.Method == http.MethodPut && httpx.PathStyleHost(r.Host) {
			p := strings.TrimPrefix(r.URL.EscapedPath(), "/")
			first, _, _ := strings.Cut(p, "/")
			if !known(first) {
				acct, _, _ := strings.Cut(strings.TrimPrefix(src, "/"), "/")
				if !known(acct) {
					acct = signedAccount(r.Header.Get("Authorization"))
				}
				if acct != "" && known(acct) && hns(acct) {
					r2 := r.Clone(r.Context())
					u := *r.URL
					u.Path = "/" + acct + r.URL.Path
					if r.URL.RawPath != "" {
						u.RawPath = "/" + acct + r.URL.RawPath
					}
					r2.URL = &u
					r2.RequestURI = u.RequestURI()
					r = r2
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// signedAccount is the account of a Shared Key Authorization header
// ("SharedKey account:signature"), or "".
func signedAccount(h string) string {
	scheme, rest, ok := strings.Cut(h, " ")
	if !ok || (scheme != "SharedKey" && scheme != "SharedKeyLite") {
		return ""
	}
	acct, _, _ := strings.Cut(rest, ":")
	return acct
}

// blobRequest serves a Blob request of an HNS account: the Blob handler
// runs it, and the Blob service checks the ACL permissions of the caller
// the context carries in the operation's own transaction. A blob written
// at a/b/c.txt makes the directories a and a/b in that transaction too.
func (h *handler) blobRequest(w http.ResponseWriter, r *http.Request, info *httpx.Info) {
	q := r.URL.Query()
	if q.Get("restype") == "account" && q.Get("comp") == "properties" {
		// Get Account Information reports the namespace.
		h.next.ServeHTTP(&hnsInfoWriter{ResponseWriter: w}, r)
		return
	}
	h.next.ServeHTTP(w, r)
}

// hnsInfoWriter sets x-ms-is-hns-enabled: true on a Get Account
// Information answer of an HNS account.
type hnsInfoWriter struct{ http.ResponseWriter }

func (w *hnsInfoWriter) WriteHeader(code int) {
	if code == http.StatusOK {
		w.Header().Set("X-Ms-Is-Hns-Enabled", "true")
	}
	w.ResponseWriter.WriteHeader(code)
}
