// Package filehttp is the HTTP surface of the File service (Azure Files
// REST): it decodes requests, runs the operation in package file and
// encodes Azure's responses.
//
// It fits between httpx, whose wrapper has already resolved the account,
// authenticated the caller and set the common headers, and the domain
// package file, which holds every Files rule (including the open-handle
// table the SMB server shares) and runs it inside storage transactions.
// The server builds it with New from httpx.Deps and the domain services.
package filehttp

import (
	"context"
	"encoding/base64"
	"errors"
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
	"github.com/lazuli-storage/lazuli/internal/file"
	"github.com/lazuli-storage/lazuli/internal/httpx"
	"github.com/lazuli-storage/lazuli/internal/sddl"
)

// handler serves the File operations.
type handler struct {
	d   httpx.Deps
	svc *file.Service
	// blobs reads the blobs Copy File takes as sources.
	blobs *blob.Service
}

// New returns the File service handler over the process's File service
// (shared with SMB) and its Blob service (for Copy File's blob sources).
// The server runs svc's background work (file.Service.Run).
func New(d httpx.Deps, svc *file.Service, blobs *blob.Service) http.Handler {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &handler{d: d, svc: svc, blobs: blobs}
}

// req bundles what every operation needs.
type req struct {
	w        http.ResponseWriter
	r        *http.Request
	info     *httpx.Info
	q        url.Values
	share    string
	path     string // below the share, '/'-separated, unescaped
	snapshot string
	// dir is set for the directory operations (restype=directory).
	dir bool
}

func (rq *req) ctx() context.Context { return rq.r.Context() }

func (rq *req) ref() file.Ref {
	return file.Ref{Account: rq.info.Account, Share: rq.share, Snapshot: rq.snapshot, Path: rq.path}
}

func (rq *req) shareRef() file.ShareRef {
	return file.ShareRef{Account: rq.info.Account, Name: rq.share, Snapshot: rq.snapshot}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	info := httpx.FromContext(r.Context())
	httpx.CanonicalizeHeaders(r)
	q := r.URL.Query()
	rq := &req{w: w, r: r, info: info, q: q}
	spart, ppart, _ := strings.Cut(info.Path, "/")
	var err error
	if rq.share, err = url.PathUnescape(spart); err != nil {
		httpx.WriteError(w, r, azerr.New(azerr.InvalidUri))
		return
	}
	if rq.path, err = url.PathUnescape(ppart); err != nil {
		httpx.WriteError(w, r, azerr.New(azerr.InvalidUri))
		return
	}
	rq.path = strings.Trim(rq.path, "/")
	rq.snapshot = q.Get("sharesnapshot")
	if r.Method == http.MethodPut && q.Get("comp") == "snapshot" && q.Get("restype") == "share" {
		// Create Snapshot ignores a sharesnapshot, well-formed or not,
		// and snapshots the share itself, as Azure does.
		rq.snapshot = ""
	}
	if rq.snapshot != "" && !file.ValidSnapshot(rq.snapshot) {
		httpx.WriteError(w, r, azerr.InvalidQuery("sharesnapshot", rq.snapshot, ""))
		return
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
	if err := h.route(rq); err != nil {
		httpx.WriteError(w, r, azerr.NameInput(handleError(err), inputHeaders))
	}
}

// handleError maps the handle table's errors to their REST form; engine
// failures are left to httpx.WriteError's one mapping.
func handleError(err error) error {
	switch {
	case errors.Is(err, file.ErrHandleClosed):
		return azerr.New(azerr.ResourceNotFound)
	case errors.Is(err, file.ErrAccessDenied):
		return azerr.New(azerr.AuthorizationPermissionMismatch)
	}
	return err
}

// checkConditions refuses the conditional headers the File service does
// not support with 400 ConditionHeadersNotSupported: all of them, except
// If-Match on Get File and Get File Properties (ifMatchOK), which compare
// it with the file's ETag. UNCONFIRMED: which headers newer versions
// accept (pinned in TestUnconfirmedConditionHeadersNotSupported).
func (rq *req) checkConditions(ifMatchOK bool) error {
	hd := rq.r.Header
	if hd.Get("If-None-Match") != "" || hd.Get("If-Modified-Since") != "" || hd.Get("If-Unmodified-Since") != "" ||
		(hd.Get("If-Match") != "" && !ifMatchOK) {
		return azerr.New(azerr.ConditionHeadersNotSupported)
	}
	return nil
}

// ifMatch checks If-Match of Get File against the file's ETag with the
// rules every service shares (internal/conditional): quoted or not, a
// list, "*"; 412 ConditionNotMet when it names another version.
func (rq *req) ifMatch(n *file.Node) error {
	vs := rq.r.Header.Values("If-Match")
	if len(vs) == 0 {
		return nil
	}
	c, err := conditional.Parse(vs, nil, nil, nil)
	if err != nil {
		return err
	}
	o, err := conditional.EvalRead(c, conditional.State{Exists: true, ETag: conditional.NormalizeETag(file.ETagString(n.ETag))}, "")
	if err != nil {
		return err
	}
	return o.Err(azerr.ConditionNotMet, 0)
}

func badRoute(m, comp string) error {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete:
	default:
		return azerr.New(azerr.UnsupportedHttpVerb)
	}
	return azerr.New(azerr.InvalidQueryParameterValue).WithDetail("QueryParameterName", "comp").WithDetail("QueryParameterValue", comp)
}

