package smb

import (
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// Oplock levels of CREATE (MS-SMB2 2.2.13).
const (
	OplockNone      uint8 = 0x00
	OplockLevelII   uint8 = 0x01
	OplockExclusive uint8 = 0x08
	OplockBatch     uint8 = 0x09
	OplockLease     uint8 = 0xFF
)

// Lease states (MS-SMB2 2.2.13.2.8); oplocks are carried as the same
// states: level II is read, exclusive read-write, batch read-write-handle.
const (
	LeaseRead   uint32 = 0x01
	LeaseHandle uint32 = 0x02
	LeaseWrite  uint32 = 0x04
)

const (
	statusInvalidOplockProtocol uint32 = 0xC00000E3
	leaseFlagBreakInProgress    uint32 = 0x02
	leaseFlagParentKeySet       uint32 = 0x04
	leaseBreakAckRequired       uint32 = 0x01
)

// CacheRequest is the oplock or lease a CREATE asks for.
type CacheRequest struct {
	// Oplock is set for an oplock (State from its level), otherwise a
	// lease of client ClientGUID under Key.
	Oplock     bool
	ClientGUID [16]byte
	Key        [16]byte
	ParentKey  [16]byte
	V2         bool
	State      uint32
	Epoch      uint16
	// Directory allows a lease on a directory: the connection
	// negotiated directory leasing (dirLeasing).
	Directory bool
}

// Cache is an oplock or lease as granted or broken.
type Cache struct {
	Oplock bool
	Key    [16]byte
	// Version is the lease's (1 or 2), set by the open that created it:
	// every later open of the lease is answered in its form.
	Version  uint8
	State    uint32
	Epoch    uint16
	Breaking bool
}

// Break asks the server to send a break of a cache to its client.
type Break struct {
	Cache
	From, To    uint32
	AckRequired bool
}

// Cacher is a Handle whose Backend grants oplocks and leases.
type Cacher interface {
	// Cache is what the open was granted (zero State for nothing).
	Cache() Cache
	// AckBreak acknowledges a break of the open's oplock or lease to
	// state; ErrNoBreak when none is under way, ErrBadAck when state
	// is above the break's.
	AckBreak(ctx context.Context, state uint32) (Cache, error)
}

// Errors of Cacher.AckBreak.
var (
	ErrNoBreak = errors.New("smb: no break under way")
	ErrBadAck  = errors.New("smb: acknowledged state above the break")
)

// countBreak counts a break sent (Stats).
func (s *Server) countBreak() { s.breaks.Add(1) }

// oplockState maps an oplock level to its cache state.
func oplockState(level uint8) uint32 {
	switch level {
	case OplockLevelII:
		return LeaseRead
	case OplockExclusive:
		return LeaseRead | LeaseWrite
	case OplockBatch:
		return LeaseRead | LeaseWrite | LeaseHandle
	}
	return 0
}

// oplockLevel maps a cache state back to an oplock level.
func oplockLevel(state uint32) uint8 {
	switch {
	case state&LeaseWrite != 0 && state&LeaseHandle != 0:
		return OplockBatch
	case state&LeaseWrite != 0:
		return OplockExclusive
	case state&LeaseRead != 0:
		return OplockLevelII
	}
	return OplockNone
}

// cacheRequest reads what a CREATE asks to cache: the RqLs context (a
// lease, v2 from SMB 3 on when 52 bytes long) with oplock level LEASE,
// else the oplock level.
func (c *conn) cacheRequest(req *wire.CreateRequest) *CacheRequest {
	if req.OplockLevel == OplockLease {
		if c.dialect < 0x0210 {
			return nil
		}
		for _, cc := range req.Contexts {
			if cc.Name != "RqLs" {
				continue
			}
			d := cc.Data
			if len(d) < 32 {
				return nil
			}
			cr := &CacheRequest{ClientGUID: c.clientGUID, State: le.Uint32(d[16:]), Directory: c.dirLeasing()}
			copy(cr.Key[:], d[:16])
			if len(d) >= 52 && c.dialect >= 0x0300 {
				cr.V2 = true
				if le.Uint32(d[20:])&leaseFlagParentKeySet != 0 {
					copy(cr.ParentKey[:], d[32:48])
				}
				cr.Epoch = le.Uint16(d[48:])
			}
			return cr
		}
		return nil
	}
	if st := oplockState(req.OplockLevel); st != 0 {
		return &CacheRequest{Oplock: true, State: st}
	}
	return nil
}

// dirLeasing reports whether the connection's client may lease
// directories, as on Azure Files: SMB 3 clients that offer directory
// leasing themselves are offered it (a client that does not, such as
// impacket, is not told of a capability it does not expect).
func (c *conn) dirLeasing() bool {
	return c.dialect >= wire.Dialect300 && c.clientCaps&wire.CapDirectoryLeasing != 0
}

// grantContext returns the oplock level of the CREATE response and, for
// a lease, its RqLs response context.
func grantContext(cr *CacheRequest, g Cache) (uint8, *wire.CreateContext) {
	if cr == nil {
		return OplockNone, nil
	}
	if cr.Oplock {
		return oplockLevel(g.State), nil
	}
	var flags uint32
	if g.Breaking {
		flags |= leaseFlagBreakInProgress
	}
	d := make([]byte, 0, 52)
	d = append(d, cr.Key[:]...)
	v2 := cr.V2
	if g.Version != 0 {
		v2 = g.Version == 2
	}
	if v2 {
		if cr.V2 && cr.ParentKey != ([16]byte{}) {
			flags |= leaseFlagParentKeySet
		}
		d = le.AppendUint32(d, g.State)
		d = le.AppendUint32(d, flags)
		d = le.AppendUint64(d, 0)
		d = append(d, cr.ParentKey[:]...)
		d = le.AppendUint16(d, g.Epoch)
		d = le.AppendUint16(d, 0)
	} else {
		d = le.AppendUint32(d, g.State)
		d = le.AppendUint32(d, flags)
		d = le.AppendUint64(d, 0)
	}
	return OplockLease, &wire.CreateContext{Name: "RqLs", Data: d}
}

// sendBreak sends a break notification for o's oplock or lease
// (MS-SMB2 2.2.23): unsolicited, message id all ones, no session.
func (c *conn) sendBreak(o *open, b Break) {
	var body []byte
	if b.Oplock {
		body = le.AppendUint16(body, 24)
		body = append(body, oplockLevel(b.To), 0)
		body = le.AppendUint32(body, 0)
		id := o.fileID()
		body = le.AppendUint64(body, id.Persistent)
		body = le.AppendUint64(body, id.Volatile)
	} else {
		body = le.AppendUint16(body, 44)
		body = le.AppendUint16(body, b.Epoch)
		var flags uint32
		if b.AckRequired {
			flags = leaseBreakAckRequired
		}
		body = le.AppendUint32(body, flags)
		body = append(body, b.Key[:]...)
		body = le.AppendUint32(body, b.From)
		body = le.AppendUint32(body, b.To)
		body = append(body, make([]byte, 12)...)
	}
	resp := &response{hdr: wire.Header{Command: wire.OplockBreak, Flags: wire.FlagServerToRedir,
		MessageID: ^uint64(0)}, body: body}
	c.s.countBreak()
	if err := c.send([]*response{resp}, nil); err != nil {
		c.nc.Close()
	}
}

// oplockBreak handles OPLOCK_BREAK: the acknowledgement of an oplock
// break (24 bytes) or of a lease break (36 bytes).
func (c *conn) oplockBreak(r *request) *response {
	m := r.msg[wire.HeaderSize:]
	if len(m) < 24 {
		return c.errorResponse(r, statusInvalidParameter)
	}
	ctx, cancel := c.reqCtx()
	defer cancel()
	switch le.Uint16(m) {
	case 24:
		level := m[2]
		id := wire.FileID{Persistent: le.Uint64(m[8:]), Volatile: le.Uint64(m[16:])}
		o := c.lookupOpen(r, id)
		if o == nil {
			return c.errorResponse(r, statusFileClosed)
		}
		ch, ok := o.h.(Cacher)
		if o.h == nil || !ok || level != OplockLevelII && level != OplockNone {
			return c.errorResponse(r, statusInvalidOplockProtocol)
		}
		g, err := ch.AckBreak(ctx, oplockState(level))
		if errors.Is(err, ErrNoBreak) || errors.Is(err, ErrBadAck) {
			// MS-SMB2 3.3.5.22.1.
			return c.errorResponse(r, statusInvalidOplockProtocol)
		}
		if err != nil {
			return c.errorResponse(r, statusOf(err))
		}
		out := le.AppendUint16(nil, 24)
		out = append(out, oplockLevel(g.State), 0)
		out = le.AppendUint32(out, 0)
		out = le.AppendUint64(out, id.Persistent)
		out = le.AppendUint64(out, id.Volatile)
		return c.ok(r, out)
	case 36:
		if len(m) < 36 {
			return c.errorResponse(r, statusInvalidParameter)
		}
		var key [16]byte
		copy(key[:], m[8:24])
		state := le.Uint32(m[24:])
		o := c.leaseOpen(key)
		if o == nil {
			return c.errorResponse(r, statusObjectNameNotFound)
		}
		if _, err := o.h.(Cacher).AckBreak(ctx, state); err != nil {
			return c.errorResponse(r, ackStatus(err))
		}
		// The acknowledged state is answered, also when read caching
		// alone is then broken further at once (MS-SMB2 3.3.5.22.2).
		out := le.AppendUint16(nil, 36)
		out = le.AppendUint16(out, 0)
		out = le.AppendUint32(out, 0)
		out = append(out, key[:]...)
		out = le.AppendUint32(out, state)
		out = le.AppendUint64(out, 0)
		return c.ok(r, out)
	}
	return c.errorResponse(r, statusInvalidParameter)
}

// ackStatus is the status of a failed lease break acknowledgement
// (MS-SMB2 3.3.5.22.2).
func ackStatus(err error) uint32 {
	switch {
	case errors.Is(err, ErrNoBreak):
		return statusUnsuccessful
	case errors.Is(err, ErrBadAck):
		return statusRequestNotAccepted
	}
	return statusOf(err)
}

// clientConns returns the server's connections of c's client (its
// client GUID), oldest first: a lease belongs to the client, not to one
// of its connections.
func (c *conn) clientConns() []*conn {
	type seen struct {
		c   *conn
		seq uint64
	}
	var out []seen
	c.s.mu.Lock()
	for o, seq := range c.s.conns {
		if o == c || c.clientGUID != ([16]byte{}) && o.dialect >= 0x0210 && o.clientGUID == c.clientGUID {
			out = append(out, seen{o, seq})
		}
	}
	c.s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	conns := make([]*conn, len(out))
	for i, o := range out {
		conns[i] = o.c
	}
	return conns
}

// leaseOpen finds an open holding the lease key of this connection's
// client, on any of its connections (a break may be acknowledged on
// another channel than the one it came on).
func (c *conn) leaseOpen(key [16]byte) *open {
	for _, cc := range c.clientConns() {
		if o := cc.leaseOpenHere(key); o != nil {
			return o
		}
	}
	return nil
}

// leaseOpenHere finds an open of this connection holding the lease key.
func (c *conn) leaseOpenHere(key [16]byte) *open {
	for _, s := range c.sessionList() {
		s.mu.Lock()
		for _, o := range s.opens {
			if o.lease != nil && *o.lease == key {
				if _, ok := o.h.(Cacher); ok {
					s.mu.Unlock()
					return o
				}
			}
		}
		s.mu.Unlock()
	}
	return nil
}

// fileID returns the open's id once CREATE set it.
func (o *open) fileID() wire.FileID {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.id
}

// leases counts the opens holding an oplock or lease.
func (o *open) caching() bool {
	ch, ok := o.h.(Cacher)
	return ok && ch.Cache().State != 0
}

// createAsync runs CREATE, answering STATUS_PENDING and finishing it
// asynchronously once it waits for other clients' cache breaks: their
// acknowledgements may come on this very connection.
func (c *conn) createAsync(r *request) *response {
	if r.tree.ipc {
		return c.create(c.ctx, r, nil)
	}
	return c.runAsync(r, func(ctx context.Context, waiting func()) *response { return c.create(ctx, r, waiting) })
}

// runAsync runs run, the handling of r, answering STATUS_PENDING and
// finishing it asynchronously once run calls the waiting function it is
// given (it waits for other clients' acknowledgements of cache breaks,
// which may come on this very connection). A request within a compound
// waits in place.
func (c *conn) runAsync(r *request, run func(ctx context.Context, waiting func()) *response) *response {
	if r.hdr.NextCommand != 0 || r.hdr.Flags&wire.FlagRelated != 0 {
		return run(c.ctx, nil)
	}
	// CANCEL of the pending request ends its wait for breaks: the
	// operation, which changed nothing while it waited, answers
	// STATUS_CANCELLED.
	ctx, cancelRun := context.WithCancel(c.ctx)
	waiting := make(chan struct{})
	var once sync.Once
	done := make(chan *response, 1)
	c.work.Add(1)
	c.s.workers.run(func() {
		defer c.work.Done()
		done <- run(ctx, func() { once.Do(func() { close(waiting) }) })
	})
	select {
	case resp := <-done:
		cancelRun()
		return resp
	case <-waiting:
	}
	op, _, interim := c.goAsync(r)
	if op == nil {
		defer cancelRun()
		return <-done
	}
	c.mu.Lock()
	cancelOp := op.cancel
	op.cancel = func() { cancelOp(); cancelRun() }
	c.mu.Unlock()
	c.work.Add(1)
	go func() {
		defer c.work.Done()
		resp := <-done
		c.finishAsync(op, resp.hdr.Status, resp.body)
	}()
	return interim
}

// waitingKey carries, in a Backend call's context, the function to call
// when the call starts waiting for cache breaks (see Waiting).
type waitingKey struct{}

// Waiting returns the function a Backend calls when an operation under ctx
// (a rename or delete disposition) starts waiting for other clients to
// acknowledge cache breaks: the request then goes asynchronous. Nil when
// the request waits in place.
func Waiting(ctx context.Context) func() {
	fn, _ := ctx.Value(waitingKey{}).(func())
	return fn
}

func withWaiting(ctx context.Context, fn func()) context.Context {
	if fn == nil {
		return ctx
	}
	return context.WithValue(ctx, waitingKey{}, fn)
}
