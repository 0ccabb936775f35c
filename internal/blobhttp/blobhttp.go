// Package blobhttp is the HTTP surface of the Blob service: it decodes
// requests, runs the operation and encodes Azure's responses.
//
// It fits between httpx, whose wrapper has already resolved the account,
// authenticated the caller and set the common headers, and the domain
// package blob, which holds every Blob rule and runs it inside storage
// transactions; this package only translates between the two. Every
// operation is one row of the table in ops.go (path level, restype, comp,
// method -> operation name, required access, handler); the dispatcher
// names the operation and authorizes the caller before the handler runs.
// The server builds it with New from httpx.Deps and its blob.Service.
package blobhttp

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/acl"
	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/conditional"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/httpx"
	"github.com/lazuli-storage/lazuli/internal/svcprops"
)

// handler serves the Blob operations.
type handler struct {
	d   httpx.Deps
	svc *blob.Service
	// sub runs batch sub-requests with the full plumbing (authentication
	// included), as if each had arrived on its own.
	sub http.Handler
}

// New returns the Blob service handler over svc, the process's one Blob
// service (the server builds it and shares it with the File service's
// handler, which reads blobs as copy sources).
func New(d httpx.Deps, svc *blob.Service) http.Handler {
	now := d.Now
	if now == nil {
		now = time.Now
	}
	d.Now = now
	h := &handler{d: d, svc: svc}
	h.sub = httpx.Wrap(auth.Blob, h, httpx.Options{Auth: d.Auth, Log: d.Log, Silent: true, Now: now})
	return h
}

// foldQuery lowercases the query's parameter names, merging the values of
// names that differ only in case: Azure reads them case-blind (Shared Key
// signs them lowercased), and the Data Lake SDKs send camelCase names such
// as maxResults to the Blob endpoint.
func foldQuery(q url.Values) url.Values {
	for k, vs := range q {
		if l := strings.ToLower(k); l != k {
			delete(q, k)
			q[l] = append(q[l], vs...)
		}
	}
	return q
}

