package storagetest

import (
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/filestore"
)

// PowerFS is an in-memory filestore.FS that can lose power. It keeps, for
// every file, what is on stable storage (as of its last Sync) apart from
// the writes made since, and for every directory the entries on stable
// storage (as of its last SyncDir) apart from those created, renamed or
// removed since. Cut returns the image a power cut leaves: each write
// made since the file's last Sync is kept, dropped or torn (a prefix of
// it kept) at random, in any combination, and each directory change made
// since the directory's last SyncDir is kept or lost at random. From the
// cut on, every call on the old PowerFS and its open files fails.
type PowerFS struct {
	mu      sync.Mutex
	cur     map[string]*pnode // path -> file or directory, as the running system sees it
	durable map[string]*pnode // path -> entry on stable storage
	dead    bool
}

// pnode is a file (or, with dir set, a directory).
type pnode struct {
	dir     bool
	data    []byte   // as the running system sees it
	stable  []byte   // on stable storage
	pending []pwrite // changes since the last Sync, in order
	mtime   time.Time
}

// pwrite is a write of data at off, or (data nil) a truncation to off.
type pwrite struct {
	off  int64
	data []byte
}

var errPowerCut = errors.New("storagetest: the power is off")

// NewPowerFS returns an empty PowerFS holding the root directory "/".
func NewPowerFS() *PowerFS {
	root := &pnode{dir: true}
	return &PowerFS{cur: map[string]*pnode{"/": root}, durable: map[string]*pnode{"/": root}}
}

var _ filestore.FS = (*PowerFS)(nil)

func clean(name string) string { return filepath.Clean("/" + filepath.ToSlash(name)) }

// Cut turns the power off and returns what the disk holds afterwards, as
// a PowerFS with the power back on. rng chooses the fate of every change
// not yet on stable storage.
func (p *PowerFS) Cut(rng *rand.Rand) *PowerFS {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dead = true
	// The namespace: stable entries, each unstable change kept or lost.
	names := map[string]*pnode{}
	for name, n := range p.durable {
		names[name] = n
	}
	for name, n := range p.cur {
		if p.durable[name] != n && rng.IntN(2) == 0 {
			names[name] = n
		}
	}
	for name, n := range p.durable {
		if _, ok := p.cur[name]; !ok && rng.IntN(2) == 0 {
			delete(names, name)
		}
		_ = n
	}
	// An entry whose directory did not survive is gone with it.
	for name := range names {
		for d := filepath.Dir(name); d != "/"; d = filepath.Dir(d) {
			if n, ok := names[d]; !ok || !n.dir {
				delete(names, name)
				break
			}
		}
	}
	// The contents: stable bytes, each later change kept, dropped or torn.
	after := map[*pnode]*pnode{}
	out := &PowerFS{cur: map[string]*pnode{}, durable: map[string]*pnode{}}
	for name, n := range names {
		m, ok := after[n]
		if !ok {
			m = &pnode{dir: n.dir, mtime: n.mtime, data: slices.Clone(n.stable)}
			for _, w := range n.pending {
				if w.data == nil {
					if rng.IntN(2) == 0 {
						m.data = resize(m.data, w.off)
					}
					continue
				}
				switch rng.IntN(3) {
				case 0: // dropped
				case 1:
					m.data = writeAt(m.data, w.off, w.data)
				case 2:
					m.data = writeAt(m.data, w.off, w.data[:rng.IntN(len(w.data)+1)])
				}
			}
			m.stable = slices.Clone(m.data)
			after[n] = m
		}
		out.cur[name] = m
		out.durable[name] = m
	}
	return out
}

func resize(b []byte, n int64) []byte {
	if int64(len(b)) >= n {
		return b[:n]
	}
	return append(b, make([]byte, n-int64(len(b)))...)
}

func writeAt(b []byte, off int64, data []byte) []byte {
	if end := off + int64(len(data)); int64(len(b)) < end {
		b = resize(b, end)
	}
	copy(b[off:], data)
	return b
}

