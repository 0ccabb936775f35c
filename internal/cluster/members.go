package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// Membership is how the instances that serve SMB from one engine agree on
// which of them are alive, so that the handles of one that dies are
// released by the others (a process that exits normally closes its own).
//
// Each instance joins with a fresh random id: a member record and a beat
// counter in the engine. Whatever an instance holds for its clients
// records the id of the member that took it (Owner), and the Holder
// releases it once Alive says that member is gone. A live instance bumps its counter every
// Expiry/6 (Run). Every instance watches the others' counters with its own
// monotonic clock: a counter that has not moved for Expiry since this
// instance first saw its value marks its member dead (in a transaction
// that re-reads the counter), and then every handle whose owner is dead
// or unknown is closed as if its client had gone, after which the dead
// member's records go. Nothing depends on the instances' wall clocks
// agreeing, only on their clocks running at about the same rate.
//
// Bounds: a dead instance's handles are released Expiry to Expiry plus
// one interval (Expiry/6) after its last beat, by any instance that was
// watching then; an instance that starts later releases them Expiry after
// it starts at the latest.
//
// Safety: the Holder checks in the transaction that takes a resource that
// its owner is a live member (Alive), and marking a member dead writes
// that record, so once an instance is declared dead it takes nothing
// more, and what it held is released (its SMB handles then fail). An instance whose last
// successful beat started longer ago than two thirds of Expiry (before
// any other instance can declare it dead), or that finds itself declared
// dead, gives its membership up: Owner refuses new opens (ErrInstanceLost)
// and Config.Lost tells the SMB server to drop its connections. It joins
// again under a new id as soon as the engine answers, releasing what its
// old id still held.
type Membership struct {
	eng storage.Engine
	cfg Config

	mu    sync.Mutex
	id    uint64    // 0 while not a member
	old   uint64    // the id given up, to release on the next join
	valid time.Time // the membership ends here unless a beat renews it
	seen  map[uint64]sighting
	left  bool // Leave was called: no more joins
}

// Holder keeps resources on behalf of members: the File domain's open
// handles.
type Holder interface {
	// ReleaseOrphans releases every resource whose owner is not a live
	// member (Alive), deciding each in the transaction that releases it.
	ReleaseOrphans(ctx context.Context) error
}

// Config configures a Membership.
type Config struct {
	// Holder releases what dead members held (nil: nothing is held).
	Holder Holder
	// Expiry is how long an instance's beat may stay unchanged before the
	// others declare it dead. Zero means no other instance shares the
	// engine: no beats, and the membership never lapses.
	Expiry time.Duration
	// Clock is the local monotonic clock (tests); time.Now by default.
	Clock func() time.Time
	// Lost is called (from Tick) when the membership ends.
	Lost func()
	Log  *slog.Logger
}

// sighting is the beat counter value of another member and when this
// instance first saw it.
type sighting struct {
	beat uint64
	at   time.Time
}

// member is the record of an instance; Dead is set when another instance
// found it expired (its handles are being released).
type member struct {
	Joined time.Time `json:"j"`
	Dead   bool      `json:"dead,omitempty"`
}

// ErrInstanceLost means this instance is not a live member (it could not
// renew its membership in time, or was declared dead): it may open no
// handle.
var ErrInstanceLost = errors.New("cluster: this instance's membership lapsed; it opens no handles until it joins again")

// Member and beat records live under their own tags of the "cluster" root.
const (
	tagMember = 'm'
	tagBeat   = 'b'
)

var clusterRoot = keyenc.AppendString(nil, "cluster")

func root(tag byte, extra int) []byte {
	k := make([]byte, 0, len(clusterRoot)+1+extra)
	return append(append(k, clusterRoot...), tag)
}

func memberKey(id uint64) []byte { return keyenc.AppendUint64(root(tagMember, 8), id) }
func beatKey(id uint64) []byte   { return keyenc.AppendUint64(root(tagBeat, 8), id) }

