package smb

// endSession removes session s from its connection and closes its opens
// (pending CHANGE_NOTIFYs answer STATUS_NOTIFY_CLEANUP); later requests
// on it answer STATUS_USER_SESSION_DELETED.
func (c *conn) endSession(s *session) {
	if c.dropSession(s) {
		c.closeSession(s)
	}
}

// endPrevious ends the session a new logon names as its previous one
// (PreviousSessionId, MS-SMB2 3.3.5.5.3), on whichever connection of the
// server holds it, when the same account owns it: the client reconnected
// and the old session's opens are released.
func (c *conn) endPrevious(prev uint64, cur *session) {
	if prev == 0 || prev == cur.id {
		return
	}
	c.s.mu.Lock()
	conns := make([]*conn, 0, len(c.s.conns))
	for o := range c.s.conns {
		conns = append(conns, o)
	}
	c.s.mu.Unlock()
	for _, o := range conns {
		o.mu.Lock()
		old := o.sessions[prev]
		ok := old != nil && old.valid.Load() && old.account == cur.account
		o.mu.Unlock()
		if ok {
			o.endSession(old)
			return
		}
	}
}
