package dfshttp

import (
	"strings"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/blob"
)

// Azure data role names a token's roles claim may carry. Entra ID tokens
// do not carry Azure role assignments, which lazuli cannot look up, so a
// token without them is a principal without a role: the ACLs alone
// decide. A token naming Storage Blob Data Owner is the superuser, as
// that role makes a principal on Azure.
const (
	roleOwner       = "storage blob data owner"
	roleContributor = "storage blob data contributor"
	roleReader      = "storage blob data reader"
)

// caller is the principal the namespace checks POSIX ACLs against: an
// OAuth caller (the token's oid and groups, its data role), or a user
// delegation SAS naming suoid (checked as that oid) or saoid (trusted by
// the key's owner: not checked, but it owns what it creates). nil for
// Shared Key, account and service SAS callers and a user delegation SAS
// without either id, which Azure treats as the superuser.
func caller(id *auth.Identity) *blob.Caller {
	if id == nil {
		return nil
	}
	switch {
	case id.Kind == auth.Bearer && id.Token != nil:
		c := &blob.Caller{OID: id.Token.ObjectID, Groups: id.Token.Groups}
		for _, r := range id.Token.Roles {
			switch strings.ToLower(r) {
			case roleOwner:
				c.Superuser = true
			case roleContributor:
				c.Role = blob.Contributor
			case roleReader:
				if c.Role == blob.NoRole {
					c.Role = blob.Reader
				}
			}
		}
		return c
	case id.Kind == auth.ServiceSAS && id.SAS != nil && id.SAS.Values != nil && id.SAS.Values.UserDelegation:
		v := id.SAS.Values
		if v.UnauthorizedOID != "" {
			return &blob.Caller{OID: v.UnauthorizedOID}
		}
		if v.AuthorizedOID != "" {
			return &blob.Caller{OID: v.AuthorizedOID, Superuser: true}
		}
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
