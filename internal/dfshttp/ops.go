package dfshttp

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/conditional"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/httpx"
	"github.com/lazuli-storage/lazuli/internal/lease"
)

// cond parses the conditional headers with the given prefix ("" or
// "X-Ms-Source-") and the matching lease id header.
func (x *rq) cond(prefix string) (blob.Cond, error) {
	h := x.r.Header
	c, err := conditional.Parse(h.Values(prefix+"If-Match"), h.Values(prefix+"If-None-Match"),
		h.Values(prefix+"If-Modified-Since"), h.Values(prefix+"If-Unmodified-Since"))
	if err != nil {
		return blob.Cond{}, err
	}
	lid := "X-Ms-Lease-Id"
	if prefix != "" {
		lid = "X-Ms-Source-Lease-Id"
	}
	return blob.Cond{Conditions: c, LeaseID: h.Get(lid)}, nil
}

func setETag(h http.Header, etag uint64, t time.Time) {
	h.Set("ETag", content.ETagString(etag))
	h.Set("Last-Modified", httpx.FormatHTTPTime(t))
}

// intQuery reads the query parameter name, a number from 1 to max; def
// when it is absent.
func (x *rq) intQuery(name string, def, max int) (int, error) {
	v := x.q.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := httpx.ParseInt(name, v, 1, int64(max))
	return int(n), err
}

// boolQuery reads the query parameter name, "true" or "false"; absent,
// it is false unless required.
func (x *rq) boolQuery(name string, required bool) (bool, error) {
	switch v := x.q.Get(name); v {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "":
		if !required {
			return false, nil
		}
		return false, azerr.InvalidQuery(name, v, "")
	default:
		return false, azerr.InvalidQuery(name, v, "")
	}
}

// continuation reads the continuation query parameter of a path listing
// or batch: the service's marker in unpadded base64url.
func (x *rq) continuation() (string, error) {
	v := x.q.Get("continuation")
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return "", azerr.InvalidQuery("continuation", v, "")
	}
	return string(raw), nil
}

// setContinuation sets x-ms-continuation to the marker next, encoded as
// continuation reads it; none at the end.
func (x *rq) setContinuation(next string) {
	if next != "" {
		x.w.Header().Set("X-Ms-Continuation", base64.RawURLEncoding.EncodeToString([]byte(next)))
	}
}

// ---- filesystems ----

// listFilesystems is Filesystem - List (GET /?resource=account).
func (h *handler) listFilesystems(x *rq) error {
	if err := h.authorize(x, auth.ResService, "l", true); err != nil {
		return err
	}
	max, err := x.intQuery("maxResults", 5000, 5000)
	if err != nil {
		return err
	}
	cs, next, err := h.svc.ListContainers(x.ctx(), x.info.Account, x.q.Get("prefix"), x.q.Get("continuation"), max)
	if err != nil {
		return err
	}
	type item struct {
		Name         string `json:"name"`
		LastModified string `json:"lastModified"`
		ETag         string `json:"etag"`
	}
	out := struct {
		Filesystems []item `json:"filesystems"`
	}{Filesystems: []item{}}
	for _, c := range cs {
		out.Filesystems = append(out.Filesystems, item{c.Name, httpx.FormatHTTPTime(c.Modified), content.ETagString(c.ETag)})
	}
	if next != "" {
		x.w.Header().Set("X-Ms-Continuation", next)
	}
	return writeJSON(x, out)
}

func writeJSON(x *rq, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	x.w.Header().Set("Content-Type", "application/json;charset=utf-8")
	x.w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	x.w.WriteHeader(http.StatusOK)
	_, err = x.w.Write(body)
	return err
}

// createFilesystem is Filesystem - Create.
func (h *handler) createFilesystem(x *rq) error {
	if err := h.authorize(x, auth.ResContainer, "c", true); err != nil {
		return err
	}
	meta, err := parseProperties(x.r.Header.Get("X-Ms-Properties"))
	if err != nil {
		return err
	}
	c, err := h.svc.CreateContainer(x.ctx(), x.info.Account, x.fs, meta, "")
	if err != nil {
		return err
	}
	setETag(x.w.Header(), c.ETag, c.Modified)
	x.w.Header().Set("X-Ms-Namespace-Enabled", "true")
	x.w.WriteHeader(http.StatusCreated)
	return nil
}