func pathErr(op, name string, err error) error { return &fs.PathError{Op: op, Path: name, Err: err} }

// parentDir reports whether the parent directory of name exists (under mu).
func (p *PowerFS) parentDir(name string) bool {
	d, ok := p.cur[filepath.Dir(name)]
	return ok && d.dir
}

// OpenFile implements filestore.FS.
func (p *PowerFS) OpenFile(name string, flag int, perm fs.FileMode) (filestore.File, error) {
	name = clean(name)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return nil, pathErr("open", name, errPowerCut)
	}
	n, ok := p.cur[name]
	switch {
	case ok && n.dir:
		return nil, pathErr("open", name, errors.New("is a directory"))
	case ok && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, pathErr("open", name, fs.ErrExist)
	case !ok && flag&os.O_CREATE == 0:
		return nil, pathErr("open", name, fs.ErrNotExist)
	case !ok:
		if !p.parentDir(name) {
			return nil, pathErr("open", name, fs.ErrNotExist)
		}
		n = &pnode{mtime: time.Now()}
		p.cur[name] = n
	}
	if flag&os.O_TRUNC != 0 && len(n.data) > 0 {
		n.data = n.data[:0]
		n.pending = append(n.pending, pwrite{off: 0})
	}
	return &powerFile{fs: p, n: n, name: name, appending: flag&os.O_APPEND != 0}, nil
}

// Rename implements filestore.FS (files only).
func (p *PowerFS) Rename(oldname, newname string) error {
	oldname, newname = clean(oldname), clean(newname)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return pathErr("rename", oldname, errPowerCut)
	}
	n, ok := p.cur[oldname]
	if !ok || !p.parentDir(newname) {
		return pathErr("rename", oldname, fs.ErrNotExist)
	}
	if n.dir {
		return pathErr("rename", oldname, errors.New("renaming directories is not simulated"))
	}
	delete(p.cur, oldname)
	p.cur[newname] = n
	return nil
}

// Remove implements filestore.FS.
func (p *PowerFS) Remove(name string) error {
	name = clean(name)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return pathErr("remove", name, errPowerCut)
	}
	n, ok := p.cur[name]
	if !ok {
		return pathErr("remove", name, fs.ErrNotExist)
	}
	if n.dir && len(p.children(name)) > 0 {
		return pathErr("remove", name, errors.New("directory not empty"))
	}
	delete(p.cur, name)
	return nil
}

// children lists the names directly inside dir (under mu).
func (p *PowerFS) children(dir string) []string {
	var out []string
	for name := range p.cur {
		if name != "/" && filepath.Dir(name) == dir {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// RemoveAll implements filestore.FS.
func (p *PowerFS) RemoveAll(name string) error {
	name = clean(name)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return pathErr("removeall", name, errPowerCut)
	}
	for n := range p.cur {
		if n == name || strings.HasPrefix(n, name+"/") {
			delete(p.cur, n)
		}
	}
	return nil
}

// MkdirAll implements filestore.FS.
func (p *PowerFS) MkdirAll(name string, perm fs.FileMode) error {
	name = clean(name)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return pathErr("mkdir", name, errPowerCut)
	}
	var todo []string
	for d := name; ; d = filepath.Dir(d) {
		if n, ok := p.cur[d]; ok {
			if !n.dir {
				return pathErr("mkdir", d, errors.New("not a directory"))
			}
			break
		}
		todo = append(todo, d)
	}
	for _, d := range todo {
		p.cur[d] = &pnode{dir: true, mtime: time.Now()}
	}
	return nil
}

// ReadDir implements filestore.FS.
func (p *PowerFS) ReadDir(name string) ([]fs.DirEntry, error) {
	name = clean(name)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return nil, pathErr("readdir", name, errPowerCut)
	}
	if n, ok := p.cur[name]; !ok || !n.dir {
		return nil, pathErr("readdir", name, fs.ErrNotExist)
	}
	var out []fs.DirEntry
	for _, c := range p.children(name) {
		out = append(out, fs.FileInfoToDirEntry(p.info(c, p.cur[c])))
	}
	return out, nil
}

