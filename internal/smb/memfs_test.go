package smb

import (
	"bytes"
	"context"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// memFS is a small in-memory Backend for exercising the protocol layer
// with real clients; the File service is the real Backend.
type memFS struct {
	mu     sync.Mutex
	shares map[string]*memNode
	nextID uint64
	// renameGate, when set, holds renames until closed, as if they
	// waited for cache breaks.
	renameGate chan struct{}
}

type memNode struct {
	name          string
	dir           bool
	data          []byte
	children      map[string]*memNode
	parent        *memNode
	id            uint64
	attrs         uint32
	times         [4]time.Time
	opens         []*memHandle
	deletePending bool
	locks         []memLock
	sddl          string
}

type memLock struct {
	h      *memHandle
	off, n uint64
	excl   bool
}

type memHandle struct {
	fs         *memFS
	n          *memNode
	id         uint64
	access     uint32
	share      uint32
	action     uint32
	closed     bool
	delOnClose bool
}

func newMemFS(shares ...string) *memFS {
	fs := &memFS{shares: map[string]*memNode{}}
	for _, s := range shares {
		fs.shares[s] = fs.node(s, true, nil)
	}
	return fs
}

func (fs *memFS) node(name string, dir bool, parent *memNode) *memNode {
	fs.nextID++
	now := time.Now()
	n := &memNode{name: name, dir: dir, parent: parent, id: fs.nextID, times: [4]time.Time{now, now, now, now}}
	if dir {
		n.children = map[string]*memNode{}
	} else {
		n.attrs = AttrArchive
	}
	return n
}

func (fs *memFS) Shares(ctx context.Context, account string) ([]string, error) {
	var out []string
	for s := range fs.shares {
		out = append(out, s)
	}
	return out, nil
}

func (fs *memFS) ShareExists(ctx context.Context, account, share string) error {
	if fs.shares[share] == nil {
		return ErrShareNotFound
	}
	return nil
}

// ShareSize reports every share as 1 TiB with 1 MiB used.
func (fs *memFS) ShareSize(ctx context.Context, account, share string) (int64, int64, error) {
	if fs.shares[share] == nil {
		return 0, 0, ErrShareNotFound
	}
	return 1 << 40, 1 << 20, nil
}

func (fs *memFS) lookup(share, path string) (parent, n *memNode, name string, err error) {
	cur := fs.shares[share]
	if cur == nil {
		return nil, nil, "", ErrShareNotFound
	}
	if path == "" {
		return nil, cur, "", nil
	}
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if !cur.dir {
			return nil, nil, "", ErrPathNotFound
		}
		next := cur.children[strings.ToLower(p)]
		if i == len(parts)-1 {
			return cur, next, p, nil
		}
		if next == nil || !next.dir {
			return nil, nil, "", ErrPathNotFound
		}
		cur = next
	}
	return nil, nil, "", ErrPathNotFound
}

func rel(a uint32) (r, w, d bool) {
	return a&(FileReadData|FileExecute) != 0, a&(FileWriteData|FileAppendData) != 0, a&Delete != 0
}

