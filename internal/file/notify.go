package file

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf16"

	"github.com/lazuli-storage/lazuli/storage"
)

// Change notification (SMB CHANGE_NOTIFY): a Watcher receives the changes
// made to the entries of one directory (or of its whole tree), whichever
// protocol made them. Changes are seen where they are written: every
// Update of a service whose engine has watchers runs through watchTx, which
// notes the node records it writes with their previous values; once the
// transaction is committed the differences become changes, delivered to
// the watchers of the parent directory and, for tree watchers, of its
// ancestors. With no watcher on a share nothing is noted, and with none on
// the engine nothing is wrapped.
//
// Watchers live in the process: the services of one process over one
// engine (REST's and SMB's) share them, but an instance sharing a
// PostgreSQL database with others does not see the changes the others
// make.

// Actions of a Change (MS-FSCC 2.7.1 FILE_NOTIFY_INFORMATION).
const (
	ActionAdded    uint32 = 1
	ActionRemoved  uint32 = 2
	ActionModified uint32 = 3
	ActionOldName  uint32 = 4
	ActionNewName  uint32 = 5
)

// Completion filter bits (MS-SMB2 2.2.35): what a watcher asks for.
const (
	NotifyFileName   uint32 = 0x001
	NotifyDirName    uint32 = 0x002
	NotifyAttributes uint32 = 0x004
	NotifySize       uint32 = 0x008
	NotifyLastWrite  uint32 = 0x010
	NotifyLastAccess uint32 = 0x020
	NotifyCreation   uint32 = 0x040
	NotifyEA         uint32 = 0x080
	NotifySecurity   uint32 = 0x100
)

// actionDeleting marks the event of a watched directory itself becoming
// delete-pending or removed: its parent field is the directory.
const actionDeleting uint32 = 0

// Change is one change to an entry below a watched directory. Name is the
// entry's path relative to the watched directory, '\' separated.
type Change struct {
	Action uint32
	Name   string
}

// Size is the bytes the change takes in a FILE_NOTIFY_INFORMATION list,
// by which a watcher's buffer is counted.
func (c Change) Size() int {
	n := 12 + 2*len(utf16.Encode([]rune(c.Name)))
	return (n + 3) &^ 3
}

// Watcher collects the changes below one directory until they are taken.
type Watcher struct {
	h      *hub
	sid    uint64
	dir    uint64
	tree   bool
	filter uint32
	// capacity bounds the bytes of changes kept; past it the changes are
	// dropped and the next Take reports an overflow.
	capacity int

	mu       sync.Mutex
	changes  []Change
	size     int
	overflow bool
	// deleting is set once the directory is pending deletion or gone.
	deleting bool
	ready    chan struct{} // closed and replaced as changes arrive
	// onChange runs after changes arrive (see OnChange).
	onChange func()
}

// Watch starts collecting the changes below the directory ref has open
// (below its whole tree when tree is set) that filter asks for, keeping at
// most capacity bytes of them. Close the Watcher when done.
func (s *Service) Watch(ref HandleRef, tree bool, filter uint32, capacity int) *Watcher {
	h := s.hub
	w := &Watcher{h: h, sid: ref.Share, dir: ref.File, tree: tree, filter: filter, capacity: capacity,
		ready: make(chan struct{})}
	h.mu.Lock()
	if h.shares[w.sid] == nil {
		h.shares[w.sid] = map[*Watcher]struct{}{}
	}
	h.shares[w.sid][w] = struct{}{}
	if tree {
		h.trees[w.sid]++
	}
	h.count.Add(1)
	h.mu.Unlock()
	// A directory already pending deletion (or gone) sends no more
	// events: the Watcher starts out deleting. Registered first, it
	// misses nothing that happens after this read either.
	var gone bool
	err := s.eng.View(context.Background(), func(tx storage.Tx) error {
		_, n, err := loadOpen(tx, ref)
		gone = errors.Is(err, ErrHandleClosed) || err == nil && n.DeletePending
		return nil
	})
	if err == nil && gone {
		w.add([]Change{{Action: actionDeleting}})
	}
	return w
}

// Ready is closed once changes (or an overflow) wait to be taken.
func (w *Watcher) Ready() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.changes) > 0 || w.overflow || w.deleting {
		c := make(chan struct{})
		close(c)
		return c
	}
	return w.ready
}

// Take returns and forgets the changes collected, or overflow when more
// arrived than the Watcher keeps (the client then reads the directory),
// or deleting once the directory is pending deletion or gone (from then
// on).
func (w *Watcher) Take() (changes []Change, overflow, deleting bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.deleting {
		return nil, false, true
	}
	changes, overflow = w.changes, w.overflow
	w.changes, w.size, w.overflow = nil, 0, false
	return changes, overflow, false
}