// ---- authorization ----

// authorize fills the parts of an auth.Access every operation shares.
func (h *handler) authorize(rq *req, a auth.Access) error {
	a.Service = auth.File
	a.Container = rq.share
	if a.Resource == auth.ResObject {
		a.Object = rq.path
		a.Snapshot = rq.snapshot
	}
	if a.Container != "" && a.Policy == nil {
		a.Policy = h.policyLookup(rq.ctx(), rq.info.Account, rq.share)
	}
	return h.d.Auth.Authorize(rq.info.Identity, rq.r, a)
}

// policyLookup finds stored access policies in a share's ACL.
func (h *handler) policyLookup(ctx context.Context, acct, share string) func(string) (*auth.Policy, error) {
	return func(id string) (*auth.Policy, error) {
		sh, err := h.svc.GetShare(ctx, file.ShareRef{Account: acct, Name: share}, "")
		if err != nil {
			if e, ok := azerr.As(err); ok && e.Code == azerr.ShareNotFound {
				return nil, nil
			}
			return nil, err
		}
		for _, si := range sh.ACL {
			if si.ID == id {
				return storedPolicy(si.Start, si.Expiry, si.Permission), nil
			}
		}
		return nil, nil
	}
}

// storedPolicy is a stored access policy's window and permissions as the
// authorizer takes them.
func storedPolicy(start, expiry, perm string) *auth.Policy {
	p := &auth.Policy{Permission: perm}
	if start != "" {
		p.Start, _ = acl.ParseTime(start)
	}
	if expiry != "" {
		p.Expiry, _ = acl.ParseTime(expiry)
	}
	return p
}

// ---- request decoding ----

// metadata collects x-ms-meta-* headers (names keep the case sent, as
// the plumbing restores it; a name in Go's canonical shape is stored
// lower-cased).
func (rq *req) metadata() ([]content.KV, error) {
	out := httpx.Metadata[content.KV](rq.r.Header)
	if err := content.ValidateMetadata(out); err != nil {
		return nil, err
	}
	return out, nil
}

func writeMeta(h http.Header, meta []content.KV) { httpx.WriteMetadata(h, meta) }

func decodeMD5(name, v string) ([]byte, error) { return httpx.DecodeMD5(name, v) }

func parseInt(name, v string, min, max int64) (int64, error) {
	return httpx.ParseInt(name, v, min, max)
}

// contentProps reads the x-ms-content-* and x-ms-cache-control headers.
func (rq *req) contentProps() (content.Props, error) {
	hd := rq.r.Header
	// The file's Content-MD5 is stored as given, whatever its length (the
	// service never checks it against the content); only base64 is asked.
	var md5 []byte
	if v := hd.Get("X-Ms-Content-Md5"); v != "" {
		var err error
		if md5, err = base64.StdEncoding.DecodeString(v); err != nil {
			return content.Props{}, azerr.New(azerr.InvalidMd5).WithDetail("HeaderName", "x-ms-content-md5").WithDetail("HeaderValue", v)
		}
	}
	return content.Props{ContentType: hd.Get("X-Ms-Content-Type"), ContentEncoding: hd.Get("X-Ms-Content-Encoding"),
		ContentLanguage: hd.Get("X-Ms-Content-Language"), ContentMD5: md5,
		ContentDisposition: hd.Get("X-Ms-Content-Disposition"), CacheControl: hd.Get("X-Ms-Cache-Control")}, nil
}

