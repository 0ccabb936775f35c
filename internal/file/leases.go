package file

import (
	"context"
	"errors"

	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// Caching states an SMB client may hold on a file (MS-SMB2 2.2.13.2.8).
// Oplocks are kept as the same states: level II is read, exclusive is
// read-write, batch is read-write-handle.
const (
	CacheRead   uint8 = 1
	CacheHandle uint8 = 2
	CacheWrite  uint8 = 4
)

// Caching is what a handle's client caches: an oplock of that handle
// alone, or a lease that every open of one client with one lease key on
// the file shares (their handles carry the same Caching).
type Caching struct {
	Oplock bool     `json:"op,omitempty"`
	Client [16]byte `json:"c"`
	Key    [16]byte `json:"k"`
	Parent [16]byte `json:"pk,omitempty"`
	V2     bool     `json:"v2,omitempty"`
	State  uint8    `json:"st,omitempty"`
	// Breaking is set while a break to BreakTo waits for the client's
	// acknowledgement.
	Breaking bool  `json:"br,omitempty"`
	BreakTo  uint8 `json:"bt,omitempty"`
	// Sent is the state the client was last told to break to: a break
	// to lower while one is under way is sent once that one is
	// acknowledged.
	Sent  uint8  `json:"sn,omitempty"`
	Epoch uint16 `json:"ep,omitempty"`
}

// CacheRequest is the oplock or lease an SMB CREATE asks for.
type CacheRequest struct {
	Oplock      bool
	Client, Key [16]byte
	Parent      [16]byte
	V2          bool
	State       uint8
	Epoch       uint16
	// Directory allows a lease on a directory (SMB 3 with directory
	// leasing): read or read-handle caching.
	Directory bool
}

// Break is a cache break the SMB server holding Handle must send to its
// client: the oplock of that handle, or the lease it shares.
type Break struct {
	Handle HandleRef
	// Owner is the instance membership holding the handle.
	Owner uint64
	Cache Caching
	// From and To are the states before and after; AckRequired says
	// the client must acknowledge (the cache held write or handle
	// caching) before the break completes.
	From, To    uint8
	AckRequired bool
}

// errBreak is returned inside a transaction that met caches it must break
// first: the caller breaks them, waits, and runs the transaction again.
type errBreak struct {
	share, file uint64
	// to gives, per handle id, the state its cache must break to.
	to map[uint64]uint8
	// rest: a REST operation, answered ClientCacheFlushDelay when a
	// client does not acknowledge in time (an SMB open goes on).
	rest bool
}

func (e *errBreak) Error() string { return "file: SMB client caches must be broken first" }

// sameLease reports whether c is the lease req asks for.
func sameLease(c *Caching, req *CacheRequest) bool {
	return c != nil && req != nil && !c.Oplock && !req.Oplock && c.Client == req.Client && c.Key == req.Key
}

// leaseGroups groups the cached handles of hs by the lease (or oplock)
// they hold: the first handle of a group stands for it.
func leaseGroups(hs []*Handle) [][]*Handle {
	var groups [][]*Handle
	for _, h := range hs {
		if h.Cache == nil {
			continue
		}
		found := false
		for i, g := range groups {
			c := g[0].Cache
			if !c.Oplock && !h.Cache.Oplock && c.Client == h.Cache.Client && c.Key == h.Cache.Key {
				groups[i] = append(g, h)
				found = true
				break
			}
		}
		if !found {
			groups = append(groups, []*Handle{h})
		}
	}
	return groups
}

// needsAck reports whether a break from one state to another waits for
// the client: losing write caching (dirty data) or handle caching (kept
// handles) does, losing read caching alone does not.
func needsAck(from, to uint8) bool { return from&^to&(CacheWrite|CacheHandle) != 0 }

// restBreaks resolves the SMB caches in the way of a REST operation
// needing acc on n ("Managing file locks"): a write drops read caching at
// once, in tx (the clients hear of it through a notice), and breaks write
// caching, waiting for its flush; a delete or rename breaks handle and
// write caching so that clients close the handles they keep; a read
// breaks write caching. It answers errBreak when it must wait.
func (s *Service) restBreaks(tx storage.Tx, hs []*Handle, sid uint64, n *Node, acc access) error {
	var keep uint8
	switch {
	case acc&accessWrite != 0:
		keep = CacheHandle
	case acc&accessDelete != 0:
		keep = CacheRead
	case acc&accessRead != 0:
		keep = CacheRead | CacheHandle
	default:
		return nil
	}
	var e *errBreak
	for _, g := range leaseGroups(hs) {
		c := g[0].Cache
		if !c.Breaking && c.State&^keep == 0 {
			continue
		}
		to := c.State & keep
		if c.Oplock {
			// An oplock breaks to level II or to none.
			to &= CacheRead
		}
		if c.Breaking || needsAck(c.State, to) {
			// A break under way is waited for in any case.
			if e == nil {
				e = &errBreak{share: sid, file: n.ID, to: map[uint64]uint8{}, rest: true}
			}
			for _, h := range g {
				e.to[h.ID] = to
			}
			continue
		}
		from := c.State
		for _, h := range g {
			h.Cache.State = to
			if !h.Cache.Oplock && h.Cache.V2 {
				h.Cache.Epoch++
			}
			if err := tx.Set(handleKey(sid, n.ID, h.ID), encodeHandle(h)); err != nil {
				return err
			}
		}
		if err := s.notice(tx, sid, g[0], from, to); err != nil {
			return err
		}
	}
	if e == nil {
		return nil
	}
	return e
}

// notice records a break that needs no acknowledgement for the instance
// holding h, which delivers it within breakPoll.
func (s *Service) notice(tx storage.Tx, sid uint64, h *Handle, from, to uint8) error {
	br := Break{Handle: HandleRef{Share: sid, File: h.FileID, ID: h.ID}, Owner: h.Owner, Cache: *h.Cache, From: from, To: to}
	k := keyenc.AppendUint64(keyenc.AppendUint64(root(tagBreak, 16), h.Owner), h.ID)
	return tx.Set(k, encode(br))
}

// Access bits of an open that reads or writes no data: a stat open
// breaks no oplock when it asks for nothing but fileStatAccess, and no
// lease when nothing but leaseStatAccess (as Windows; smbtorture
// smb2.oplock.statopen1 and smb2.lease.statopen4).
const (
	fileReadAttributes  uint32 = 0x00000080
	fileWriteAttributes uint32 = 0x00000100
	readControl         uint32 = 0x00020000
	synchronize         uint32 = 0x00100000
	fileStatAccess             = fileReadAttributes | fileWriteAttributes | synchronize
	leaseStatAccess            = fileStatAccess | readControl
)

// statOpen reports whether access holds some of stat and nothing else.
func statOpen(access, stat uint32) bool { return access&stat != 0 && access&^stat == 0 }

// openBreaks decides the cache breaks an SMB open makes (MS-FSA 2.1.5.1.2
// and 2.1.4.12, as Windows does them): other clients' write caching
// breaks (an exclusive or batch oplock to level II), or, when the open
// meets a sharing violation, their handle caching, so that they may
// close the handles in its way; a truncating open breaks every other
// cache to none. The open waits only for caches that held what it
// needs broken (write caching, or handle caching on a sharing
// violation), and, after its first attempt, for any break under way;
// the other breaks go out without it waiting. It answers an errBreak to
// wait for, or else the breaks to start at once (to, per handle id).
func openBreaks(hs []*Handle, sid uint64, n *Node, req *OpenRequest, check uint32, truncate, conflict, first bool) (*errBreak, map[uint64]uint8) {
	if statOpen(check, fileStatAccess) {
		return nil, nil
	}
	delay := CacheWrite
	if conflict {
		delay = CacheHandle
	}
	wait := false
	var to map[uint64]uint8
	for _, g := range leaseGroups(hs) {
		c := g[0].Cache
		if sameLease(c, req.Cache) || !c.Oplock && statOpen(check, leaseStatAccess) {
			continue
		}
		keep := c.State &^ delay
		if truncate {
			keep = 0
		}
		if c.Oplock {
			// An oplock breaks to level II or to none.
			keep &= CacheRead
		}
		if c.State&^keep == 0 {
			if !c.Breaking {
				continue
			}
			// Nothing more to break, but a break under way is waited
			// for.
			wait = true
		}
		if c.State&delay != 0 || c.Breaking && !first {
			wait = true
		}
		if to == nil {
			to = map[uint64]uint8{}
		}
		for _, h := range g {
			to[h.ID] = keep
		}
	}
	if !wait {
		return nil, to
	}
	return &errBreak{share: sid, file: n.ID, to: to}, nil
}

// grantCache decides the cache an open gets once nothing is left to
// break, and records it on h and on the opens sharing its lease. Azure
// Files grants leases R, RH, RW and RWH and the three oplock levels on
// files, and R and RH leases on directories to SMB 3 clients.
func grantCache(tx storage.Tx, sid uint64, n *Node, hs []*Handle, h *Handle, req *CacheRequest) (bool, error) {
	if req == nil || n.Dir && (req.Oplock || !req.Directory) {
		return false, nil
	}
	asked := req.State & (CacheRead | CacheHandle | CacheWrite)
	if n.Dir {
		// A directory's lease caches no data to write.
		asked &^= CacheWrite
	}
	want := asked
	if want&CacheRead == 0 {
		// Handle or write caching without read caching is no state
		// Windows grants.
		want = 0
	}
	var mine []*Handle
	for _, o := range hs {
		if o.ID == h.ID {
			continue
		}
		if sameLease(o.Cache, req) {
			mine = append(mine, o)
			continue
		}
		stat := leaseStatAccess
		if req.Oplock {
			stat = fileStatAccess
		}
		if o.Cache == nil && statOpen(o.Access, stat) {
			// An open of attributes alone caches nothing to share
			// (smbtorture smb2.lease.statopen3).
			continue
		}
		// Any other open rules out write caching (an oplock gets level
		// II at most).
		want &^= CacheWrite
		if req.Oplock {
			want &^= CacheHandle
		}
		oc := o.Cache
		if oc == nil || oc.State == 0 && !oc.Breaking {
			continue
		}
		switch {
		case oc.State&CacheWrite != 0 || oc.Breaking:
			// A writer an open without data access left alone, or a
			// break under way: nothing can be shared with it.
			want = 0
		case req.Oplock && !oc.Oplock && oc.State&CacheHandle != 0:
			// An oplock does not join a lease with handle caching.
			want = 0
		case !req.Oplock && oc.Oplock:
			// A lease beside an oplock gets no handle caching.
			want &^= CacheHandle
		}
	}
	c := &Caching{Oplock: req.Oplock, Client: req.Client, Key: req.Key, Parent: req.Parent, V2: req.V2, State: want}
	if len(mine) > 0 {
		// The lease is shared: it keeps what it holds, and is upgraded
		// only to a state holding all of it that can be granted whole.
		cur := *mine[0].Cache
		c = &cur
		if !cur.Breaking && want == asked && want&cur.State == cur.State && want != cur.State && want&CacheRead != 0 {
			c.State = want
			if c.V2 {
				c.Epoch++
			}
		}
		for _, o := range mine {
			if *o.Cache == *c {
				continue
			}
			o.Cache = ptr(*c)
			if err := tx.Set(handleKey(sid, n.ID, o.ID), encodeHandle(o)); err != nil {
				return false, err
			}
		}
	} else if c.V2 && c.State != 0 {
		c.Epoch = req.Epoch + 1
	}
	if c.State == 0 && req.Oplock {
		return false, nil
	}
	h.Cache = c
	return c.State != 0, nil
}

func ptr[T any](v T) *T { return &v }

// AckBreak is the client's acknowledgement of a break of the cache of the
// handle ref (an oplock, or the lease it shares) to state: the break
// completes, and what waited for it goes on. A state above the one the
// break went to is ErrBadAck; no break under way is ErrNoBreak.
func (s *Service) AckBreak(ctx context.Context, ref HandleRef, state uint8) (*Caching, error) {
	var out *Caching
	var more []Break
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		more = more[:0]
		h, n, err := loadOpen(tx, ref)
		if err != nil {
			return err
		}
		if h.Cache == nil || !h.Cache.Breaking {
			return ErrNoBreak
		}
		if state&^h.Cache.Sent != 0 {
			return ErrBadAck
		}
		hs, err := loadHandles(tx, ref.Share, n.ID)
		if err != nil {
			return err
		}
		var g []*Handle
		for _, o := range hs {
			if o.ID == h.ID || !h.Cache.Oplock && sameLease(o.Cache, &CacheRequest{Client: h.Cache.Client, Key: h.Cache.Key}) {
				g = append(g, o)
			}
		}
		// A further break decided meanwhile is sent now, in steps as
		// Windows does: while write or handle caching is left, read
		// caching is kept and the client acknowledges; read caching
		// alone then drops without an acknowledgement.
		next := g[0].Cache.BreakTo
		if state&(CacheWrite|CacheHandle) != 0 {
			next |= state & CacheRead
		}
		further := state&^next != 0
		ack := needsAck(state, next)
		for _, o := range g {
			o.Cache.State = state
			switch {
			case further && ack:
				o.Cache.Sent = next
			case further:
				o.Cache.State, o.Cache.Breaking = next, false
			default:
				o.Cache.Breaking = false
			}
			if err := tx.Set(handleKey(ref.Share, n.ID, o.ID), encodeHandle(o)); err != nil {
				return err
			}
		}
		out = ptr(*g[0].Cache)
		if further {
			return s.record(tx, ref.Share, g[0], state, next, ack, &more)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.deliver(more)
	s.brk().wake()
	return out, nil
}

// Errors of AckBreak.
var (
	// ErrNoBreak: no break of this cache is under way.
	ErrNoBreak = errors.New("file: no cache break under way")
	// ErrBadAck: the acknowledged state is above the one the break went to.
	ErrBadAck = errors.New("file: acknowledged state above the break")
)

// Cache returns the cache the handle ref's client holds (nil for none).
func (s *Service) Cache(ctx context.Context, ref HandleRef) (*Caching, error) {
	var out *Caching
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		h, _, err := loadOpen(tx, ref)
		if err == nil && h.Cache != nil {
			out = ptr(*h.Cache)
		}
		return err
	})
	return out, err
}