// Close stops the Watcher.
func (w *Watcher) Close() {
	h := w.h
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.shares[w.sid]
	if _, ok := m[w]; !ok {
		return
	}
	delete(m, w)
	if len(m) == 0 {
		delete(h.shares, w.sid)
	}
	if w.tree {
		if h.trees[w.sid]--; h.trees[w.sid] == 0 {
			delete(h.trees, w.sid)
		}
	}
	h.count.Add(-1)
}

// OnChange sets fn to run each time changes (or an overflow, or the
// deletion) arrive, in the goroutine that made them, once they can be
// taken: a CHANGE_NOTIFY waiting is answered with the changes as they
// were when they happened, not as they are when a goroutine gets to them.
// fn must not block.
func (w *Watcher) OnChange(fn func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onChange = fn
}

func (w *Watcher) add(cs []Change) {
	w.mu.Lock()
	w.collect(cs)
	fn := w.onChange
	w.mu.Unlock()
	if fn != nil {
		fn()
	}
}

// collect adds changes; w.mu is held.
func (w *Watcher) collect(cs []Change) {
	for _, c := range cs {
		if c.Action == actionDeleting {
			w.deleting = true
			continue
		}
		if w.overflow {
			continue
		}
		// A change repeating the one before it adds nothing (several
		// writes of one file's properties are one MODIFIED).
		if n := len(w.changes); n > 0 && w.changes[n-1] == c {
			continue
		}
		if w.size+c.Size() > w.capacity {
			w.changes, w.size, w.overflow = nil, 0, true
		} else {
			w.changes = append(w.changes, c)
			w.size += c.Size()
		}
	}
	close(w.ready)
	w.ready = make(chan struct{})
}

// hub holds the watchers of one service. The process has one File service,
// which REST and SMB share, so changes REST makes reach SMB's watchers.
type hub struct {
	mu     sync.Mutex
	shares map[uint64]map[*Watcher]struct{}
	trees  map[uint64]int // tree watchers per share
	// count is the number of watchers, read without the lock by every
	// Update.
	count atomic.Int64
}

// newHub returns a hub without watchers.
func newHub() *hub {
	return &hub{shares: map[uint64]map[*Watcher]struct{}{}, trees: map[uint64]int{}}
}

func (h *hub) active() bool { return h != nil && h.count.Load() > 0 }

func (h *hub) watched(sid uint64) (any, tree bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.shares[sid]) > 0, h.trees[sid] > 0
}

// event is a change to an entry of directory parent of share sid, with the
// filter bits it matches.
type event struct {
	sid, parent uint64
	action      uint32
	name        string
	mask        uint32
	// unless names filter bits whose watchers do not get the event: they
	// learn of the change from another event of the same transaction.
	unless uint32
}

// delivery is an event as the watchers of one directory see it.
type delivery struct {
	sid, dir uint64
	direct   bool // dir is the entry's parent (not a further ancestor)
	action   uint32
	name     string
	mask     uint32
	unless   uint32
}

func (h *hub) deliver(ds []delivery) {
	// One transaction's changes reach each watcher at once, so a request
	// never takes half of them (an old name without its new one).
	got := map[*Watcher][]Change{}
	var order []*Watcher
	h.mu.Lock()
	for _, d := range ds {
		for w := range h.shares[d.sid] {
			if w.dir == d.dir && (d.direct || w.tree) && (w.filter&d.mask != 0 && w.filter&d.unless == 0 || d.action == actionDeleting) {
				if got[w] == nil {
					order = append(order, w)
				}
				got[w] = append(got[w], Change{Action: d.action, Name: d.name})
			}
		}
	}
	h.mu.Unlock()
	for _, w := range order {
		w.add(got[w])
	}
}

// quietKey marks a context whose writes notify nobody (see Quiet).
type quietKey struct{}

// Quiet returns ctx such that the writes made under it notify no watcher:
// an SMB client's WRITEs are reported once, when the handle closes
// (NotifyWritten), as Windows does.
func Quiet(ctx context.Context) context.Context { return context.WithValue(ctx, quietKey{}, true) }