// smbRequired is the first version that defaults the SMB property
// headers; 2019-02-02 up to it required them on create and set.
// UNCONFIRMED: the exact version of the relaxation (pinned in tests).
const smbRequired = "2021-06-08"

// smbProps reads the SMB property headers of a create or set. In the
// versions that required them, a missing one is 400.
func (rq *req) smbProps(dir, create bool) (file.SMBProps, error) {
	hd := rq.r.Header
	var p file.SMBProps
	v := rq.info.Version
	if v >= "2019-02-02" && v < smbRequired {
		for _, name := range []string{"x-ms-file-attributes", "x-ms-file-creation-time", "x-ms-file-last-write-time"} {
			if hd.Get(name) == "" {
				return p, azerr.MissingHeader(name)
			}
		}
		if hd.Get("X-Ms-File-Permission") == "" && hd.Get("X-Ms-File-Permission-Key") == "" {
			return p, azerr.MissingHeader("x-ms-file-permission")
		}
	}
	if a := hd.Get("X-Ms-File-Attributes"); a != "" && !strings.EqualFold(a, "preserve") && !strings.EqualFold(a, "source") {
		attrs, ok := file.ParseAttr(a, dir)
		if !ok {
			return p, azerr.InvalidHeader("x-ms-file-attributes", a)
		}
		p.Attrs = &attrs
	}
	// Canonical names (as the server keys them) spare Get re-spelling
	// them on every request; errors name the header in lower case.
	for _, t := range []struct {
		key, name string
		dst       *file.TimeSet
	}{
		{"X-Ms-File-Creation-Time", "x-ms-file-creation-time", &p.Creation},
		{"X-Ms-File-Last-Write-Time", "x-ms-file-last-write-time", &p.LastWrite},
		{"X-Ms-File-Change-Time", "x-ms-file-change-time", &p.Change},
	} {
		s := hd.Get(t.key)
		switch {
		case s == "" || strings.EqualFold(s, "preserve") || strings.EqualFold(s, "source"):
		case strings.EqualFold(s, "now"):
			*t.dst = file.TimeSet{Set: true, Now: true}
		default:
			tm, ok := file.ParseTime(s)
			if !ok {
				return p, azerr.InvalidHeader(t.name, s)
			}
			*t.dst = file.TimeSet{Set: true, T: tm}
		}
	}
	perm, key := hd.Get("X-Ms-File-Permission"), hd.Get("X-Ms-File-Permission-Key")
	if perm != "" && key != "" {
		return p, azerr.InvalidHeader("x-ms-file-permission-key", key)
	}
	switch {
	case perm == "" || strings.EqualFold(perm, "inherit") || strings.EqualFold(perm, "preserve"):
	case len(perm) > file.MaxPermissionSize:
		return p, azerr.New(azerr.FileInvalidPermission)
	default:
		binary, err := rq.binaryPermission()
		if err != nil {
			return p, err
		}
		if binary {
			if perm, err = sddlFromBinary(perm); err != nil {
				return p, err
			}
		}
		p.Perm.SDDL = perm
	}
	p.Perm.Key = key
	// Restore leaves the attributes as given; Azure takes it only with a
	// permission to restore, and treats it as New otherwise.
	switch v := hd.Get("X-Ms-File-Property-Semantics"); {
	case v == "" || strings.EqualFold(v, "new"):
	case strings.EqualFold(v, "restore"):
		p.Restore = p.Perm != (file.Permission{})
	default:
		return p, azerr.InvalidHeader("x-ms-file-property-semantics", v)
	}
	return p, nil
}

// binaryPermission reads x-ms-file-permission-format: true for binary,
// false for sddl (the default); anything else is 400.
func (rq *req) binaryPermission() (bool, error) {
	switch f := rq.r.Header.Get("X-Ms-File-Permission-Format"); {
	case f == "" || strings.EqualFold(f, "sddl"):
		return false, nil
	case strings.EqualFold(f, "binary"):
		return true, nil
	default:
		return false, azerr.InvalidHeader("x-ms-file-permission-format", f)
	}
}