// breakReaders breaks to none, without waiting, the read caches of the
// handles of hs that a write through own (0 for none) makes stale
// (MS-FSA 2.1.4.12: a write breaks level II oplocks and read leases, RH
// ones included, to none): read caching alone drops at once, handle
// caching is acknowledged by its client in its own time.
func (s *Service) breakReaders(tx storage.Tx, sid uint64, hs []*Handle, own *Handle, out *[]Break) error {
	for _, g := range leaseGroups(hs) {
		c := g[0].Cache
		if own != nil && own.Cache != nil && !own.Cache.Oplock && !c.Oplock && c.Client == own.Cache.Client && c.Key == own.Cache.Key {
			// A lease's own writes keep it; a level II oplock breaks
			// even on its own handle's writes.
			continue
		}
		if c.State&CacheRead == 0 || c.State&CacheWrite != 0 || c.Breaking && c.BreakTo == 0 {
			continue
		}
		if _, err := s.startBreak(tx, sid, g, 0, out); err != nil {
			return err
		}
		for _, h := range g {
			if own != nil && h.ID == own.ID {
				// The caller stores own after this.
				own.Cache = ptr(*h.Cache)
			}
		}
	}
	return nil
}

// staleReaders drops the read caches of n that a write or byte-range
// lock through h makes stale: other clients' read leases and every level
// II oplock, h's own included (MS-FSA 2.1.4.12).
func (s *Service) staleReaders(tx storage.Tx, sid uint64, n *Node, h *Handle, out *[]Break) error {
	if n.Handles <= 1 && (h.Cache == nil || !h.Cache.Oplock || h.Cache.State != CacheRead) {
		// A lone open has nothing to break but its own level II
		// oplock (no scan of the handles on the common path).
		return nil
	}
	hs, err := loadHandles(tx, sid, n.ID)
	if err != nil {
		return err
	}
	return s.breakReaders(tx, sid, hs, h, out)
}

