package smb

import (
	"strings"
	"sync"
	"time"

	"github.com/lazuli-storage/lazuli/internal/smb/wire"
)

// Durable handles (MS-SMB2 3.3.5.9.6, 3.3.5.9.10 and on): an open granted
// a batch oplock or a lease with handle caching may ask to be durable. When
// its connection is lost it is kept, with its share access, locks and
// cache in the Backend (List Handles shows it), for the durable timeout;
// a reconnect (DHnC, DH2C) of the same user within it takes it back, and
// Force Close Handles ends it meanwhile.

// defaultDurableTimeout is how long a v1 durable open, or a v2 one that
// asked for no timeout, outlives its connection (Windows: 60 s).
const defaultDurableTimeout = 60 * time.Second

// maxDurableTimeout bounds the timeout a v2 open may ask for.
const maxDurableTimeout = 300 * time.Second

// durable is what makes an open durable.
type durable struct {
	v2 bool
	// resilient is set for an open made resilient (resilient.go) rather
	// than durable at create.
	resilient  bool
	createGUID [16]byte
	clientGUID [16]byte
	account    string
	timeout    time.Duration
	// appInstance is the SMB2_CREATE_APP_INSTANCE_ID of the open (zero
	// for none).
	appInstance [16]byte
}

// appInstanceContext is the name of SMB2_CREATE_APP_INSTANCE_ID (MS-SMB2
// 2.2.13.2.13), a GUID in its wire form.
const appInstanceContext = "\x45\xbc\xa6\x6a\xef\xa7\xf7\x4a\x90\x08\xfa\x46\x2e\x14\x4d\x74"

// appInstanceID reads the application instance a CREATE names.
func appInstanceID(req *wire.CreateRequest) ([16]byte, bool) {
	var id [16]byte
	for _, cc := range req.Contexts {
		if cc.Name == appInstanceContext && len(cc.Data) >= 20 {
			copy(id[:], cc.Data[4:20])
			return id, id != [16]byte{}
		}
	}
	return id, false
}

// closeAppInstance closes the durable opens of the file path of share
// that account's application instance id holds, connected or waiting
// for their client, before a new open of that instance (MS-SMB2
// 3.3.5.9.13): the application moved to another client, which takes
// over the file without a break.
func (c *conn) closeAppInstance(id [16]byte, account, share, path string) {
	same := func(o *open) bool {
		d := o.durableState()
		return d != nil && d.appInstance == id && o.tree != nil && o.tree.share == share && strings.EqualFold(o.path, path)
	}
	c.s.mu.Lock()
	conns := make([]*conn, 0, len(c.s.conns))
	for o := range c.s.conns {
		conns = append(conns, o)
	}
	c.s.mu.Unlock()
	var gone []*open
	for _, cc := range conns {
		cc.mu.Lock()
		sessions := make([]*session, 0, len(cc.sessions))
		for _, s := range cc.sessions {
			if s.valid.Load() && s.account == account {
				sessions = append(sessions, s)
			}
		}
		cc.mu.Unlock()
		for _, s := range sessions {
			s.mu.Lock()
			for k, o := range s.opens {
				if same(o) {
					delete(s.opens, k)
					gone = append(gone, o)
				}
			}
			s.mu.Unlock()
		}
	}
	c.s.parked.mu.Lock()
	for k, p := range c.s.parked.opens {
		if same(p.o) && p.o.durable.account == account && p.timer.Stop() {
			delete(c.s.parked.opens, k)
			gone = append(gone, p.o)
		}
	}
	c.s.parked.mu.Unlock()
	for _, o := range gone {
		o.close()
	}
}

// parked holds the durable opens of lost connections.
type parked struct {
	mu    sync.Mutex
	opens map[uint64]*parkedOpen // by persistent file id
}

type parkedOpen struct {
	o     *open
	timer *time.Timer
}

// durableRequest reads DHnQ or DH2Q; reconnect the DHnC or DH2C file id
// and create GUID (a reconnect ignores a request beside it).
func durableRequest(req *wire.CreateRequest) (q *durable, reconnect *wire.FileID, guid [16]byte, v2 bool, bad bool) {
	for _, cc := range req.Contexts {
		d := cc.Data
		switch cc.Name {
		case "DHnQ":
			if len(d) < 16 {
				return nil, nil, guid, false, true
			}
			q = &durable{timeout: defaultDurableTimeout}
		case "DH2Q":
			if len(d) < 32 {
				return nil, nil, guid, false, true
			}
			q = &durable{v2: true, timeout: time.Duration(le.Uint32(d)) * time.Millisecond}
			copy(q.createGUID[:], d[16:32])
			if q.timeout == 0 {
				q.timeout = defaultDurableTimeout
			}
			q.timeout = min(q.timeout, maxDurableTimeout)
		case "DHnC":
			if len(d) < 16 {
				return nil, nil, guid, false, true
			}
			reconnect = &wire.FileID{Persistent: le.Uint64(d), Volatile: le.Uint64(d[8:])}
		case "DH2C":
			if len(d) < 36 {
				return nil, nil, guid, false, true
			}
			reconnect = &wire.FileID{Persistent: le.Uint64(d), Volatile: le.Uint64(d[8:])}
			copy(guid[:], d[16:32])
			v2 = true
		}
	}
	// Durable contexts of v1 and v2 do not mix (MS-SMB2 3.3.5.9.10).
	var v1, v2s bool
	for _, cc := range req.Contexts {
		switch cc.Name {
		case "DHnQ", "DHnC":
			v1 = true
		case "DH2Q", "DH2C":
			v2s = true
		}
	}
	if v1 && v2s {
		return nil, nil, guid, false, true
	}
	if v2 && q != nil {
		// A v2 reconnect beside a v2 request (MS-SMB2 3.3.5.9.12).
		return nil, nil, guid, false, true
	}
	return q, reconnect, guid, v2, false
}