// NotifyWritten reports to the watchers that the file ref has open was
// written (its size and last write time changed).
func (s *Service) NotifyWritten(ctx context.Context, ref HandleRef) error {
	h := s.hub
	if !h.active() {
		return nil
	}
	if any, _ := h.watched(ref.Share); !any {
		return nil
	}
	var ds []delivery
	err := s.raw.View(ctx, func(tx storage.Tx) error {
		n, err := nodeByID(tx, ref.Share, ref.File)
		if err != nil || n == nil || n.ID == rootID {
			return err
		}
		ds, err = h.paths(tx, []event{{sid: ref.Share, parent: n.Parent, action: ActionModified, name: n.Name,
			mask: NotifySize | NotifyLastWrite}})
		return err
	})
	if err == nil {
		h.deliver(ds)
	}
	return err
}

// paths turns events into deliveries: to the parent's watchers, and with
// the path from each ancestor to the tree watchers of the ancestors.
func (h *hub) paths(tx storage.Tx, evs []event) ([]delivery, error) {
	var out []delivery
	for _, e := range evs {
		out = append(out, delivery{sid: e.sid, dir: e.parent, direct: true, action: e.action, name: e.name, mask: e.mask,
			unless: e.unless})
		if _, tree := h.watched(e.sid); !tree || e.action == actionDeleting {
			continue
		}
		rel, dir := e.name, e.parent
		for depth := 0; dir != rootID && depth < 256; depth++ {
			n, err := nodeByID(tx, e.sid, dir)
			if err != nil {
				return nil, err
			}
			if n == nil {
				break
			}
			rel, dir = n.Name+`\`+rel, n.Parent
			out = append(out, delivery{sid: e.sid, dir: dir, action: e.action, name: rel, mask: e.mask, unless: e.unless})
		}
	}
	return out, nil
}

// watchedEngine is a service's engine: its Updates note node changes
// while h has watchers.
type watchedEngine struct {
	storage.Engine
	h *hub
}

func (e watchedEngine) Update(ctx context.Context, fn func(storage.Tx) error) error {
	return e.update(ctx, fn, e.Engine.Update)
}

// UpdateTransient implements storage.TransientUpdater over the engine's.
func (e watchedEngine) UpdateTransient(ctx context.Context, fn func(storage.Tx) error) error {
	return e.update(ctx, fn, func(ctx context.Context, fn func(storage.Tx) error) error {
		return storage.UpdateTransient(ctx, e.Engine, fn)
	})
}

func (e watchedEngine) update(ctx context.Context, fn func(storage.Tx) error, commit func(context.Context, func(storage.Tx) error) error) error {
	hb := e.h
	if !hb.active() || ctx.Value(quietKey{}) != nil {
		return commit(ctx, fn)
	}
	var ds []delivery
	err := commit(ctx, func(tx storage.Tx) error {
		wt := &watchTx{Tx: tx, h: hb, seen: map[string]int{}}
		if err := fn(wt); err != nil {
			return err
		}
		var err error
		ds, err = hb.paths(tx, wt.events())
		return err
	})
	if err == nil {
		hb.deliver(ds)
	}
	return err
}

// watchTx notes the node records an Update writes in watched shares: the
// value before the first write and the last one.
type watchTx struct {
	storage.Tx
	h     *hub
	seen  map[string]int // key -> index in notes
	notes []note
}

type note struct {
	sid      uint64
	old, new []byte // nil when absent
}

var nodeRoot = root(tagNode, 0)

func (t *watchTx) touch(key, value []byte) error {
	if len(key) < len(nodeRoot)+16 || !bytes.HasPrefix(key, nodeRoot) {
		return nil
	}
	if i, ok := t.seen[string(key)]; ok {
		t.notes[i].new = value
		return nil
	}
	sid := binary.BigEndian.Uint64(key[len(nodeRoot):])
	if any, _ := t.h.watched(sid); !any {
		return nil
	}
	old, err := t.Tx.Get(key)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	t.seen[string(key)] = len(t.notes)
	t.notes = append(t.notes, note{sid: sid, old: old, new: value})
	return nil
}

func (t *watchTx) Set(key, value []byte) error {
	if err := t.touch(key, slices.Clone(value)); err != nil {
		return err
	}
	return t.Tx.Set(key, value)
}

func (t *watchTx) Insert(key, value []byte) error {
	if err := t.touch(key, slices.Clone(value)); err != nil {
		return err
	}
	return storage.Insert(t.Tx, key, value)
}

func (t *watchTx) Delete(key []byte) error {
	if err := t.touch(key, nil); err != nil {
		return err
	}
	return t.Tx.Delete(key)
}

func (t *watchTx) GetMany(keys [][]byte) ([][]byte, error) { return storage.GetMany(t.Tx, keys) }

// events compares the noted records: a node gone from one key and present
// at another is a rename (or a move), a new key an addition, a removed
// one a removal, and a changed record a modification of what changed.
func (t *watchTx) events() []event {
	type side struct {
		sid uint64
		n   *Node
	}
	var olds, news []side
	for _, nt := range t.notes {
		var o, n *Node
		if nt.old != nil {
			o, _ = decodeNode(nt.old)
		}
		if nt.new != nil {
			n, _ = decodeNode(nt.new)
		}
		olds, news = append(olds, side{nt.sid, o}), append(news, side{nt.sid, n})
	}
	// Where each node id is after the transaction.
	now := map[uint64]int{}
	before := map[uint64]int{}
	for i := range t.notes {
		if n := news[i].n; n != nil {
			now[n.ID] = i
		}
		if o := olds[i].n; o != nil {
			before[o.ID] = i
		}
	}
	var evs []event
	for i := range t.notes {
		sid, o, n := olds[i].sid, olds[i].n, news[i].n
		if o != nil && o.Dir && (n == nil && !movedAway(now, o, i) || n != nil && n.ID == o.ID && n.DeletePending && !o.DeletePending) {
			// The directory itself goes: its watchers learn it.
			evs = append(evs, event{sid: sid, parent: o.ID, action: actionDeleting})
		}
		if o != nil && n != nil && o.ID == n.ID {
			if o.Name != n.Name {
				// The same key under another case: a rename in place.
				mask := nameMask(o)
				evs = append(evs, event{sid: sid, parent: o.Parent, action: ActionOldName, name: o.Name, mask: mask},
					event{sid: sid, parent: n.Parent, action: ActionNewName, name: n.Name, mask: mask})
				evs = appendRenamedFile(evs, sid, n)
			} else if m := modified(o, n); m != 0 {
				evs = append(evs, event{sid: sid, parent: n.Parent, action: ActionModified, name: n.Name, mask: m})
			}
			continue
		}
		if o != nil {
			// o left this key: moved to another one, or removed.
			mask := nameMask(o)
			if j, ok := now[o.ID]; ok && j != i {
				m := news[j].n
				if m.Parent == o.Parent {
					evs = append(evs, event{sid: sid, parent: o.Parent, action: ActionOldName, name: o.Name, mask: mask},
						event{sid: sid, parent: m.Parent, action: ActionNewName, name: m.Name, mask: mask})
				} else {
					evs = append(evs, event{sid: sid, parent: o.Parent, action: ActionRemoved, name: o.Name, mask: mask},
						event{sid: sid, parent: m.Parent, action: ActionAdded, name: m.Name, mask: mask})
				}
				evs = appendRenamedFile(evs, sid, m)
			} else {
				evs = append(evs, event{sid: sid, parent: o.Parent, action: ActionRemoved, name: o.Name, mask: mask})
			}
		}
		if n != nil {
			// n came to this key: the end of a move reported above, or new.
			if j, ok := before[n.ID]; !ok || j == i {
				evs = append(evs, event{sid: sid, parent: n.Parent, action: ActionAdded, name: n.Name, mask: nameMask(n)})
			}
		}
	}
	return evs
}

// appendRenamedFile adds what Windows reports of a file (not a
// directory) renamed or moved to a watcher that asks for its attributes or
// creation time but not for file names: a modification under its new name
// (smbtorture smb2.notify.mask-change). A watcher asking for file names
// learns of the rename from the names alone (smb2.notify.rec).
func appendRenamedFile(evs []event, sid uint64, n *Node) []event {
	if n.Dir {
		return evs
	}
	return append(evs, event{sid: sid, parent: n.Parent, action: ActionModified, name: n.Name,
		mask: NotifyAttributes | NotifyCreation, unless: NotifyFileName})
}

// movedAway reports whether o, noted at index i, is at another key now.
func movedAway(now map[uint64]int, o *Node, i int) bool {
	j, ok := now[o.ID]
	return ok && j != i
}

func nameMask(n *Node) uint32 {
	if n.Dir {
		return NotifyDirName
	}
	return NotifyFileName
}

// modified returns the filter bits of what changed between two records of
// one node.
func modified(o, n *Node) uint32 {
	var m uint32
	if o.Attrs != n.Attrs {
		m |= NotifyAttributes
	}
	if o.Size != n.Size {
		m |= NotifySize
	}
	if !o.LastWriteTime.Equal(n.LastWriteTime) {
		m |= NotifyLastWrite
	}
	if !o.LastAccessTime.Equal(n.LastAccessTime) {
		m |= NotifyLastAccess
	}
	if !o.CreationTime.Equal(n.CreationTime) {
		m |= NotifyCreation
	}
	if o.PermKey != n.PermKey {
		m |= NotifySecurity
	}
	if !slices.Equal(o.Meta, n.Meta) {
		m |= NotifyEA
	}
	return m
}
