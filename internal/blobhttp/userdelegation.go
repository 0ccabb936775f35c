package blobhttp

import "net/http"

// getUserDelegationKey is Get User Delegation Key (POST
// ?restype=service&comp=userdelegationkey): a key for the Blob service,
// issued by the authenticator (auth.IssueUserDelegationKey).
func (h *handler) getUserDelegationKey(rq *req) error {
	out, err := h.d.Auth.IssueUserDelegationKey(rq.info.Identity, rq.info.Account, rq.info.Version, "b",
		func() ([]byte, error) { return readBody(rq, 64<<10) })
	if err != nil {
		return err
	}
	return writeXML(rq, http.StatusOK, out)
}