func (fs *memFS) Open(ctx context.Context, req *OpenRequest) (Handle, Stat, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	parent, n, name, err := fs.lookup(req.Share, req.Path)
	if err != nil {
		return nil, Stat{}, err
	}
	h := &memHandle{fs: fs, access: req.DesiredAccess, share: req.ShareAccess, action: FileOpened}
	wantDir := req.CreateOptions&FileDirectoryFile != 0
	if n == nil {
		if req.Disposition == FileOpen || req.Disposition == FileOverwrite {
			return nil, Stat{}, ErrNotFound
		}
		n = fs.node(name, wantDir, parent)
		if req.Attributes != 0 {
			n.attrs = req.Attributes &^ AttrDirectory
		}
		parent.children[strings.ToLower(name)] = n
		h.action = FileCreated
	} else {
		if n.deletePending {
			return nil, Stat{}, ErrDeletePending
		}
		if wantDir && !n.dir {
			return nil, Stat{}, ErrNotDirectory
		}
		if req.CreateOptions&FileNonDirectoryFile != 0 && n.dir {
			return nil, Stat{}, ErrIsDirectory
		}
		if err := shareCheck(n, req.DesiredAccess, req.ShareAccess); err != nil {
			return nil, Stat{}, err
		}
		switch req.Disposition {
		case FileCreate:
			return nil, Stat{}, ErrExists
		case FileSupersede, FileOverwrite, FileOverwriteIf:
			if n.dir {
				return nil, Stat{}, ErrInvalidParameter
			}
			n.data = nil
			h.action = FileOverwritten
			if req.Disposition == FileSupersede {
				h.action = FileSuperseded
			}
		}
	}
	h.n = n
	h.delOnClose = req.CreateOptions&FileDeleteOnClose != 0
	fs.nextID++
	h.id = fs.nextID
	n.opens = append(n.opens, h)
	return h, n.stat(), nil
}

// shareCheck is NT's share-access check.
func shareCheck(n *memNode, access, share uint32) error {
	r, w, d := rel(access)
	if !r && !w && !d {
		return nil
	}
	for _, e := range n.opens {
		er, ew, ed := rel(e.access)
		if !er && !ew && !ed {
			continue
		}
		if r && e.share&FileShareRead == 0 || w && e.share&FileShareWrite == 0 || d && e.share&FileShareDelete == 0 ||
			er && share&FileShareRead == 0 || ew && share&FileShareWrite == 0 || ed && share&FileShareDelete == 0 {
			return ErrSharingViolation
		}
	}
	return nil
}

func (h *memHandle) ID() uint64     { return h.id }
func (h *memHandle) Action() uint32 { return h.action }

func (h *memHandle) Stat(ctx context.Context) (Stat, error) {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if h.closed {
		return Stat{}, ErrFileClosed
	}
	return h.n.stat(), nil
}

func (n *memNode) stat() Stat {
	st := Stat{Name: n.name, IsDir: n.dir, Size: int64(len(n.data)), FileID: n.id, Attributes: n.attrs,
		Creation: n.times[0], LastAccess: n.times[1], LastWrite: n.times[2], Change: n.times[3], DeletePending: n.deletePending}
	if n.parent != nil {
		st.ParentID = n.parent.id
	}
	return st
}

func overlap(a, b memLock) bool {
	if a.n == 0 || b.n == 0 {
		return false
	}
	return a.off < b.off+b.n && b.off < a.off+a.n
}

func (h *memHandle) conflict(off, n uint64, write bool) bool {
	for _, l := range h.n.locks {
		if l.h != h && overlap(l, memLock{off: off, n: n}) && (write || l.excl) {
			return true
		}
	}
	return false
}

func (h *memHandle) ReadAt(ctx context.Context, off, n int64) (int64, io.WriterTo, error) {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if h.closed {
		return 0, nil, ErrFileClosed
	}
	if h.conflict(uint64(off), uint64(n), false) {
		return 0, nil, ErrLockConflict
	}
	if off >= int64(len(h.n.data)) {
		return 0, bytes.NewReader(nil), nil
	}
	data := bytes.Clone(h.n.data[off:min(off+n, int64(len(h.n.data)))])
	return int64(len(data)), bytes.NewReader(data), nil
}

func (h *memHandle) WriteAt(ctx context.Context, p []byte, off int64) error {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if h.closed {
		return ErrFileClosed
	}
	if h.conflict(uint64(off), uint64(len(p)), true) {
		return ErrLockConflict
	}
	if end := int(off) + len(p); end > len(h.n.data) {
		h.n.data = append(h.n.data, make([]byte, end-len(h.n.data))...)
	}
	copy(h.n.data[off:], p)
	h.n.times[2] = time.Now()
	return nil
}