// deleteFilesystem is Filesystem - Delete.
func (h *handler) deleteFilesystem(x *rq) error {
	if err := h.authorize(x, auth.ResContainer, "d", true); err != nil {
		return err
	}
	cond, err := x.cond("")
	if err != nil {
		return err
	}
	if err := h.svc.DeleteContainer(x.ctx(), x.info.Account, x.fs, cond); err != nil {
		return err
	}
	x.w.WriteHeader(http.StatusAccepted)
	return nil
}

// getFilesystem is Filesystem - Get Properties.
func (h *handler) getFilesystem(x *rq) error {
	if err := h.authorize(x, auth.ResContainer, "r", true); err != nil {
		return err
	}
	c, err := h.svc.GetContainer(x.ctx(), x.info.Account, x.fs, "")
	if err != nil {
		return err
	}
	hd := x.w.Header()
	setETag(hd, c.ETag, c.Modified)
	hd.Set("X-Ms-Properties", formatProperties(c.Meta))
	hd.Set("X-Ms-Namespace-Enabled", "true")
	x.w.WriteHeader(http.StatusOK)
	return nil
}

// setFilesystem is Filesystem - Set Properties.
func (h *handler) setFilesystem(x *rq) error {
	if err := h.authorize(x, auth.ResContainer, "w", true); err != nil {
		return err
	}
	meta, err := parseProperties(x.r.Header.Get("X-Ms-Properties"))
	if err != nil {
		return err
	}
	cond, err := x.cond("")
	if err != nil {
		return err
	}
	c, err := h.svc.SetContainerMetadata(x.ctx(), x.info.Account, x.fs, meta, cond)
	if err != nil {
		return err
	}
	setETag(x.w.Header(), c.ETag, c.Modified)
	x.w.WriteHeader(http.StatusOK)
	return nil
}

// listPaths is Filesystem - List Paths.
func (h *handler) listPaths(x *rq) error {
	if err := h.authorize(x, auth.ResContainer, "l", false); err != nil {
		return err
	}
	req := blob.ListPathsRequest{Dir: strings.Trim(x.q.Get("directory"), "/")}
	var err error
	if req.Recursive, err = x.boolQuery("recursive", true); err != nil {
		return err
	}
	if req.Max, err = x.intQuery("maxResults", 0, 5000); err != nil {
		return err
	}
	if req.Continuation, err = x.continuation(); err != nil {
		return err
	}
	paths, next, err := h.svc.ListPaths(x.ctx(), x.info.Account, x.fs, req)
	if err != nil {
		return err
	}
	acls := make([]*blob.PathACL, len(paths))
	for i, p := range paths {
		acls[i] = &p.ACL
	}
	name, err := h.principalNames(x, acls...)
	if err != nil {
		return err
	}
	type item struct {
		Name          string `json:"name"`
		IsDirectory   string `json:"isDirectory,omitempty"`
		ContentLength string `json:"contentLength"`
		ETag          string `json:"etag,omitempty"`
		LastModified  string `json:"lastModified,omitempty"`
		CreationTime  string `json:"creationTime,omitempty"`
		Owner         string `json:"owner"`
		Group         string `json:"group"`
		Permissions   string `json:"permissions"`
		// EncryptionContext is a file's x-ms-encryption-context.
		EncryptionContext string `json:"EncryptionContext,omitempty"`
	}
	out := struct {
		Paths []item `json:"paths"`
	}{Paths: []item{}}
	for _, p := range paths {
		it := item{Name: p.Name, ContentLength: "0", Owner: name(p.ACL.Owner), Group: name(p.ACL.Group), Permissions: permissions(&p.ACL)}
		if p.Dir {
			it.IsDirectory = "true"
		}
		if b := p.Blob; b != nil {
			it.ContentLength = strconv.FormatInt(b.Size, 10)
			it.ETag = content.ETagString(b.ETag)
			it.LastModified = httpx.FormatHTTPTime(b.Modified)
			// Windows file time: 100 ns ticks since 1601.
			it.CreationTime = strconv.FormatInt(b.Created.UnixNano()/100+116444736000000000, 10)
			it.EncryptionContext = b.EncryptionContext
		}
		out.Paths = append(out.Paths, it)
	}
	x.setContinuation(next)
	return writeJSON(x, out)
}

