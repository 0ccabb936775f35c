package dfshttp

import "github.com/lazuli-storage/lazuli/internal/auth"

// callerOID is the object id of an OAuth caller, which owns the paths it
// creates; "" for Shared Key and SAS callers, whose paths the superuser
// owns.
func callerOID(x *rq) string {
	id := x.info.Identity
	if id == nil || id.Kind != auth.Bearer || id.Token == nil {
		return ""
	}
	return id.Token.ObjectID
}