// req bundles what every operation needs.
type req struct {
	w         http.ResponseWriter
	r         *http.Request
	info      *httpx.Info
	q         url.Values
	container string
	blob      string
	snapshot  string
	// createOnly is set when the caller may create the blob but not
	// replace it (create permission without write).
	createOnly bool
	// keySHA is the SHA-256 of the request's customer-provided key, which
	// the answer echoes as x-ms-encryption-key-sha256.
	keySHA string
	// scope is the encryption scope a write stored, echoed as
	// x-ms-encryption-scope.
	scope string
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	info := httpx.FromContext(r.Context())
	httpx.CanonicalizeHeaders(r)
	q := foldQuery(r.URL.Query())
	rq := &req{w: w, r: r, info: info, q: q}
	path := info.Path
	cpart, bpart, hasBlob := strings.Cut(path, "/")
	var err error
	if rq.container, err = url.PathUnescape(cpart); err != nil {
		httpx.WriteError(w, r, azerr.New(azerr.InvalidUri))
		return
	}
	if hasBlob {
		if rq.blob, err = url.PathUnescape(bpart); err != nil {
			httpx.WriteError(w, r, azerr.New(azerr.InvalidUri))
			return
		}
		// Azure reads a backslash in a blob name as a slash.
		rq.blob = strings.ReplaceAll(rq.blob, `\`, "/")
	}
	if hasBlob && rq.blob == "" {
		hasBlob = false
	}
	rq.snapshot = q.Get("snapshot")
	if rq.snapshot != "" && !blob.ValidSnapshot(rq.snapshot) {
		httpx.WriteError(w, r, azerr.InvalidQuery("snapshot", rq.snapshot, ""))
		return
	}
	// A version id is a timestamp of the same form.
	if v, ok := q["versionid"]; ok {
		if len(v) != 1 || !blob.ValidSnapshot(v[0]) || rq.snapshot != "" {
			httpx.WriteError(w, r, azerr.InvalidQuery("versionid", q.Get("versionid"), ""))
			return
		}
		// A version is addressed like a snapshot (see blob.VersionKey).
		rq.snapshot = blob.VersionKey(v[0])
	}
	if r.Method == http.MethodOptions {
		if err := h.preflight(rq); err != nil {
			httpx.WriteError(w, r, err)
		}
		return
	}
	if r.Header.Get("Origin") != "" {
		h.applyCors(rq)
	}
	if err := h.route(rq, hasBlob); err != nil {
		httpx.WriteError(w, r, azerr.NameInput(err, inputHeaders))
	}
}

// ---- authorization ----

// access fills the parts of an auth.Access every operation shares.
func (h *handler) authorize(rq *req, a auth.Access) error {
	a.Service = auth.Blob
	a.Container = rq.container
	if a.Resource == auth.ResObject {
		a.Object = rq.blob
		a.Snapshot = rq.snapshot
	}
	if a.Container != "" && a.Policy == nil {
		a.Policy = h.policyLookup(rq.r.Context(), rq.info.Account, rq.container)
	}
	return h.d.Auth.Authorize(rq.info.Identity, rq.r, a)
}

// authorizeCreate authorizes a write that creates or replaces a blob
// (Put Blob, Put Block List, Copy Blob): write permission allows both,
// create permission alone allows only a blob that does not exist yet,
// which the returned flag asks the domain to check in its transaction.
func (h *handler) authorizeCreate(rq *req) (createOnly bool, err error) {
	err = h.authorize(rq, auth.Access{Resource: auth.ResObject, Perms: "w"})
	if e, ok := azerr.As(err); ok && e.Code == azerr.AuthorizationPermissionMismatch {
		if err2 := h.authorize(rq, auth.Access{Resource: auth.ResObject, Perms: "c"}); err2 == nil {
			return true, nil
		}
	}
	return false, err
}

// policyLookup finds stored access policies in a container's ACL.
func (h *handler) policyLookup(ctx context.Context, acct, cname string) func(string) (*auth.Policy, error) {
	return func(id string) (*auth.Policy, error) {
		c, err := h.svc.ContainerExists(ctx, acct, cname)
		if err != nil || c == nil {
			return nil, err
		}
		for _, si := range c.ACL {
			if si.ID == id {
				p := &auth.Policy{Permission: si.Permission}
				if si.Start != "" {
					p.Start, _ = acl.ParseTime(si.Start)
				}
				if si.Expiry != "" {
					p.Expiry, _ = acl.ParseTime(si.Expiry)
				}
				return p, nil
			}
		}
		return nil, nil
	}
}

// authorizeSource checks that the caller may read a copy source on this
// server. A Shared Key Copy Blob (asynchronous) covers sources in its own
// account that carry no SAS; a SAS in the source URL is always checked (a
// source SAS without read fails even under the account key, as on Azure).
// The From-URL operations (Put Blob, Put Block, Append Block, Put Page
// From URL, synchronous Copy Blob From URL) read their source as any
// client would, so it needs a SAS in its URL, a token in
// x-ms-copy-source-authorization or a container open to public reads,
// even inside the account. Failure is CannotVerifyCopySource with the
// status the source gave.
func (h *handler) authorizeSource(rq *req, srcURL string, src blob.Ref) error {
	fromURL := strings.HasSuffix(rq.info.Operation, "FromURL")
	if id := rq.info.Identity; id != nil && !fromURL && src.Account == rq.info.Account && (id.Kind == auth.SharedKey || id.Kind == auth.SharedKeyLite) && !hasSAS(srcURL) {
		return nil
	}
	sr, err := http.NewRequestWithContext(rq.ctx(), http.MethodGet, srcURL, nil)
	if err != nil {
		return azerr.InvalidHeader("x-ms-copy-source", srcURL)
	}
	sr.RemoteAddr, sr.TLS = rq.r.RemoteAddr, rq.r.TLS
	sr.Header.Set("X-Ms-Version", rq.info.Version)
	if v := rq.r.Header.Get("X-Ms-Copy-Source-Authorization"); v != "" {
		sr.Header.Set("Authorization", v)
	}
	fail := func(err error) error {
		status := http.StatusForbidden
		if e, ok := azerr.As(err); ok && e.Status >= 400 && e.Status < 500 {
			status = e.Status
		}
		return azerr.Newf(azerr.CannotVerifyCopySource, "The copy source could not be read: %v", err).WithStatus(status)
	}
	id, err := h.d.Auth.Authenticate(sr, auth.Blob, src.Account)
	if err != nil {
		return fail(err)
	}
	ctx := rq.ctx()
	err = h.d.Auth.Authorize(id, sr, auth.Access{Service: auth.Blob, Resource: auth.ResObject, Perms: "r",
		Container: src.Container, Object: src.Name, Snapshot: src.Snapshot,
		Policy: h.policyLookup(ctx, src.Account, src.Container),
		PublicRead: func() (bool, error) {
			c, err := h.svc.ContainerExists(ctx, src.Account, src.Container)
			if err != nil || c == nil {
				return false, err
			}
			return c.Public == "blob" || c.Public == "container", nil
		}})
	if err != nil {
		return fail(err)
	}
	return nil
}

// hasSAS reports whether a copy source URL carries a SAS signature.
func hasSAS(srcURL string) bool {
	u, err := url.Parse(srcURL)
	return err != nil || u.Query().Has("sig")
}

// publicRead returns the PublicRead check for a read: blob-level reads need
// "blob" or "container" access; container reads need "container".
func (h *handler) publicRead(rq *req, containerLevel bool) func() (bool, error) {
	ctx := rq.r.Context()
	return func() (bool, error) {
		c, err := h.svc.ContainerExists(ctx, rq.info.Account, rq.container)
		if err != nil || c == nil {
			return false, err
		}
		if containerLevel {
			return c.Public == "container", nil
		}
		return c.Public == "blob" || c.Public == "container", nil
	}
}

// ---- request decoding ----

func (rq *req) ref() blob.Ref {
	return blob.Ref{Account: rq.info.Account, Container: rq.container, Name: rq.blob, Snapshot: rq.snapshot}
}

func (rq *req) ctx() context.Context { return rq.r.Context() }

// cond parses the conditional headers, x-ms-lease-id and x-ms-if-tags.
func (rq *req) cond() (blob.Cond, error) {
	h := rq.r.Header
	c, err := conditional.Parse(h.Values("If-Match"), h.Values("If-None-Match"), h.Values("If-Modified-Since"), h.Values("If-Unmodified-Since"))
	if err != nil {
		return blob.Cond{}, err
	}
	cond := blob.Cond{Conditions: c, LeaseID: h.Get("X-Ms-Lease-Id"), IfTags: h.Get("X-Ms-If-Tags")}
	if err := rq.keyCond(&cond); err != nil {
		return blob.Cond{}, err
	}
	return cond, nil
}

// sourceCond parses the x-ms-source-if-* headers of a copy.
func (rq *req) sourceCond() (blob.Cond, error) {
	h := rq.r.Header
	c, err := conditional.Parse(h.Values("X-Ms-Source-If-Match"), h.Values("X-Ms-Source-If-None-Match"),
		h.Values("X-Ms-Source-If-Modified-Since"), h.Values("X-Ms-Source-If-Unmodified-Since"))
	if err != nil {
		return blob.Cond{}, err
	}
	cond := blob.Cond{Conditions: c, LeaseID: h.Get("X-Ms-Source-Lease-Id"), IfTags: h.Get("X-Ms-Source-If-Tags"),
		SourceRead: strings.HasSuffix(rq.info.Operation, "FromURL")}
	if err := rq.sourceKeyCond(&cond); err != nil {
		return blob.Cond{}, err
	}
	return cond, nil
}

// metadata collects x-ms-meta-* headers. Go canonicalizes header names on
// the wire ("X-Ms-Meta-Foo"); a name in exactly that canonical shape is
// stored lower-cased, any other spelling is kept as sent.
func (rq *req) metadata() ([]blob.KV, error) {
	out := httpx.Metadata[blob.KV](rq.r.Header)
	if err := content.ValidateMetadata(out); err != nil {
		return nil, err
	}
	return out, nil
}

// writeMeta sends metadata as x-ms-meta-* headers spelled with the case
// the names were stored with, as Azure does.
func writeMeta(h http.Header, meta []blob.KV) { httpx.WriteMetadata(h, meta) }

func setETag(h http.Header, etag uint64, lmt time.Time) {
	hs := headerSetter{vals: make([]string, 2)}
	hs.setETag(h, etag, lmt)
}

// headerSetter stores response headers under keys given in canonical
// form, taking the one-value slices from one shared allocation instead of
// one per header (Header.Set canonicalizes the key and allocates each).
type headerSetter struct {
	vals []string
	// lastMod is the Last-Modified text, kept so that an equal time (a
	// blob's creation time is often its last write) is formatted once.
	lastMod     string
	lastModTime time.Time
}

// set stores v as the only value of the canonical key k.
func (hs *headerSetter) set(h http.Header, k, v string) {
	if len(hs.vals) == 0 {
		hs.vals = make([]string, 16)
	}
	h[k] = hs.vals[:1:1]
	hs.vals[0] = v
	hs.vals = hs.vals[1:]
}

// time formats t for a header, reusing the Last-Modified text when t is
// the same instant to the second.
func (hs *headerSetter) time(t time.Time) string {
	if hs.lastMod != "" && t.Unix() == hs.lastModTime.Unix() {
		return hs.lastMod
	}
	return httpx.FormatHTTPTime(t)
}

func (hs *headerSetter) setETag(h http.Header, etag uint64, lmt time.Time) {
	hs.set(h, "Etag", content.ETagString(etag))
	hs.lastMod, hs.lastModTime = httpx.FormatHTTPTime(lmt), lmt
	hs.set(h, "Last-Modified", hs.lastMod)
}

func decodeMD5(name, v string) ([]byte, error) { return httpx.DecodeMD5(name, v) }

// txSums are the transactional checksums an upload may carry: Content-MD5
// or x-ms-content-crc64, never both.
type txSums struct {
	md5 []byte
	crc []byte
}

// txChecksums reads Content-MD5 and x-ms-content-crc64. Both headers at
// once are 400 BothCrc64AndMd5HeaderPresent (whatever their values); a
// CRC-64 that is not 8 bytes of base64 is 400 InvalidHeaderValue.
func (rq *req) txChecksums() (txSums, error) {
	var t txSums
	var err error
	if rq.r.Header.Get("Content-Md5") != "" && rq.r.Header.Get("X-Ms-Content-Crc64") != "" {
		return t, azerr.New(azerr.BothCrc64AndMd5HeaderPresent)
	}
	if t.md5, err = decodeMD5("Content-MD5", rq.r.Header.Get("Content-Md5")); err != nil {
		return t, err
	}
	if v := rq.r.Header.Get("X-Ms-Content-Crc64"); v != "" {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil || len(b) != 8 {
			return t, azerr.InvalidHeader("x-ms-content-crc64", v)
		}
		t.crc = b
	}
	return t, nil
}

// verify checks the body's CRC-64 against the one sent (the MD5 is
// checked while the body is read): 400 Crc64Mismatch.
func (t txSums) verify(d blob.Ingested) error {
	if t.crc != nil && !bytes.Equal(t.crc, content.CRC64Bytes(d.CRC64)) {
		return azerr.New(azerr.Crc64Mismatch)
	}
	return nil
}

// respond sets the checksum headers of an upload's answer: the CRC-64
// always, Content-MD5 only when the request sent one (as Azure answers
// Put Block, Append Block and Put Page).
func (t txSums) respond(h http.Header, d blob.Ingested) {
	h.Set("X-Ms-Content-Crc64", base64.StdEncoding.EncodeToString(content.CRC64Bytes(d.CRC64)))
	if t.md5 != nil {
		h.Set("Content-Md5", base64.StdEncoding.EncodeToString(d.MD5))
	}
}

func parseInt(name, v string, min, max int64) (int64, error) {
	return httpx.ParseInt(name, v, min, max)
}

// optInt reads the optional integer header name, spelled as the servers
// give header keys (a lowercase name costs Get an allocation); errors name
// it in lowercase, as Azure does.
func optInt(h http.Header, name string, min, max int64) (*int64, error) {
	v := h.Get(name)
	if v == "" {
		return nil, nil
	}
	n, err := parseInt(strings.ToLower(name), v, min, max)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

func (rq *req) status(code int) {
	if rq.keySHA != "" && code < 300 {
		rq.w.Header().Set("X-Ms-Encryption-Key-Sha256", rq.keySHA)
	}
	if rq.scope != "" && code < 300 {
		rq.w.Header().Set("X-Ms-Encryption-Scope", rq.scope)
	}
	rq.w.WriteHeader(code)
}

// contentLength requires a Content-Length on uploads.
func (rq *req) contentLength(max int64) (int64, error) {
	n := rq.r.ContentLength
	if n < 0 {
		if rq.r.Header.Get("Content-Length") == "" && rq.r.Body != nil && rq.r.Body != http.NoBody {
			return 0, azerr.New(azerr.MissingContentLengthHeader)
		}
		n = 0
	}
	if n > max {
		return 0, azerr.New(azerr.RequestBodyTooLarge).WithDetail("MaxLimit", strconv.FormatInt(max, 10))
	}
	return n, nil
}

// ---- service ----

// accountInfo is Get Account Information.
func (h *handler) accountInfo(rq *req) error {
	hd := rq.w.Header()
	hd.Set("X-Ms-Sku-Name", "Standard_RAGRS")
	hd.Set("X-Ms-Account-Kind", "StorageV2")
	hd.Set("X-Ms-Is-Hns-Enabled", "false")
	rq.status(http.StatusOK)
	return nil
}

func (h *handler) serviceStats(rq *req) error {
	return writeXML(rq, http.StatusOK, svcprops.RenderStats(h.d.Now()))
}

// writeXML sends an XML document given without its declaration.
func writeXML(rq *req, status int, body string) error {
	httpx.WriteXML(rq.w, rq.r, status, body)
	return nil
}