func (h *memHandle) Truncate(ctx context.Context, size int64) error {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if h.closed {
		return ErrFileClosed
	}
	if int(size) <= len(h.n.data) {
		h.n.data = h.n.data[:size]
	} else {
		h.n.data = append(h.n.data, make([]byte, int(size)-len(h.n.data))...)
	}
	return nil
}

func (h *memHandle) SetBasic(ctx context.Context, b SetBasic) error {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	for i, t := range []time.Time{b.Creation, b.LastAccess, b.LastWrite, b.Change} {
		if !t.IsZero() {
			h.n.times[i] = t
		}
	}
	if b.Attributes != 0 {
		h.n.attrs = b.Attributes &^ (AttrDirectory | AttrNormal)
	}
	return nil
}

func (h *memHandle) SetDeletePending(ctx context.Context, pending bool) error {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if pending && h.n.dir && len(h.n.children) > 0 {
		return ErrNotEmpty
	}
	if h.n.parent == nil {
		return ErrCannotDelete
	}
	h.n.deletePending = pending
	return nil
}

func (h *memHandle) Rename(ctx context.Context, newPath string, replace bool) error {
	if h.fs.renameGate != nil {
		if w := Waiting(ctx); w != nil {
			w()
		}
		<-h.fs.renameGate
	}
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	var share string
	for s, root := range h.fs.shares {
		for p := h.n; p != nil; p = p.parent {
			if p == root {
				share = s
			}
		}
	}
	parent, target, name, err := h.fs.lookup(share, newPath)
	if err != nil {
		return err
	}
	if parent == nil {
		return ErrPathNotFound
	}
	if target != nil && target != h.n {
		if !replace {
			return ErrExists
		}
		if target.dir || len(target.opens) > 0 {
			return ErrAccessDenied
		}
	}
	delete(h.n.parent.children, strings.ToLower(h.n.name))
	h.n.name, h.n.parent = name, parent
	parent.children[strings.ToLower(name)] = h.n
	return nil
}

func (h *memHandle) Lock(ctx context.Context, off, n uint64, exclusive bool) error {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if h.closed {
		return ErrFileClosed
	}
	l := memLock{h: h, off: off, n: n, excl: exclusive}
	for _, e := range h.n.locks {
		if overlap(e, l) && (e.excl || exclusive) {
			return ErrLockConflict
		}
	}
	h.n.locks = append(h.n.locks, l)
	return nil
}

func (h *memHandle) Unlock(ctx context.Context, off, n uint64) error {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	for i, l := range h.n.locks {
		if l.h == h && l.off == off && l.n == n {
			h.n.locks = append(h.n.locks[:i], h.n.locks[i+1:]...)
			return nil
		}
	}
	return ErrRangeNotLocked
}

func (h *memHandle) ReadDir(ctx context.Context, after string, max int) ([]Stat, error) {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	var out []Stat
	for _, c := range h.n.children {
		if st := c.stat(); after == "" || st.Name > after {
			out = append(out, st)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) > max {
		out = out[:max]
	}
	return out, nil
}

func (h *memHandle) SDDL(ctx context.Context) (string, error) {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	return h.n.sddl, nil
}

func (h *memHandle) SetSDDL(ctx context.Context, sddl string) error {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	h.n.sddl = sddl
	return nil
}

func (h *memHandle) Close(ctx context.Context) error {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if h.closed {
		return ErrFileClosed
	}
	h.closed = true
	n := h.n
	for i, o := range n.opens {
		if o == h {
			n.opens = append(n.opens[:i], n.opens[i+1:]...)
			break
		}
	}
	locks := n.locks[:0]
	for _, l := range n.locks {
		if l.h != h {
			locks = append(locks, l)
		}
	}
	n.locks = locks
	if h.delOnClose && !(n.dir && len(n.children) > 0) {
		n.deletePending = true
	}
	if n.deletePending && len(n.opens) == 0 && n.parent != nil {
		delete(n.parent.children, strings.ToLower(n.name))
	}
	return nil
}
