package dfshttp

import (
	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/blob"
)

// principal is an Entra ID principal with the data role a token named
// (auth.DataRole). A token without a role is a principal whose every
// decision the ACLs make; one naming Storage Blob Data Owner is the
// superuser, as that role makes a principal on Azure.
func principal(oid string, groups []string, role string) *blob.Caller {
	c := &blob.Caller{OID: oid, Groups: groups}
	switch role {
	case "owner":
		c.Superuser = true
	case "contributor":
		c.Role = blob.Contributor
	case "reader":
		c.Role = blob.Reader
	}
	return c
}

// caller is the principal the namespace checks POSIX ACLs against: an
// OAuth caller (the token's oid and groups, its data role), or a user
// delegation SAS, which may do what the owner of its key (skoid, with the
// role it held when it asked for the key) may, and then as suoid, the
// principal the key owner did not vouch for, checked against the ACLs
// too, or as saoid, vouched for (not checked, but the owner of what it
// creates). nil for Shared Key, account and service SAS callers, which
// Azure treats as the superuser. A user delegation SAS's key role is
// known once its signature is verified.
func caller(id *auth.Identity) *blob.Caller {
	if id == nil {
		return nil
	}
	switch {
	case id.Kind == auth.Bearer && id.Token != nil:
		return principal(id.Token.ObjectID, id.Token.Groups, auth.DataRole(id.Token.Roles))
	case id.Kind == auth.ServiceSAS && id.SAS != nil && id.SAS.Values != nil && id.SAS.Values.UserDelegation:
		v := id.SAS.Values
		owner := principal(v.KeyOID, nil, v.KeyRole)
		switch {
		case v.UnauthorizedOID != "":
			return &blob.Caller{OID: v.UnauthorizedOID, Delegator: owner}
		case v.AuthorizedOID != "":
			return &blob.Caller{OID: v.AuthorizedOID, Superuser: true, Delegator: owner}
		}
		return owner
	}
	return nil
}

// callerOID is the object id that owns the paths the caller creates; ""
// for callers whose paths the superuser owns.
func callerOID(x *rq) string {
	if c := caller(x.info.Identity); c != nil {
		return c.OID
	}
	return ""
}