func (p *PowerFS) info(name string, n *pnode) powerInfo {
	return powerInfo{name: filepath.Base(name), size: int64(len(n.data)), dir: n.dir, mtime: n.mtime}
}

// Stat implements filestore.FS.
func (p *PowerFS) Stat(name string) (fs.FileInfo, error) {
	name = clean(name)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return nil, pathErr("stat", name, errPowerCut)
	}
	n, ok := p.cur[name]
	if !ok {
		return nil, pathErr("stat", name, fs.ErrNotExist)
	}
	return p.info(name, n), nil
}

// SyncDir implements filestore.FS: the entries of dir, as they are now,
// are on stable storage.
func (p *PowerFS) SyncDir(name string) error {
	name = clean(name)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return pathErr("syncdir", name, errPowerCut)
	}
	if n, ok := p.cur[name]; !ok || !n.dir {
		return pathErr("syncdir", name, fs.ErrNotExist)
	}
	for d := range p.durable {
		if d != "/" && filepath.Dir(d) == name {
			delete(p.durable, d)
		}
	}
	for _, c := range p.children(name) {
		p.durable[c] = p.cur[c]
	}
	return nil
}

// Lock implements filestore.FS; one process is simulated, so it does
// nothing.
func (p *PowerFS) Lock(name string) (func() error, error) {
	return func() error { return nil }, nil
}

type powerInfo struct {
	name  string
	size  int64
	dir   bool
	mtime time.Time
}

func (i powerInfo) Name() string       { return i.name }
func (i powerInfo) Size() int64        { return i.size }
func (i powerInfo) ModTime() time.Time { return i.mtime }
func (i powerInfo) IsDir() bool        { return i.dir }
func (i powerInfo) Sys() any           { return nil }
func (i powerInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}

// powerFile is an open file of a PowerFS.
type powerFile struct {
	fs        *PowerFS
	n         *pnode
	name      string
	off       int64
	appending bool
}

func (f *powerFile) Read(b []byte) (int, error) {
	n, err := f.ReadAt(b, f.off)
	f.off += int64(n)
	return n, err
}

func (f *powerFile) ReadAt(b []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.fs.dead {
		return 0, pathErr("read", f.name, errPowerCut)
	}
	if off >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(b, f.n.data[off:])
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

func (f *powerFile) Write(b []byte) (int, error) {
	off := f.off
	if f.appending {
		off = -1
	}
	n, err := f.write(b, off)
	f.off += int64(n)
	return n, err
}

func (f *powerFile) WriteAt(b []byte, off int64) (int, error) { return f.write(b, off) }

// write writes b at off (at the end when off < 0) and moves f.off there
// when appending.
func (f *powerFile) write(b []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.fs.dead {
		return 0, pathErr("write", f.name, errPowerCut)
	}
	if off < 0 {
		off = int64(len(f.n.data))
		f.off = off
	}
	f.n.data = writeAt(f.n.data, off, b)
	f.n.pending = append(f.n.pending, pwrite{off: off, data: slices.Clone(b)})
	f.n.mtime = time.Now()
	return len(b), nil
}

func (f *powerFile) Stat() (fs.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.fs.dead {
		return nil, pathErr("stat", f.name, errPowerCut)
	}
	return f.fs.info(f.name, f.n), nil
}

func (f *powerFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.fs.dead {
		return pathErr("truncate", f.name, errPowerCut)
	}
	f.n.data = resize(f.n.data, size)
	f.n.pending = append(f.n.pending, pwrite{off: size})
	return nil
}

// Sync puts the file's data on stable storage.
func (f *powerFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.fs.dead {
		return pathErr("sync", f.name, errPowerCut)
	}
	f.n.stable = slices.Clone(f.n.data)
	f.n.pending = nil
	return nil
}

// Writeback does nothing: only Sync makes data stable.
func (f *powerFile) Writeback(off, n int64) {}

func (f *powerFile) Close() error { return nil }