// permissions is x-ms-permissions: the bits, with + for an extended ACL.
func permissions(a *blob.PathACL) string {
	if a.Extended() {
		return a.Permissions + "+"
	}
	return a.Permissions
}

// ---- paths ----

func (x *rq) props() (blob.Props, bool, error) {
	h := x.r.Header
	p := blob.Props{ContentType: h.Get("X-Ms-Content-Type"), ContentEncoding: h.Get("X-Ms-Content-Encoding"),
		ContentLanguage: h.Get("X-Ms-Content-Language"), ContentDisposition: h.Get("X-Ms-Content-Disposition"),
		CacheControl: h.Get("X-Ms-Cache-Control")}
	if v := h.Get("X-Ms-Content-Md5"); v != "" {
		raw, err := base64.StdEncoding.DecodeString(v)
		if err != nil || len(raw) != 16 {
			return p, false, azerr.InvalidHeader("x-ms-content-md5", v)
		}
		p.ContentMD5 = raw
	}
	any := p.ContentType != "" || p.ContentEncoding != "" || p.ContentLanguage != "" || p.ContentDisposition != "" ||
		p.CacheControl != "" || p.ContentMD5 != nil
	return p, any, nil
}

// createPath is Path - Create (and rename, with x-ms-rename-source).
func (h *handler) createPath(x *rq) error {
	if src := x.r.Header.Get("X-Ms-Rename-Source"); src != "" {
		return h.renamePath(x, src)
	}
	if err := h.authorize(x, auth.ResObject, "cw", false); err != nil {
		return err
	}
	res := x.q.Get("resource")
	if res != "file" && res != "directory" {
		return azerr.New(azerr.InvalidResourceType)
	}
	if m := x.q.Get("mode"); m != "" && m != "legacy" && m != "posix" {
		return azerr.InvalidQuery("mode", m, "")
	}
	hd := x.r.Header
	meta, err := parseProperties(hd.Get("X-Ms-Properties"))
	if err != nil {
		return err
	}
	props, _, err := x.props()
	if err != nil {
		return err
	}
	cond, err := x.cond("")
	if err != nil {
		return err
	}
	req := blob.CreatePathRequest{Ref: x.ref(), Dir: res == "directory", Props: props, Meta: meta, Cond: cond,
		Umask: hd.Get("X-Ms-Umask"), Owner: hd.Get("X-Ms-Owner"), Group: hd.Get("X-Ms-Group"), ACL: hd.Get("X-Ms-Acl")}
	if v := hd.Get("X-Ms-Permissions"); v != "" {
		if req.Permissions, err = blob.ParsePermissions(v); err != nil {
			return err
		}
	}
	if v := hd.Get("X-Ms-Encryption-Context"); len(v) > blob.MaxEncryptionContext {
		return azerr.InvalidHeader("x-ms-encryption-context", v)
	} else if !req.Dir {
		// Not applicable to a directory: not kept (lazuli's choice).
		req.EncryptionContext = v
	}
	if opt, tv := hd.Get("X-Ms-Expiry-Option"), hd.Get("X-Ms-Expiry-Time"); opt != "" || tv != "" {
		// Files only: Azure documents the headers for files, and lazuli
		// refuses them on a directory (its pinned choice).
		if req.Dir {
			return azerr.InvalidHeader("x-ms-expiry-option", opt)
		}
		e, err := blob.ParseExpiry(opt, tv, h.d.Now())
		if err != nil {
			return err
		}
		req.Expiry = &e
	}
	if req.Owner == "" {
		req.Owner = callerOID(x)
	}
	p, err := h.svc.CreatePath(x.ctx(), req)
	if err != nil {
		return err
	}
	out := x.w.Header()
	setETag(out, p.Blob.ETag, p.Blob.Modified)
	out.Set("X-Ms-Request-Server-Encrypted", "true")
	out.Set("Content-Length", "0")
	x.w.WriteHeader(http.StatusCreated)
	return nil
}

