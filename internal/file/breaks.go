package file

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// How cache breaks travel: decided inside a transaction, delivered to the
// SMB server holding the handle (directly in this process, through a
// notice in the engine to another instance), acknowledged there, and
// waited for here.

// breaks is the state of cache breaks in this process: delivery to the
// SMB servers of this process, and waiters for acknowledgements.
type breaks struct {
	mu sync.Mutex
	// sinks deliver breaks of the handles an owner (an instance's
	// membership, 0 for unowned) holds in this process.
	sinks map[uint64]func(Break)
	// acked is closed (and replaced) whenever a cache changes here.
	acked chan struct{}
	// timeout bounds the wait for an acknowledgement.
	timeout time.Duration
	// sent and granted count breaks sent and caches granted.
	sent, granted int64
}

// DefaultBreakTimeout is how long a break waits for the client's
// acknowledgement, as on Windows.
const DefaultBreakTimeout = 35 * time.Second

// breakPoll is how often a wait looks again for acknowledgements that
// another instance recorded, and how often an instance looks for breaks
// another instance asks it to send.
const breakPoll = 50 * time.Millisecond

func (s *Service) brk() *breaks {
	s.breakOnce.Do(func() {
		s.breaks = &breaks{sinks: map[uint64]func(Break){}, acked: make(chan struct{}), timeout: DefaultBreakTimeout}
	})
	return s.breaks
}

// SetBreakTimeout sets how long a break waits for an acknowledgement
// (DefaultBreakTimeout unless set; tests shorten it).
func (s *Service) SetBreakTimeout(d time.Duration) {
	b := s.brk()
	b.mu.Lock()
	b.timeout = d
	b.mu.Unlock()
}

// CacheStats returns how many caches were granted and breaks sent by this
// process.
func (s *Service) CacheStats() (granted, sent int64) {
	b := s.brk()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.granted, b.sent
}

func (b *breaks) wake() {
	b.mu.Lock()
	close(b.acked)
	b.acked = make(chan struct{})
	b.mu.Unlock()
}

// ServeBreaks delivers to fn the breaks of the handles owner holds, until
// ctx ends: those this process decides at once, and those other instances
// sharing the engine record for it.
func (s *Service) ServeBreaks(ctx context.Context, owner uint64, fn func(Break)) {
	b := s.brk()
	b.mu.Lock()
	b.sinks[owner] = fn
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.sinks, owner)
		b.mu.Unlock()
	}()
	t := time.NewTicker(breakPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.takeNotices(ctx, owner, fn)
	}
}

// takeNotices delivers and removes the break notices recorded for owner.
func (s *Service) takeNotices(ctx context.Context, owner uint64, fn func(Break)) {
	p := keyenc.AppendUint64(root(tagBreak, 8), owner)
	var out []Break
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		out = out[:0]
		it := tx.Scan(p, keyenc.PrefixEnd(p), false)
		var keys [][]byte
		for it.Next() {
			br, err := decode[Break](it.Value())
			if err != nil {
				it.Close()
				return err
			}
			out = append(out, *br)
			keys = append(keys, append([]byte(nil), it.Key()...))
		}
		err := it.Err()
		it.Close()
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return
	}
	for _, br := range out {
		fn(br)
	}
}

// deliver sends breaks decided in a committed transaction: to this
// process's SMB server when it holds the handle; others were recorded as
// notices in that transaction (see record).
func (s *Service) deliver(out []Break) {
	if len(out) == 0 {
		return
	}
	b := s.brk()
	b.mu.Lock()
	b.sent += int64(len(out))
	b.mu.Unlock()
	for _, br := range out {
		if fn := s.localSink(br.Owner); fn != nil {
			fn(br)
		}
	}
	b.wake()
}

func (s *Service) localSink(owner uint64) func(Break) {
	b := s.brk()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sinks[owner]
}

// record notes a break of h for delivery: a notice in the engine when no
// sink of this process serves h's owner.
func (s *Service) record(tx storage.Tx, sid uint64, h *Handle, from, to uint8, ack bool, out *[]Break) error {
	br := Break{Handle: HandleRef{Share: sid, File: h.FileID, ID: h.ID}, Owner: h.Owner, Cache: *h.Cache, From: from, To: to, AckRequired: ack}
	*out = append(*out, br)
	if s.localSink(h.Owner) != nil {
		return nil
	}
	k := keyenc.AppendUint64(keyenc.AppendUint64(root(tagBreak, 16), h.Owner), h.ID)
	return tx.Set(k, encode(br))
}