// sddlFromBinary turns a permission in the binary format (a base64
// self-relative security descriptor) into the SDDL lazuli stores: its
// owner, group and DACL. One that does not decode is 400
// FileInvalidPermission.
func sddlFromBinary(v string) (string, error) {
	sd, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return "", azerr.New(azerr.FileInvalidPermission)
	}
	s, err := sddl.Decode(sd, sddl.Owner|sddl.Group|sddl.DACL, "")
	if err != nil {
		return "", azerr.New(azerr.FileInvalidPermission)
	}
	return s, nil
}

// binaryFromSDDL is a stored SDDL in the binary format.
func binaryFromSDDL(s string) (string, error) {
	sd, err := sddl.Encode(s, sddl.Owner|sddl.Group|sddl.DACL)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(sd), nil
}

// ---- response encoding ----

// leaseHeaders writes the lease state of a file or share.
func leaseHeaders(hd http.Header, st leaseView) {
	hs := headers{h: hd}
	hs.lease(st)
}

func (hs *headers) lease(st leaseView) {
	hs.set("X-Ms-Lease-State", st.state)
	hs.set("X-Ms-Lease-Status", st.status)
	if st.duration != "" {
		hs.set("X-Ms-Lease-Duration", st.duration)
	}
}

type leaseView struct{ state, status, duration string }

func setETag(hd http.Header, etag uint64, lmt time.Time) {
	set(hd, "Etag", file.ETagString(etag))
	set(hd, "Last-Modified", httpx.FormatHTTPTime(lmt))
}

// nodeHeaders writes the headers every file and directory response
// carries: ETag, Last-Modified and the SMB properties.
func nodeHeaders(hd http.Header, n *file.Node) {
	hs := headers{h: hd}
	hs.node(n)
}

// headers stores response headers under keys given in canonical form,
// taking the one-value slices from one shared allocation instead of one
// per header: a Get File answers with about twenty headers.
type headers struct {
	h    http.Header
	vals []string
}

// set stores v as the only value of the canonical key k.
func (hs *headers) set(k, v string) {
	if len(hs.vals) == 0 {
		hs.vals = make([]string, 16)
	}
	hs.h[k] = hs.vals[:1:1]
	hs.vals[0] = v
	hs.vals = hs.vals[1:]
}

// node writes nodeHeaders; SMB times that are equal (a new file's
// creation, last write and change time) are formatted once.
func (hs *headers) node(n *file.Node) {
	hs.set("Etag", file.ETagString(n.ETag))
	hs.set("Last-Modified", httpx.FormatHTTPTime(n.Modified))
	hs.set("X-Ms-File-Attributes", n.Attrs.String())
	ct := file.FormatTime(n.CreationTime)
	hs.set("X-Ms-File-Creation-Time", ct)
	wt := ct
	if !n.LastWriteTime.Equal(n.CreationTime) {
		wt = file.FormatTime(n.LastWriteTime)
	}
	hs.set("X-Ms-File-Last-Write-Time", wt)
	cht := wt
	if !n.ChangeTime.Equal(n.LastWriteTime) {
		cht = file.FormatTime(n.ChangeTime)
	}
	hs.set("X-Ms-File-Change-Time", cht)
	hs.set("X-Ms-File-Id", strconv.FormatUint(n.ID, 10))
	hs.set("X-Ms-File-Parent-Id", strconv.FormatUint(parentID(n), 10))
	if n.PermKey != "" {
		hs.set("X-Ms-File-Permission-Key", n.PermKey)
	}
}

func parentID(n *file.Node) uint64 {
	if n.Parent == ^uint64(0) {
		return 0
	}
	return n.Parent
}

// maxResults reads the maxresults of a listing: 1 or more, at most
// MaxListResults (larger values are cut to it).
func (rq *req) maxResults() (int64, error) {
	v := rq.q.Get("maxresults")
	if v == "" {
		return file.MaxListResults, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, azerr.InvalidQuery("maxresults", v, "")
	}
	if n < 1 {
		return 0, azerr.OutOfRangeQuery("maxresults", v, 1, file.MaxListResults)
	}
	return min(n, file.MaxListResults), nil
}

// set stores v as the only value of the canonical header key k (without
// http.Header.Set's canonicalization; every key given here is canonical).
func set(h http.Header, k, v string) { h[k] = []string{v} }

func writeXML(rq *req, status int, body string) error {
	httpx.WriteXML(rq.w, rq.r, status, body)
	return nil
}

func esc(s string) string { return azerr.EscapeXMLText(s) }