// ErrLeaseKeyInUse: the client holds the lease key on another file (a key
// names one file's lease; MS-SMB2 3.3.5.9.8).
var ErrLeaseKeyInUse = errors.New("file: lease key in use on another file")

// leaseBinding is the file a lease key is bound to.
type leaseBinding struct {
	Share uint64 `json:"s"`
	File  uint64 `json:"f"`
}

func leaseKeyKey(client, key [16]byte) []byte {
	k := root(tagLeaseKey, 34)
	return keyenc.AppendBytes(keyenc.AppendBytes(k, client[:]), key[:])
}

// bindLease binds req's lease key to the file n of share sid, or answers
// ErrLeaseKeyInUse while an open of another file holds it (a directory,
// which gets no lease, binds nothing but is refused the same).
func bindLease(tx storage.Tx, sid uint64, n *Node, req *CacheRequest) error {
	fid := n.ID
	if req == nil || req.Oplock {
		return nil
	}
	k := leaseKeyKey(req.Client, req.Key)
	v, err := tx.Get(k)
	switch {
	case errors.Is(err, storage.ErrNotFound):
	case err != nil:
		return err
	default:
		b, err := decode[leaseBinding](v)
		if err != nil {
			return err
		}
		if b.Share == sid && b.File == fid {
			return nil
		}
		hs, err := loadHandles(tx, b.Share, b.File)
		if err != nil {
			return err
		}
		for _, h := range hs {
			if sameLease(h.Cache, req) {
				return ErrLeaseKeyInUse
			}
		}
	}
	if n.Dir && !req.Directory {
		return nil
	}
	return tx.Set(k, encode(leaseBinding{Share: sid, File: fid}))
}