// startBreaks begins the breaks of e in one transaction: caches that hold
// write or handle caching are marked breaking (the client acknowledges),
// read-only ones drop at once. It returns the handles to wait for.
func (s *Service) startBreaks(ctx context.Context, e *errBreak) (map[uint64]bool, error) {
	var out []Break
	wait := map[uint64]bool{}
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		out, wait = out[:0], map[uint64]bool{}
		hs, err := loadHandles(tx, e.share, e.file)
		if err != nil {
			return err
		}
		for _, g := range leaseGroups(hs) {
			to, ok := uint8(0), false
			for _, h := range g {
				if t, hit := e.to[h.ID]; hit {
					to, ok = t, true
				}
			}
			c := g[0].Cache
			if !ok || !c.Breaking && c.State&^to == 0 {
				continue
			}
			ack, err := s.startBreak(tx, e.share, g, to, &out)
			if err != nil {
				return err
			}
			for _, h := range g {
				if ack {
					wait[h.ID] = true
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.deliver(out)
	return wait, nil
}

// startBreak breaks the cache the handles of g share to state to, in tx:
// marked breaking when it held write or handle caching (the client
// acknowledges), otherwise dropped at once; the break goes to out. A
// break under way is narrowed to to, sent once it is acknowledged. It
// reports whether a break waits for the client.
func (s *Service) startBreak(tx storage.Tx, sid uint64, g []*Handle, to uint8, out *[]Break) (bool, error) {
	if g[0].Cache.Breaking {
		for _, h := range g {
			if h.Cache.BreakTo&to == h.Cache.BreakTo {
				continue
			}
			h.Cache.BreakTo &= to
			if err := tx.Set(handleKey(sid, h.FileID, h.ID), encodeHandle(h)); err != nil {
				return false, err
			}
		}
		return true, nil
	}
	from := g[0].Cache.State
	ack := needsAck(from, to)
	for _, h := range g {
		if ack {
			h.Cache.Breaking, h.Cache.BreakTo, h.Cache.Sent = true, to, to
		} else {
			h.Cache.State = to
		}
		if !h.Cache.Oplock && h.Cache.V2 {
			h.Cache.Epoch++
		}
		if err := tx.Set(handleKey(sid, h.FileID, h.ID), encodeHandle(h)); err != nil {
			return false, err
		}
	}
	return ack, s.record(tx, sid, g[0], from, to, ack, out)
}

// breakAndWait breaks the caches e names and waits until their clients
// acknowledged or closed, or the timeout passed: then the breaks are
// forced, and a REST operation answers 409 ClientCacheFlushDelay.
func (s *Service) breakAndWait(ctx context.Context, e *errBreak) error {
	wait, err := s.startBreaks(ctx, e)
	if err != nil || len(wait) == 0 {
		return err
	}
	b := s.brk()
	b.mu.Lock()
	deadline := time.Now().Add(b.timeout)
	b.mu.Unlock()
	for {
		b.mu.Lock()
		acked := b.acked
		b.mu.Unlock()
		pending := false
		err := s.eng.View(ctx, func(tx storage.Tx) error {
			pending = false
			for id := range wait {
				v, err := tx.Get(handleKey(e.share, e.file, id))
				if errors.Is(err, storage.ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				h, err := decodeHandle(v)
				if err != nil {
					return err
				}
				if h.Cache != nil && h.Cache.Breaking {
					pending = true
				}
			}
			return nil
		})
		if err != nil || !pending {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-acked:
		case <-time.After(min(left, breakPoll)):
		}
	}
	// No acknowledgement in time: the client loses its cache altogether,
	// as on Windows (smbtorture smb2.lease.timeout); a late
	// acknowledgement finds no break under way.
	err = s.eng.Update(ctx, func(tx storage.Tx) error {
		for id := range wait {
			v, err := tx.Get(handleKey(e.share, e.file, id))
			if errors.Is(err, storage.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			h, err := decodeHandle(v)
			if err != nil {
				return err
			}
			if h.Cache == nil || !h.Cache.Breaking {
				continue
			}
			h.Cache.State, h.Cache.Breaking = 0, false
			if err := tx.Set(handleKey(e.share, e.file, id), encodeHandle(h)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if e.rest {
		return azerr.New(azerr.ClientCacheFlushDelay)
	}
	return nil
}

// update is s.eng.Update for operations that may meet SMB client caches:
// when fn answers errBreak, the caches are broken and fn runs again.
func (s *Service) update(ctx context.Context, fn func(tx storage.Tx) error) error {
	return s.withBreaks(ctx, nil, func() error { return s.eng.Update(ctx, fn) })
}

// view is update for reads (a REST read breaks write caching).
func (s *Service) view(ctx context.Context, fn func(tx storage.Tx) error) error {
	return s.withBreaks(ctx, nil, func() error { return s.eng.View(ctx, fn) })
}

// withBreaks runs run until it meets no cache to break, breaking them in
// between; waiting, if set, is called before the first wait.
func (s *Service) withBreaks(ctx context.Context, waiting func(), run func() error) error {
	// New opens may be granted caches while this one waits: it tries
	// again as long as each round is answered, within one timeout.
	var deadline time.Time
	for {
		err := run()
		if err == nil {
			return nil // before errors.As, whose target would escape on every call
		}
		var e *errBreak
		if !errors.As(err, &e) {
			return err
		}
		if deadline.IsZero() {
			b := s.brk()
			b.mu.Lock()
			deadline = time.Now().Add(b.timeout)
			b.mu.Unlock()
		} else if time.Now().After(deadline) {
			if e.rest {
				return azerr.New(azerr.ClientCacheFlushDelay)
			}
			return azerr.New(azerr.SharingViolation)
		}
		if waiting != nil {
			waiting()
			waiting = nil
		}
		if err := s.breakAndWait(ctx, e); err != nil {
			return err
		}
	}
}