// grantDurable makes o durable when it asked and holds a batch oplock or
// a lease with handle caching, and returns the response context.
func (c *conn) grantDurable(o *open, q *durable, cr *CacheRequest, g Cache) *wire.CreateContext {
	if q == nil || cr == nil || o.h == nil || o.isDir {
		return nil
	}
	if cr.Oplock && g.State != LeaseRead|LeaseWrite|LeaseHandle || !cr.Oplock && g.State&LeaseHandle == 0 {
		return nil
	}
	q.clientGUID = c.clientGUID
	o.durable = q
	if !q.v2 {
		return &wire.CreateContext{Name: "DHnQ", Data: make([]byte, 8)}
	}
	// Persistent handles need a continuously available share, which
	// Azure Files' standard shares are not: the flag is not granted.
	d := le.AppendUint32(nil, uint32(q.timeout/time.Millisecond))
	d = le.AppendUint32(d, 0)
	return &wire.CreateContext{Name: "DH2Q", Data: d}
}

// park keeps o for its durable timeout after its connection was lost.
func (s *Server) park(o *open) {
	s.parked.mu.Lock()
	defer s.parked.mu.Unlock()
	if s.parked.opens == nil {
		s.parked.opens = map[uint64]*parkedOpen{}
	}
	id := o.fileID().Persistent
	p := &parkedOpen{o: o}
	p.timer = time.AfterFunc(o.durable.timeout, func() {
		s.parked.mu.Lock()
		if s.parked.opens[id] != p {
			s.parked.mu.Unlock()
			return
		}
		delete(s.parked.opens, id)
		s.parked.mu.Unlock()
		o.close()
	})
	s.parked.opens[id] = p
}

// unpark takes back the durable open id for a reconnect of account from
// client (MS-SMB2 3.3.5.9.7 and 3.3.5.9.12): not found unless the same
// user asks, a v2 reconnect (v2 set) only with the open's create GUID
// (none for a v1 open; a v1 reconnect takes either), and, for a leased
// open, the
// same client with its lease key; a lease reconnect naming another file
// is STATUS_INVALID_PARAMETER.
func (s *Server) unpark(id wire.FileID, account string, v2 bool, guid, client [16]byte, cr *CacheRequest, path string) (*open, uint32) {
	s.parked.mu.Lock()
	defer s.parked.mu.Unlock()
	p := s.parked.opens[id.Persistent]
	if p == nil || p.o.id.Volatile != id.Volatile {
		return nil, statusObjectNameNotFound
	}
	d := p.o.durable
	if d.account != account || v2 && (d.createGUID != guid || d.resilient) {
		return nil, statusObjectNameNotFound
	}
	if p.o.lease != nil {
		if cr == nil || cr.Oplock || cr.Key != *p.o.lease || d.clientGUID != client {
			return nil, statusObjectNameNotFound
		}
		if !strings.EqualFold(path, p.o.path) {
			return nil, statusInvalidParameter
		}
	}
	if !p.timer.Stop() {
		return nil, statusObjectNameNotFound
	}
	delete(s.parked.opens, id.Persistent)
	return p.o, statusSuccess
}