// renamePath is Path - Create with x-ms-rename-source: /{filesystem}/{path}
// (path-style requests also carry the account first), optionally with a
// SAS query after it.
func (h *handler) renamePath(x *rq, src string) error {
	if err := h.authorize(x, auth.ResObject, "cw", false); err != nil {
		return err
	}
	srcPath, _, _ := strings.Cut(src, "?")
	srcPath, err := url.PathUnescape(srcPath)
	if err != nil {
		return azerr.New(azerr.InvalidRenameSourcePath)
	}
	parts := strings.SplitN(strings.TrimPrefix(srcPath, "/"), "/", 3)
	if len(parts) == 3 && parts[0] == x.info.Account && x.pathStyle() {
		parts = parts[1:]
	} else if len(parts) == 3 {
		parts = []string{parts[0], parts[1] + "/" + parts[2]}
	}
	if len(parts) != 2 || parts[0] == "" || strings.Trim(parts[1], "/") == "" {
		return azerr.New(azerr.InvalidRenameSourcePath)
	}
	// The source is authorized as well as the destination: a SAS for one
	// filesystem or directory must not move a path out of another.
	srcAccess := auth.Access{Service: auth.Blob, Resource: auth.ResObject, Container: parts[0], Object: strings.Trim(parts[1], "/")}
	if err := h.d.Auth.Authorize(x.info.Identity, x.r, srcAccess); err != nil {
		return err
	}
	srcCond, err := x.cond("X-Ms-Source-")
	if err != nil {
		return err
	}
	dstCond, err := x.cond("")
	if err != nil {
		return err
	}
	req := blob.RenameRequest{
		Src:     blob.Ref{Account: x.info.Account, Container: parts[0], Name: strings.Trim(parts[1], "/")},
		Dst:     x.ref(),
		SrcCond: srcCond, DstCond: dstCond,
	}
	p, err := h.svc.RenamePath(x.ctx(), req)
	if err != nil {
		return err
	}
	out := x.w.Header()
	if p != nil && p.Blob != nil {
		setETag(out, p.Blob.ETag, p.Blob.Modified)
	}
	out.Set("Content-Length", "0")
	x.w.WriteHeader(http.StatusCreated)
	return nil
}

// pathStyle reports whether the request named its account in the path
// (rather than the host), so that a rename source does too.
func (x *rq) pathStyle() bool {
	return strings.HasPrefix(strings.TrimPrefix(x.r.URL.EscapedPath(), "/"), x.info.Account+"/")
}

// position reads the position query parameter.
func (x *rq) position() (int64, error) {
	v := x.q.Get("position")
	if v == "" {
		return 0, azerr.New(azerr.MissingRequiredQueryParameter).WithDetail("QueryParameterName", "position")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, azerr.InvalidQuery("position", v, "")
	}
	return n, nil
}

// appendData is Path - Update (action=append).
func (h *handler) appendData(x *rq) error {
	if err := h.authorize(x, auth.ResObject, "aw", false); err != nil {
		return err
	}
	pos, err := x.position()
	if err != nil {
		return err
	}
	var want []byte
	if v := x.r.Header.Get("Content-Md5"); v != "" {
		if want, err = base64.StdEncoding.DecodeString(v); err != nil || len(want) != 16 {
			return azerr.InvalidHeader("Content-MD5", v)
		}
	}
	if x.r.ContentLength < 0 {
		return azerr.New(azerr.MissingContentLengthHeader).WithStatus(http.StatusLengthRequired)
	}
	data, err := h.svc.IngestSize(x.ctx(), x.r.Body, x.r.ContentLength, false, want, 0)
	if err != nil {
		return err
	}
	cond, err := x.cond("")
	if err != nil {
		return err
	}
	if err := h.leaseActionBefore(x, &cond); err != nil {
		return err
	}
	if err := h.svc.AppendData(x.ctx(), x.ref(), pos, data, cond); err != nil {
		return err
	}
	if err := h.leaseActionAfter(x, cond); err != nil {
		return err
	}
	out := x.w.Header()
	if data.MD5 != nil {
		out.Set("Content-MD5", base64.StdEncoding.EncodeToString(data.MD5))
	}
	out.Set("X-Ms-Request-Server-Encrypted", "true")
	out.Set("Content-Length", "0")
	x.w.WriteHeader(http.StatusAccepted)
	return nil
}

