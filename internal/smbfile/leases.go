package smbfile

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/lazuli-storage/lazuli/internal/file"
	"github.com/lazuli-storage/lazuli/internal/smb"
)

// caches holds, per handle id, the opens of this instance that were
// granted an oplock or lease, to deliver their breaks.
type caches struct {
	mu   sync.Mutex
	byID map[uint64]*handle
}

func (c *caches) add(h *handle) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.byID = map[uint64]*handle{}
	}
	c.byID[h.ref.ID] = h
}

func (c *caches) remove(h *handle) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byID, h.ref.ID)
}

func (c *caches) get(id uint64) *handle {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byID[id]
}

// Run delivers the oplock and lease breaks that this instance's SMB
// clients must receive, decided here or by other instances sharing the
// engine, until ctx ends.
func (b *Backend) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		owner, err := b.mem.Owner()
		if err != nil {
			// Not a member (yet, or any more): nothing of ours to break.
			select {
			case <-ctx.Done():
			case <-timeAfter():
			}
			continue
		}
		sctx, cancel := context.WithCancel(ctx)
		go func() {
			// Serve under this owner until the membership changes.
			for sctx.Err() == nil {
				if o, err := b.mem.Owner(); err != nil || o != owner {
					cancel()
					return
				}
				select {
				case <-sctx.Done():
				case <-timeAfter():
				}
			}
		}()
		b.svc.ServeBreaks(sctx, owner, b.deliver)
		cancel()
	}
	return nil
}

// deliver sends a break to the client of the handle it names.
func (b *Backend) deliver(br file.Break) {
	h := b.caches.get(br.Handle.ID)
	if h == nil {
		return
	}
	c := cacheOf(&br.Cache)
	c.State, c.Breaking = uint32(br.To), br.AckRequired
	if br.AckRequired {
		c.State = uint32(br.From)
	}
	h.setCache(c)
	if h.onBreak != nil {
		h.onBreak(smb.Break{Cache: cacheOf(&br.Cache), From: uint32(br.From), To: uint32(br.To), AckRequired: br.AckRequired})
	}
}

func cacheOf(c *file.Caching) smb.Cache {
	if c == nil {
		return smb.Cache{}
	}
	g := smb.Cache{Oplock: c.Oplock, Key: c.Key, State: uint32(c.State), Epoch: c.Epoch, Breaking: c.Breaking}
	if !c.Oplock {
		g.Version = 1
		if c.V2 {
			g.Version = 2
		}
	}
	return g
}

func cacheRequest(r *smb.CacheRequest) *file.CacheRequest {
	if r == nil {
		return nil
	}
	return &file.CacheRequest{Oplock: r.Oplock, Client: r.ClientGUID, Key: r.Key, Parent: r.ParentKey, V2: r.V2,
		State: uint8(r.State), Epoch: r.Epoch, Directory: r.Directory}
}

func (h *handle) setCache(c smb.Cache) {
	h.mu.Lock()
	h.cache = c
	h.mu.Unlock()
}

// Cache is what the open's client caches, as last granted or broken.
func (h *handle) Cache() smb.Cache {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cache
}

// AckBreak acknowledges a break of the open's oplock or lease.
func (h *handle) AckBreak(ctx context.Context, state uint32) (smb.Cache, error) {
	c, err := h.svc.AckBreak(ctx, h.ref, uint8(state))
	switch {
	case errors.Is(err, file.ErrNoBreak):
		return smb.Cache{}, smb.ErrNoBreak
	case errors.Is(err, file.ErrBadAck):
		return smb.Cache{}, smb.ErrBadAck
	case err != nil:
		return smb.Cache{}, mapErr(err)
	}
	g := cacheOf(c)
	h.setCache(g)
	return g, nil
}

// timeAfter paces the membership checks of Run.
func timeAfter() <-chan time.Time { return time.After(time.Second) }