// Alive reports, inside tx, whether id is a member not declared dead.
// A Holder calls it in the transaction that takes a resource for id (the
// fence) and in the one that releases it.
func Alive(tx storage.Tx, id uint64) (bool, error) {
	v, err := tx.Get(memberKey(id))
	if errors.Is(err, storage.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	// Every SMB open asks this: decoding only the flag skips parsing the
	// join time (a third of the cost of an open's JSON decoding).
	m, err := decode[liveness](v)
	if err != nil {
		return false, err
	}
	return !m.Dead, nil
}

// liveness is the part of a member record Alive reads.
type liveness struct {
	Dead bool `json:"dead,omitempty"`
}

// New returns the membership of this instance among those sharing eng;
// call Join before Owner.
func New(eng storage.Engine, cfg Config) *Membership {
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Membership{eng: eng, cfg: cfg, seen: map[uint64]sighting{}}
}

// Interval is the time between beats (Expiry/6).
func (m *Membership) Interval() time.Duration { return m.cfg.Expiry / 6 }

// Owner returns the id new handles record, or ErrInstanceLost while this
// instance is not a live member.
func (m *Membership) Owner() (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.id == 0 || m.cfg.Expiry > 0 && !m.cfg.Clock().Before(m.valid) {
		return 0, ErrInstanceLost
	}
	return m.id, nil
}

// Join makes this instance a member under a new id. exclusive says the
// engine is this process's alone (an embedded engine): every member
// record and every handle an earlier process left is removed first, as
// no SMB connection survives a restart.
func (m *Membership) Join(ctx context.Context, exclusive bool) error {
	if exclusive {
		for _, tag := range []byte{tagMember, tagBeat} {
			p := root(tag, 0)
			if err := m.eng.Update(ctx, func(tx storage.Tx) error { return deletePrefix(tx, p) }); err != nil {
				return err
			}
		}
	}
	m.mu.Lock()
	old, left := m.old, m.left
	m.mu.Unlock()
	if left {
		return nil
	}
	id := newID()
	start := m.cfg.Clock()
	err := m.eng.Update(ctx, func(tx storage.Tx) error {
		if old != 0 {
			// The id given up: its handles go below.
			if err := markDead(tx, old); err != nil {
				return err
			}
		}
		if err := tx.Set(memberKey(id), encode(&member{Joined: time.Now()})); err != nil {
			return err
		}
		return tx.Set(beatKey(id), []byte("0"))
	})
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.id, m.old, m.valid = id, 0, start.Add(m.validity())
	m.mu.Unlock()
	m.cfg.Log.Info("cluster: joined", "instance", id)
	// Release what dead or vanished members (and the old id) left.
	return m.reap(ctx)
}

// validity is how long a beat keeps the membership: two thirds of
// Expiry, so it lapses well before another instance, whose count starts
// no earlier than the beat, declares it dead.
func (m *Membership) validity() time.Duration { return m.cfg.Expiry * 2 / 3 }

// markDead marks a member dead if it still exists.
func markDead(tx storage.Tx, id uint64) error {
	v, err := tx.Get(memberKey(id))
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	rec, err := decode[member](v)
	if err != nil {
		return err
	}
	if rec.Dead {
		return nil
	}
	rec.Dead = true
	return tx.Set(memberKey(id), encode(rec))
}

// Run beats and watches every Interval until ctx ends (only with an
// Expiry).
func (m *Membership) Run(ctx context.Context) error {
	if m.cfg.Expiry <= 0 {
		return nil
	}
	t := time.NewTicker(m.Interval())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if err := m.Tick(ctx); err != nil && ctx.Err() == nil {
			m.cfg.Log.Warn("cluster: membership", "err", err)
		}
	}
}

// Tick is one round of Run: join again if the membership lapsed, else
// renew it (giving it up if it cannot be renewed in time or was declared
// dead); then declare dead the members whose beat has not moved for
// Expiry and release the handles of dead members.
func (m *Membership) Tick(ctx context.Context) error {
	m.mu.Lock()
	id, left := m.id, m.left
	m.mu.Unlock()
	if left {
		return nil
	}
	if id == 0 {
		return m.Join(ctx, false)
	}
	start := m.cfg.Clock()
	bctx, cancel := context.WithTimeout(ctx, m.Interval())
	defer cancel()
	err := m.eng.Update(bctx, func(tx storage.Tx) error {
		ok, err := Alive(tx, id)
		if err != nil {
			return err
		}
		if !ok {
			return ErrInstanceLost
		}
		n, err := readBeat(tx, id)
		if err != nil {
			return err
		}
		return tx.Set(beatKey(id), strconv.AppendUint(nil, n+1, 10))
	})
	m.mu.Lock()
	switch {
	case err == nil:
		m.valid = start.Add(m.validity())
	case errors.Is(err, ErrInstanceLost) || !m.cfg.Clock().Before(m.valid):
		m.id, m.old = 0, id
	}
	lost := m.id == 0
	m.mu.Unlock()
	if lost {
		m.cfg.Log.Warn("cluster: membership lapsed; dropping SMB connections", "instance", id, "err", err)
		if m.cfg.Lost != nil {
			m.cfg.Lost()
		}
		return m.Join(ctx, false)
	}
	if err != nil {
		return err
	}
	return m.watch(ctx)
}

