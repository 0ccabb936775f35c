package smb

import (
	"context"
	"time"
)

// reqTimeout bounds a request's calls into the Backend.
const reqTimeout = time_30s

// reqSlack is how much earlier than reqTimeout a request's deadline may
// fall: requests that start within reqSlack of each other share one
// context, whose deadline is reqTimeout after the first of them started.
const reqSlack = time.Second

// deadlineCtx is a context of the connection with a deadline, shared by
// the requests that start within reqSlack.
type deadlineCtx struct {
	ctx      context.Context
	deadline time.Time
}

// reqCtx returns the context of a request's Backend calls: the
// connection's, ending at the latest reqTimeout from now and at the
// earliest reqTimeout-reqSlack from now. A context (and the timer behind
// it) per request was a twentieth of the server's CPU time when smbclient
// put 1,000 small files (context.WithDeadline and its cancel in a CPU
// profile, for a CREATE, a WRITE and a CLOSE each); a shared one costs a
// timer a second. The cancel function returned does nothing: the shared
// context ends by its deadline or with the connection.
func (c *conn) reqCtx() (context.Context, context.CancelFunc) {
	now := time.Now()
	if d := c.reqDeadline.Load(); d != nil && d.deadline.Sub(now) >= reqTimeout-reqSlack {
		return d.ctx, func() {}
	}
	deadline := now.Add(reqTimeout)
	ctx, cancel := context.WithDeadline(c.ctx, deadline)
	_ = cancel // the deadline or the connection's end releases it
	c.reqDeadline.Store(&deadlineCtx{ctx: ctx, deadline: deadline})
	return ctx, func() {}
}