// flushData is Path - Update (action=flush).
func (h *handler) flushData(x *rq) error {
	if err := h.authorize(x, auth.ResObject, "w", false); err != nil {
		return err
	}
	pos, err := x.position()
	if err != nil {
		return err
	}
	cond, err := x.cond("")
	if err != nil {
		return err
	}
	req := blob.FlushRequest{Ref: x.ref(), Position: pos, Cond: cond}
	if v := x.q.Get("retainUncommittedData"); v != "" {
		req.Retain = v == "true"
	}
	props, any, err := x.props()
	if err != nil {
		return err
	}
	if any {
		req.Props = &props
	}
	if err := h.leaseActionBefore(x, &req.Cond); err != nil {
		return err
	}
	b, err := h.svc.FlushData(x.ctx(), req)
	if err != nil {
		return err
	}
	if err := h.leaseActionAfter(x, req.Cond); err != nil {
		return err
	}
	out := x.w.Header()
	setETag(out, b.ETag, b.Modified)
	out.Set("X-Ms-Request-Server-Encrypted", "true")
	out.Set("Content-Length", "0")
	x.w.WriteHeader(http.StatusOK)
	return nil
}

// leaseActionBefore handles x-ms-lease-action on append and flush:
// acquire (and acquire-release) take the lease before the write, whose
// lease id then is the new one.
func (h *handler) leaseActionBefore(x *rq, cond *blob.Cond) error {
	act := x.r.Header.Get("X-Ms-Lease-Action")
	switch act {
	case "":
		return nil
	}
	switch act {
	case "acquire", "acquire-release":
		d := -1
		if v := x.r.Header.Get("X-Ms-Lease-Duration"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || !lease.ValidDuration(n) {
				return azerr.InvalidHeader("x-ms-lease-duration", v)
			}
			d = n
		}
		id := x.r.Header.Get("X-Ms-Proposed-Lease-Id")
		if id == "" {
			return azerr.MissingHeader("x-ms-proposed-lease-id")
		}
		if _, _, err := h.svc.LeaseBlob(x.ctx(), x.ref(), blob.LeaseRequest{Action: lease.Action{Kind: lease.Acquire, ProposedID: id, Duration: d}}); err != nil {
			return err
		}
		cond.LeaseID = id
		x.w.Header().Set("X-Ms-Lease-Renewed", "true")
	case "auto-renew", "release":
		if cond.LeaseID == "" {
			return azerr.MissingHeader("x-ms-lease-id")
		}
		if act == "auto-renew" {
			if _, _, err := h.svc.LeaseBlob(x.ctx(), x.ref(), blob.LeaseRequest{Action: lease.Action{Kind: lease.Renew, LeaseID: cond.LeaseID}}); err != nil {
				return err
			}
			x.w.Header().Set("X-Ms-Lease-Renewed", "true")
		}
	default:
		return azerr.InvalidHeader("x-ms-lease-action", act)
	}
	return nil
}

// leaseActionAfter releases the lease after the write for release and
// acquire-release.
func (h *handler) leaseActionAfter(x *rq, cond blob.Cond) error {
	switch x.r.Header.Get("X-Ms-Lease-Action") {
	case "release", "acquire-release":
		_, _, err := h.svc.LeaseBlob(x.ctx(), x.ref(), blob.LeaseRequest{Action: lease.Action{Kind: lease.Release, LeaseID: cond.LeaseID}})
		return err
	}
	return nil
}

