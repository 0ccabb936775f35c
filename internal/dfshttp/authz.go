package dfshttp

import (
	"net/http"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
)

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
	name, err := h.principalNames(x, &a)
	if err != nil {
		return err
	}
	out := x.w.Header()
	out.Set("X-Ms-Resource-Type", "directory")
	setAccessHeaders(x, &a, name)
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
