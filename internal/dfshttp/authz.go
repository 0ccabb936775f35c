package dfshttp

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// checkBlobRequest applies the POSIX ACLs to a Blob API request on a
// path of an HNS account, as Azure does on both endpoints: reads need
// read on the file, writes write, creating and deleting write and execute
// on the parent (and the sticky bit rule), each with execute on every
// ancestor; List Blobs needs read and execute on the directory its prefix
// names. It is checked in a snapshot just before the operation, not in
// its transaction. Other service and container requests are left to the
// Blob handler.
func (h *handler) checkBlobRequest(r *http.Request, info *httpx.Info, fs, name string) error {
	q := r.URL.Query()
	if name == "" && r.Method == http.MethodGet && q.Get("restype") == "container" && q.Get("comp") == "list" {
		// List Blobs lists the directory its prefix names.
		c, err := url.PathUnescape(fs)
		if err != nil {
			return azerr.New(azerr.InvalidUri)
		}
		dir := q.Get("prefix")
		if i := strings.LastIndexByte(dir, '/'); i >= 0 {
			dir = dir[:i]
		} else {
			dir = ""
		}
		return h.svc.CheckPathAccess(r.Context(), blob.Ref{Account: info.Account, Container: c, Name: dir}, blob.OpRead)
	}
	if name == "" || q.Has("restype") {
		return nil
	}
	var op blob.PathOp
	switch comp := q.Get("comp"); r.Method {
	case http.MethodGet:
		op = blob.OpRead
	case http.MethodHead:
		op = blob.OpStat
	case http.MethodDelete:
		op = blob.OpDelete
	case http.MethodPut:
		switch comp {
		case "", "block", "blocklist":
			op = blob.OpCreate
		default:
			op = blob.OpWrite
		}
	default:
		return nil
	}
	c, err1 := url.PathUnescape(fs)
	n, err2 := url.PathUnescape(name)
	if err1 != nil || err2 != nil {
		// A name that does not unescape names no path to check: refuse it
		// rather than let it past the ACLs.
		return azerr.New(azerr.InvalidUri)
	}
	n = strings.ReplaceAll(n, `\`, "/")
	return h.svc.CheckPathAccess(r.Context(), blob.Ref{Account: info.Account, Container: c, Name: n}, op)
}

// getRootProperties is Path - Get Properties of a filesystem's root
// directory (HEAD /{filesystem}/ with action=getAccessControl or
// getStatus).
func (h *handler) getRootProperties(x *rq) error {
	if err := h.authorize(x, auth.ResContainer, "r", false); err != nil {
		return err
	}
	a, err := h.svc.GetRootAccess(x.ctx(), x.info.Account, x.fs)
	if err != nil {
		return err
	}
	out := x.w.Header()
	out.Set("X-Ms-Resource-Type", "directory")
	out.Set("X-Ms-Owner", a.Owner)
	out.Set("X-Ms-Group", a.Group)
	out.Set("X-Ms-Permissions", permissions(&a))
	if x.q.Get("action") == "getAccessControl" {
		out.Set("X-Ms-Acl", a.AccessControl())
	}
	out.Set("Content-Length", "0")
	x.w.WriteHeader(http.StatusOK)
	return nil
}

// setRootAccessControl is Path - Update (setAccessControl) of a
// filesystem's root directory.
func (h *handler) setRootAccessControl(x *rq) error {
	if err := h.authorize(x, auth.ResContainer, "w", false); err != nil {
		return err
	}
	owner, group, perms, acl, err := x.accessHeaders()
	if err != nil {
		return err
	}
	if _, err := h.svc.SetRootAccessControl(x.ctx(), x.info.Account, x.fs, owner, group, perms, acl); err != nil {
		return err
	}
	x.w.Header().Set("X-Ms-Namespace-Enabled", "true")
	x.w.Header().Set("Content-Length", "0")
	x.w.WriteHeader(http.StatusOK)
	return nil
}

// accessHeaders reads the headers of Set Access Control: owner, group,
// and permissions or an ACL (not both).
func (x *rq) accessHeaders() (owner, group, perms, acl string, err error) {
	hd := x.r.Header
	perms, acl = hd.Get("X-Ms-Permissions"), hd.Get("X-Ms-Acl")
	if perms != "" && acl != "" {
		return "", "", "", "", errBothPermsAndACL()
	}
	if perms != "" {
		if perms, err = blob.ParsePermissions(perms); err != nil {
			return "", "", "", "", err
		}
	}
	return hd.Get("X-Ms-Owner"), hd.Get("X-Ms-Group"), perms, acl, nil
}

// errBothPermsAndACL is Set Access Control with both x-ms-permissions and
// x-ms-acl.
func errBothPermsAndACL() error {
	return azerr.New(azerr.InvalidPermission).WithStatus(http.StatusBadRequest)
}