// setProperties is Path - Update (action=setProperties).
func (h *handler) setProperties(x *rq) error {
	if err := h.authorize(x, auth.ResObject, "w", false); err != nil {
		return err
	}
	v, setMeta := x.r.Header["X-Ms-Properties"]
	var meta []blob.KV
	var err error
	if setMeta {
		if meta, err = parseProperties(strings.Join(v, ",")); err != nil {
			return err
		}
	}
	props, any, err := x.props()
	if err != nil {
		return err
	}
	var pp *blob.Props
	if any {
		pp = &props
	}
	cond, err := x.cond("")
	if err != nil {
		return err
	}
	p, err := h.svc.SetPathProperties(x.ctx(), x.ref(), meta, setMeta, pp, cond)
	if err != nil {
		return err
	}
	setETag(x.w.Header(), p.Blob.ETag, p.Blob.Modified)
	x.w.WriteHeader(http.StatusOK)
	return nil
}

// setAccessControl is Path - Update (action=setAccessControl).
func (h *handler) setAccessControl(x *rq) error {
	if err := h.authorize(x, auth.ResObject, "w", false); err != nil {
		return err
	}
	owner, group, perms, acl, err := x.accessHeaders()
	if err != nil {
		return err
	}
	cond, err := x.cond("")
	if err != nil {
		return err
	}
	p, err := h.svc.SetAccessControl(x.ctx(), x.ref(), owner, group, perms, acl, cond)
	if err != nil {
		return err
	}
	setETag(x.w.Header(), p.Blob.ETag, p.Blob.Modified)
	x.w.Header().Set("X-Ms-Namespace-Enabled", "true")
	x.w.WriteHeader(http.StatusOK)
	return nil
}

// getProperties is Path - Get Properties (HEAD; action=getStatus or
// getAccessControl, or all properties).
func (h *handler) getProperties(x *rq) error {
	if err := h.authorize(x, auth.ResObject, "r", false); err != nil {
		return err
	}
	cond, err := x.cond("")
	if err != nil {
		return err
	}
	p, err := h.svc.GetPath(x.ctx(), x.ref(), cond)
	if err != nil {
		return err
	}
	name, err := h.principalNames(x, &p.ACL)
	if err != nil {
		return err
	}
	out := x.w.Header()
	res := "file"
	if p.Dir {
		res = "directory"
	}
	out.Set("X-Ms-Resource-Type", res)
	size := int64(0)
	if b := p.Blob; b != nil {
		setETag(out, b.ETag, b.Modified)
		size = b.Size
		if x.q.Get("action") == "" {
			out.Set("X-Ms-Properties", formatProperties(withoutFolder(b.Meta)))
			out.Set("X-Ms-Creation-Time", httpx.FormatHTTPTime(b.Created))
			if b.Props.ContentType != "" {
				out.Set("Content-Type", b.Props.ContentType)
			}
			if len(b.Props.ContentMD5) > 0 {
				out.Set("Content-MD5", base64.StdEncoding.EncodeToString(b.Props.ContentMD5))
			}
			if b.EncryptionContext != "" {
				out.Set("X-Ms-Encryption-Context", b.EncryptionContext)
			}
			out.Set("X-Ms-Lease-State", b.Lease.StateName(b.AsOf))
			out.Set("X-Ms-Lease-Status", b.Lease.Status(b.AsOf))
		}
	}
	setAccessHeaders(x, &p.ACL, name)
	out.Set("Content-Length", strconv.FormatInt(size, 10))
	x.w.WriteHeader(http.StatusOK)
	return nil
}

func withoutFolder(m []blob.KV) []blob.KV {
	out := make([]blob.KV, 0, len(m))
	for _, kv := range m {
		if !strings.EqualFold(kv[0], blob.FolderMeta) {
			out = append(out, kv)
		}
	}
	return out
}

// deletePath is Path - Delete.
func (h *handler) deletePath(x *rq) error {
	if err := h.authorize(x, auth.ResObject, "d", false); err != nil {
		return err
	}
	recursive, err := x.boolQuery("recursive", false)
	if err != nil {
		return err
	}
	cond, err := x.cond("")
	if err != nil {
		return err
	}
	cont, err := x.continuation()
	if err != nil {
		return err
	}
	next, id, err := h.svc.DeletePathKept(x.ctx(), x.ref(), recursive, cont, cond)
	if err != nil {
		return err
	}
	x.setContinuation(next)
	if id != "" {
		// Soft delete kept the path: the id Undelete Path takes.
		x.w.Header().Set("X-Ms-Deletion-Id", id)
	}
	x.w.Header().Set("Content-Length", "0")
	x.w.WriteHeader(http.StatusOK)
	return nil
}

