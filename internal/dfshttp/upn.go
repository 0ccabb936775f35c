package dfshttp

import (
	"context"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/blob"
)

// upn=true (List Paths, Get Properties) answers the object ids of users
// as their user principal names, as far as lazuli has learned them from
// the tokens it accepted (blob.LearnUPN); other ids, and ids it has not
// learned, are answered as stored.

// learnUPN records the user principal name of an OAuth caller's token.
// A failure to record it does not fail the request: the name is learned
// on a later one.
func (h *handler) learnUPN(ctx context.Context, acct string, id *auth.Identity) {
	if id == nil || id.Kind != auth.Bearer || id.Token == nil {
		return
	}
	if name := id.Token.PrincipalName(); name != "" {
		_ = h.svc.LearnUPN(ctx, acct, id.Token.ObjectID, name)
	}
}

// principalNames reads upn= and, when it is true, the names of the users
// among the owners, owning groups and named-user entries of acls; the
// function it returns maps an id to its name (or to itself).
func (h *handler) principalNames(x *rq, acls ...*blob.PathACL) (func(string) string, error) {
	same := func(id string) string { return id }
	upn, err := x.boolQuery("upn", false)
	if err != nil || !upn {
		return same, err
	}
	var ids []string
	for _, a := range acls {
		ids = append(ids, a.Owner, a.Group)
		if x.q.Get("action") != "getAccessControl" {
			continue // no x-ms-acl in the answer
		}
		for _, e := range strings.Split(a.AccessControl(), ",") {
			if id, ok := userEntry(e); ok {
				ids = append(ids, id)
			}
		}
	}
	names, err := h.svc.UPNs(x.ctx(), x.info.Account, ids)
	if err != nil || len(names) == 0 {
		return same, err
	}
	return func(id string) string {
		if n, ok := names[id]; ok {
			return n
		}
		return id
	}, nil
}

// userEntry returns the id of a named-user ACL entry
// ([default:]user:id:perms).
func userEntry(e string) (string, bool) {
	e = strings.TrimPrefix(e, "default:")
	rest, ok := strings.CutPrefix(e, "user:")
	if !ok {
		return "", false
	}
	id, _, ok := strings.Cut(rest, ":")
	return id, ok && id != ""
}

// translateACL is acl with the ids of its named-user entries mapped by
// name; group entries keep their ids, as Azure translates no group.
func translateACL(acl string, name func(string) string) string {
	es := strings.Split(acl, ",")
	for i, e := range es {
		if id, ok := userEntry(e); ok {
			at := strings.Index(e, "user:") + len("user:")
			es[i] = e[:at] + name(id) + e[at+len(id):]
		}
	}
	return strings.Join(es, ",")
}

// setAccessHeaders sets x-ms-owner, x-ms-group, x-ms-permissions and, for
// getAccessControl, x-ms-acl, with user ids mapped by name.
func setAccessHeaders(x *rq, a *blob.PathACL, name func(string) string) {
	out := x.w.Header()
	out.Set("X-Ms-Owner", name(a.Owner))
	out.Set("X-Ms-Group", name(a.Group))
	out.Set("X-Ms-Permissions", permissions(a))
	if x.q.Get("action") == "getAccessControl" {
		out.Set("X-Ms-Acl", translateACL(a.AccessControl(), name))
	}
}
