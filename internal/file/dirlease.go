package file

import (
	"context"

	"github.com/lazuli-storage/lazuli/storage"
)

// Directory leases and the breaks that rename and delete wait for.
//
// An SMB 3 client may hold a read (R) or read-handle (RH) lease on a
// directory, as on Azure Files: it caches the directory's listing and
// keeps its handle. Any change of the directory's entries, through SMB or
// REST, breaks those leases to none without waiting (MS-FSA 2.1.4.12 with
// PARENT_OBJECT), except the lease the changing open named as its parent
// (the client knows of the change it makes itself). REST changes of an
// entry's size, times, attributes, properties or metadata (Put Range,
// Clear Range, Put Range From URL, Set Properties, Set Metadata, Copy
// File) count, as the listing the client caches shows them.

// waitingKey carries the function called when an operation starts waiting
// for SMB clients to acknowledge breaks (see WithWaiting).
type waitingKey struct{}

// WithWaiting returns ctx carrying fn, which an operation under ctx calls
// once when it starts waiting for SMB clients to acknowledge cache breaks
// (the SMB server then answers STATUS_PENDING and finishes the request
// asynchronously).
func WithWaiting(ctx context.Context, fn func()) context.Context {
	if fn == nil {
		return ctx
	}
	return context.WithValue(ctx, waitingKey{}, fn)
}

func waitingOf(ctx context.Context) func() {
	fn, _ := ctx.Value(waitingKey{}).(func())
	return fn
}

// breakParentLeases starts, without waiting, the break to none of the
// leases held on the directory dir, whose entries change: all but the
// lease key parent of client (the parent key the changing open named;
// zero for none). A nil dir (the root's parent) has none.
func (s *Service) breakParentLeases(tx storage.Tx, sid uint64, dir *Node, client, parent [16]byte, out *[]Break) error {
	if dir == nil || !dir.Dir || dir.Handles == 0 {
		return nil
	}
	hs, err := loadHandles(tx, sid, dir.ID)
	if err != nil {
		return err
	}
	for _, g := range leaseGroups(hs) {
		c := g[0].Cache
		if c.Oplock || c.State == 0 || c.Breaking && c.BreakTo == 0 {
			continue
		}
		if parent != ([16]byte{}) && c.Client == client && c.Key == parent {
			continue
		}
		if _, err := s.startBreak(tx, sid, g, 0, out); err != nil {
			return err
		}
	}
	return nil
}

// breakParentOf is breakParentLeases for the directory holding n, changed
// through the handle h (nil for REST).
func (s *Service) breakParentOf(tx storage.Tx, sid uint64, n *Node, h *Handle, out *[]Break) error {
	if n.ID == rootID {
		return nil
	}
	dir, err := nodeByID(tx, sid, n.Parent)
	if err != nil || dir == nil {
		return err
	}
	client, parent := parentKeyOf(h)
	return s.breakParentLeases(tx, sid, dir, client, parent, out)
}

// parentKeyOf returns the client and parent lease key of the lease h
// holds (zero for none).
func parentKeyOf(h *Handle) (client, parent [16]byte) {
	if h == nil || h.Cache == nil || h.Cache.Oplock {
		return client, parent
	}
	return h.Cache.Client, h.Cache.Parent
}

// handleBreaks is the break a rename or delete of n through h waits for
// (MS-FSA 2.1.4.12, SET_INFORMATION with FileRenameInformation or
// FileDispositionInformation): other clients' handle caching, so that
// they close the handles they keep. A batch oplock breaks to level II.
// It is nil when no cache holds handle caching.
func handleBreaks(tx storage.Tx, sid uint64, n *Node, h *Handle) (*errBreak, error) {
	if n.Handles <= 1 {
		return nil, nil
	}
	hs, err := loadHandles(tx, sid, n.ID)
	if err != nil {
		return nil, err
	}
	var e *errBreak
	for _, g := range leaseGroups(hs) {
		c := g[0].Cache
		if g[0].ID == h.ID || h.Cache != nil && !h.Cache.Oplock && sameLease(c, &CacheRequest{Client: h.Cache.Client, Key: h.Cache.Key}) {
			continue
		}
		if c.State&CacheHandle == 0 {
			continue
		}
		to := c.State &^ CacheHandle
		if c.Oplock {
			to &= CacheRead
		}
		if e == nil {
			e = &errBreak{share: sid, file: n.ID, to: map[uint64]uint8{}}
		}
		for _, o := range g {
			e.to[o.ID] = to
		}
	}
	return e, nil
}

// cacheClient and cacheParent are the client and parent lease key of a
// lease request (zero for none).
func cacheClient(r *CacheRequest) [16]byte {
	if r == nil || r.Oplock {
		return [16]byte{}
	}
	return r.Client
}

func cacheParent(r *CacheRequest) [16]byte {
	if r == nil || r.Oplock {
		return [16]byte{}
	}
	return r.Parent
}