// leasePath is Path - Lease (POST with x-ms-lease-action).
func (h *handler) leasePath(x *rq) error {
	if err := h.authorize(x, auth.ResObject, "w", false); err != nil {
		return err
	}
	hd := x.r.Header
	kind, ok := lease.ParseAction(hd.Get("X-Ms-Lease-Action"))
	if !ok {
		return azerr.InvalidHeader("x-ms-lease-action", hd.Get("X-Ms-Lease-Action"))
	}
	a := lease.Action{Kind: kind, LeaseID: hd.Get("X-Ms-Lease-Id"), ProposedID: hd.Get("X-Ms-Proposed-Lease-Id")}
	switch kind {
	case lease.Acquire:
		d, err := strconv.Atoi(hd.Get("X-Ms-Lease-Duration"))
		if err != nil || !lease.ValidDuration(d) {
			return azerr.InvalidHeader("x-ms-lease-duration", hd.Get("X-Ms-Lease-Duration"))
		}
		a.Duration = d
	case lease.Break:
		if v := hd.Get("X-Ms-Lease-Break-Period"); v != "" {
			p, err := strconv.Atoi(v)
			if err != nil || !lease.ValidBreakPeriod(p) {
				return azerr.InvalidHeader("x-ms-lease-break-period", v)
			}
			a.BreakPeriod = &p
		}
	}
	cond, err := x.cond("")
	if err != nil {
		return err
	}
	b, res, err := h.svc.LeaseBlob(x.ctx(), x.ref(), blob.LeaseRequest{Action: a, Cond: cond})
	if err != nil {
		return err
	}
	out := x.w.Header()
	setETag(out, b.ETag, b.Modified)
	switch kind {
	case lease.Acquire:
		out.Set("X-Ms-Lease-Id", res.LeaseID)
		x.w.WriteHeader(http.StatusCreated)
	case lease.Break:
		out.Set("X-Ms-Lease-Time", strconv.Itoa(res.LeaseTime))
		x.w.WriteHeader(http.StatusAccepted)
	case lease.Release:
		x.w.WriteHeader(http.StatusOK)
	default:
		out.Set("X-Ms-Lease-Id", res.LeaseID)
		x.w.WriteHeader(http.StatusOK)
	}
	return nil
}

// setAccessControlRecursive is Path - Update
// (action=setAccessControlRecursive): one batch of at most maxRecords
// paths, with the continuation of the next.
func (h *handler) setAccessControlRecursive(x *rq) error {
	if err := h.authorize(x, auth.ResObject, "w", false); err != nil {
		return err
	}
	mode := x.q.Get("mode")
	if mode != "set" && mode != "modify" && mode != "remove" {
		return azerr.InvalidQuery("mode", mode, "")
	}
	acl := x.r.Header.Get("X-Ms-Acl")
	if acl == "" {
		return azerr.MissingHeader("x-ms-acl")
	}
	max, err := x.intQuery("maxRecords", 2000, 2000)
	if err != nil {
		return err
	}
	cont, err := x.continuation()
	if err != nil {
		return err
	}
	force, err := x.boolQuery("forceFlag", false)
	if err != nil {
		return err
	}
	res, err := h.svc.SetAccessControlRecursive(x.ctx(), x.ref(), mode, acl, cont, max, force)
	if err != nil {
		return err
	}
	x.setContinuation(res.Next)
	type failed struct {
		ErrorMessage string `json:"errorMessage"`
		Name         string `json:"name"`
		Type         string `json:"type"`
	}
	entries := []failed{}
	for _, f := range res.Failed {
		typ := "FILE"
		if f.Dir {
			typ = "DIRECTORY"
		}
		entries = append(entries, failed{f.Message, f.Name, typ})
	}
	return writeJSON(x, map[string]any{
		"directoriesSuccessful": res.Directories,
		"filesSuccessful":       res.Files,
		"failureCount":          res.Failures,
		"failedEntries":         entries,
	})
}