// unbindLease frees the lease key of h, closing, when no other open of
// its file shares the lease.
func unbindLease(tx storage.Tx, sid uint64, h *Handle) error {
	if h.Cache == nil || h.Cache.Oplock {
		return nil
	}
	hs, err := loadHandles(tx, sid, h.FileID)
	if err != nil {
		return err
	}
	req := &CacheRequest{Client: h.Cache.Client, Key: h.Cache.Key}
	for _, o := range hs {
		if o.ID != h.ID && sameLease(o.Cache, req) {
			return nil
		}
	}
	return tx.Delete(leaseKeyKey(h.Cache.Client, h.Cache.Key))
}

// breakHandleCaching starts, without waiting, the break of the handle
// caching other clients hold on n, as deleting or renaming it through h
// does (MS-FSA 2.1.5.14.3 and 2.1.5.14.11): their clients close the
// handles they keep once told. A batch oplock breaks to level II.
func (s *Service) breakHandleCaching(tx storage.Tx, sid uint64, n *Node, h *Handle, out *[]Break) error {
	if n.Handles <= 1 {
		return nil
	}
	hs, err := loadHandles(tx, sid, n.ID)
	if err != nil {
		return err
	}
	for _, g := range leaseGroups(hs) {
		c := g[0].Cache
		if g[0].ID == h.ID || h.Cache != nil && !h.Cache.Oplock && sameLease(c, &CacheRequest{Client: h.Cache.Client, Key: h.Cache.Key}) {
			continue
		}
		if c.Breaking || c.State&CacheHandle == 0 {
			continue
		}
		to := c.State &^ CacheHandle
		if c.Oplock {
			to &= CacheRead
		}
		from := c.State
		for _, o := range g {
			o.Cache.Breaking, o.Cache.BreakTo, o.Cache.Sent = true, to, to
			if !o.Cache.Oplock && o.Cache.V2 {
				o.Cache.Epoch++
			}
			if err := tx.Set(handleKey(sid, n.ID, o.ID), encodeHandle(o)); err != nil {
				return err
			}
		}
		if err := s.record(tx, sid, g[0], from, to, true, out); err != nil {
			return err
		}
	}
	return nil
}
