package smb

import (
	"github.com/lazuli-storage/lazuli/internal/smb/ntlm"
	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// reauthenticated completes the re-authentication of an established
// session (MS-SMB2 3.3.5.5.3). The account that logged on may
// re-authenticate, and so may the anonymous user, as Windows lets a
// session do: the session keeps its keys, its tree connects and its
// opens, which keep the access they were granted, but while anonymous it
// acts for no account, so the share's authorization lets it open, create
// or rename nothing new (Azure Files admits no anonymous access to a
// share). Re-authenticating as the account gives the session back its
// rights. Another account is refused.
func (c *conn) reauthenticated(r *request, s *session, auth *ntlm.Auth, account string, token []byte) *response {
	switch {
	case auth.Anonymous:
		s.anonymous.Store(true)
	case account == s.account:
		s.anonymous.Store(false)
	default:
		return c.errorResponse(r, statusLogonFailure)
	}
	return c.ok(r, wire.AppendSessionSetupResponse(nil, 0, token))
}

// mayAccessShare reports whether the session acts for its account now:
// not while it is re-authenticated as the anonymous user.
func (s *session) mayAccessShare() bool { return !s.anonymous.Load() }