// reconnect handles a CREATE with DHnC or DH2C: the durable open comes
// back on this session and tree, still open in the Backend (Force Close
// Handles may have ended it meanwhile: then it is not found). The other
// fields of the request are ignored, as Windows does.
func (c *conn) reconnect(r *request, req *wire.CreateRequest, id wire.FileID, v2 bool, guid [16]byte) *response {
	path, _ := sharePath(req.Name)
	// Only the lease key of the request counts, whatever the oplock
	// level says.
	level := req.OplockLevel
	req.OplockLevel = OplockLease
	cr := c.cacheRequest(req)
	req.OplockLevel = level
	o, status := c.s.unpark(id, r.sess.account, v2, guid, c.clientGUID, cr, path)
	if o == nil && status == statusObjectNameNotFound && c.awaitHolder(id) {
		o, status = c.s.unpark(id, r.sess.account, v2, guid, c.clientGUID, cr, path)
	}
	if o == nil {
		return c.errorResponse(r, status)
	}
	ctx, cancel := c.reqCtx()
	st, err := o.h.Stat(ctx)
	cancel()
	if err != nil {
		// Force Close Handles ended it while it waited.
		return c.errorResponse(r, statusObjectNameNotFound)
	}
	var g Cache
	if ch, ok := o.h.(Cacher); ok {
		g = ch.Cache()
	}
	o.mu.Lock()
	o.tree, o.conn = r.tree, c
	o.mu.Unlock()
	r.sess.mu.Lock()
	r.sess.opens[o.id.Persistent] = o
	r.sess.mu.Unlock()
	r.fileID = o.id
	st.alloc = o.alloc
	resp := &wire.CreateResponse{CreateAction: FileOpened, FileTimes: statTimes(&st), FileID: o.id}
	if o.lease != nil {
		cr.State = g.State
	} else {
		cr = &CacheRequest{Oplock: true}
	}
	level, lc := grantContext(cr, g)
	resp.OplockLevel = level
	if lc != nil {
		resp.Contexts = append(resp.Contexts, *lc)
	}
	return c.ok(r, resp.Append(nil))
}

// holderWait bounds how long a reconnect waits for the connection that
// still holds its open to end.
const holderWait = 500 * time.Millisecond

// awaitHolder waits, for holderWait at most, for the other connections
// that hold the open id, or are ending (their opens on the way to being
// parked), to end, and reports whether there were any. A client that
// lost its connection reconnects at once, and the server may not have
// read the end of the old connection yet (its reader not yet scheduled
// under load): the open is then still on the old connection's session,
// not parked, and the reconnect would find nothing.
func (c *conn) awaitHolder(id wire.FileID) bool {
	c.s.mu.Lock()
	conns := make([]*conn, 0, len(c.s.conns))
	for o := range c.s.conns {
		if o != c {
			conns = append(conns, o)
		}
	}
	c.s.mu.Unlock()
	var holders []*conn
	for _, cc := range conns {
		if cc.ctx.Err() != nil || cc.holds(id) {
			holders = append(holders, cc)
		}
	}
	if len(holders) == 0 {
		return false
	}
	deadline := time.NewTimer(holderWait)
	defer deadline.Stop()
	for _, cc := range holders {
		select {
		case <-cc.ended:
		case <-deadline.C:
			return true
		}
	}
	return true
}

// sessionList returns the sessions of c as of now, to be walked without
// c's lock (each session has its own).
func (c *conn) sessionList() []*session {
	c.mu.Lock()
	defer c.mu.Unlock()
	sessions := make([]*session, 0, len(c.sessions))
	for _, s := range c.sessions {
		sessions = append(sessions, s)
	}
	return sessions
}

// holds reports whether a session of c has the durable open id.
func (c *conn) holds(id wire.FileID) bool {
	for _, s := range c.sessionList() {
		s.mu.Lock()
		o := s.opens[id.Persistent]
		s.mu.Unlock()
		if o != nil && o.id.Volatile == id.Volatile && o.durableState() != nil {
			return true
		}
	}
	return false
}

// sendCacheBreak sends a break for o on the connection that has it now. A
// durable open waiting for its client to come back loses out: it is
// closed, as Windows closes a disconnected open whose oplock or lease
// must break.
func (o *open) sendCacheBreak(b Break) {
	o.mu.Lock()
	c := o.conn
	o.mu.Unlock()
	if c != nil {
		if !b.Oplock {
			// A lease break goes to the client's first connection, as
			// on Windows (smbtorture smb2.lease.v2_complex1).
			c = c.clientConns()[0]
		}
		c.sendBreak(o, b)
		return
	}
	if s := o.server; s != nil {
		go s.dropParked(o)
	}
}

// dropParked closes a parked durable open.
func (s *Server) dropParked(o *open) {
	id := o.fileID().Persistent
	s.parked.mu.Lock()
	p := s.parked.opens[id]
	if p == nil || p.o != o || !p.timer.Stop() {
		s.parked.mu.Unlock()
		return
	}
	delete(s.parked.opens, id)
	s.parked.mu.Unlock()
	o.close()
}

// closeSession ends a session, lost with its connection, logged off or
// replaced by a reconnect naming it as previous: durable opens are parked
// for their client to take back (as Windows and Samba keep them across a
// logoff), the others closed.
func (c *conn) closeSession(s *session) {
	s.mu.Lock()
	opens := s.opens
	s.opens = map[uint64]*open{}
	s.trees = map[uint32]*tree{}
	s.mu.Unlock()
	for _, o := range opens {
		if ch, ok := o.h.(Cacher); ok && ch.Cache().Breaking {
			// A break went to this connection and will never be
			// acknowledged: the open is not kept (as when a break
			// reaches a parked one).
			o.close()
			continue
		}
		if d := o.durableState(); d != nil {
			o.mu.Lock()
			d.account = s.account
			o.conn = nil
			o.mu.Unlock()
			c.s.park(o)
			continue
		}
		o.close()
	}
}