func readBeat(tx storage.Tx, id uint64) (uint64, error) {
	v, err := tx.Get(beatKey(id))
	if errors.Is(err, storage.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(string(v), 10, 64)
}

// watch looks at every other member's beat, declares dead those whose
// beat has not moved for Expiry, and releases dead members' handles.
func (m *Membership) watch(ctx context.Context) error {
	type row struct {
		id   uint64
		beat uint64
		dead bool
	}
	var rows []row
	err := m.eng.View(ctx, func(tx storage.Tx) error {
		ids, dead, err := members(tx)
		if err != nil {
			return err
		}
		rows = rows[:0]
		for i, id := range ids {
			n, err := readBeat(tx, id)
			if err != nil {
				return err
			}
			rows = append(rows, row{id, n, dead[i]})
		}
		return nil
	})
	if err != nil {
		return err
	}
	now := m.cfg.Clock()
	m.mu.Lock()
	self := m.id
	present := map[uint64]bool{}
	var stale []sighting
	var staleIDs []uint64
	dead := false
	for _, r := range rows {
		present[r.id] = true
		switch {
		case r.dead:
			dead = true
		case r.id == self:
		default:
			s, ok := m.seen[r.id]
			if !ok || s.beat != r.beat {
				m.seen[r.id] = sighting{beat: r.beat, at: now}
			} else if now.Sub(s.at) >= m.cfg.Expiry {
				stale, staleIDs = append(stale, s), append(staleIDs, r.id)
			}
		}
	}
	for id := range m.seen {
		if !present[id] {
			delete(m.seen, id)
		}
	}
	m.mu.Unlock()
	for i, id := range staleIDs {
		marked := false
		err := m.eng.Update(ctx, func(tx storage.Tx) error {
			marked = false
			n, err := readBeat(tx, id)
			if err != nil || n != stale[i].beat {
				// It beat after all (or is gone): look again later.
				return err
			}
			marked = true
			return markDead(tx, id)
		})
		if err != nil {
			return err
		}
		if marked {
			m.cfg.Log.Warn("cluster: instance stopped beating; releasing its handles", "instance", id, "silent", now.Sub(stale[i].at))
			dead = true
		}
	}
	if !dead {
		return nil
	}
	return m.reap(ctx)
}

// reap has the Holder release whatever is owned by a dead member or by
// none (SMB handles close as if their client had gone), then removes the
// dead members' records.
func (m *Membership) reap(ctx context.Context) error {
	// The members dead before the release starts: everything they hold is
	// in the release's snapshots, so their records can go after it.
	var gone []uint64
	err := m.eng.View(ctx, func(tx storage.Tx) error {
		ids, dead, err := members(tx)
		gone = gone[:0]
		for i, id := range ids {
			if dead[i] {
				gone = append(gone, id)
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	if m.cfg.Holder != nil {
		if err := m.cfg.Holder.ReleaseOrphans(ctx); err != nil {
			return err
		}
	}
	if len(gone) == 0 {
		return nil
	}
	return m.eng.Update(ctx, func(tx storage.Tx) error {
		for _, id := range gone {
			if err := tx.Delete(memberKey(id)); err != nil {
				return err
			}
			if err := tx.Delete(beatKey(id)); err != nil {
				return err
			}
		}
		return nil
	})
}

// members lists the member ids and whether each is dead.
func members(tx storage.Tx) ([]uint64, []bool, error) {
	p := root(tagMember, 0)
	it := tx.Scan(p, keyenc.PrefixEnd(p), false)
	defer it.Close()
	var ids []uint64
	var dead []bool
	for it.Next() {
		id, _, err := keyenc.ReadUint64(it.Key()[len(p):])
		if err != nil {
			return nil, nil, err
		}
		rec, err := decode[member](it.Value())
		if err != nil {
			return nil, nil, err
		}
		ids, dead = append(ids, id), append(dead, rec.Dead)
	}
	return ids, dead, it.Err()
}

// Leave ends the membership of an instance that is shutting down (after
// its SMB connections closed their handles): it is marked dead and
// whatever it still holds is released now rather than after Expiry.
func (m *Membership) Leave(ctx context.Context) error {
	m.mu.Lock()
	id := m.id
	m.id, m.left = 0, true
	m.mu.Unlock()
	if id == 0 {
		return nil
	}
	if err := m.eng.Update(ctx, func(tx storage.Tx) error { return markDead(tx, id) }); err != nil {
		return err
	}
	return m.reap(ctx)
}

// deletePrefix deletes every key under prefix p.
func deletePrefix(tx storage.Tx, p []byte) error {
	_, err := storage.DeleteRange(tx, p, keyenc.PrefixEnd(p), 0)
	return err
}

// newID returns a random non-zero 63-bit member id (zero means no owner).
func newID() uint64 {
	for {
		if v := rand.Uint64() >> 1; v != 0 {
			return v
		}
	}
}

func encode(v *member) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// A member record is a plain struct; Marshal cannot fail on it.
		panic(err)
	}
	return b
}

func decode[T any](b []byte) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		return nil, fmt.Errorf("cluster: corrupt record: %w", err)
	}
	return v, nil
}
