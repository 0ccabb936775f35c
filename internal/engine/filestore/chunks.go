// Package filestore holds what the embedded engines keep in plain files: the
// chunk store (one file per chunk) and the lock that keeps a data directory
// to one process.
package filestore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lazuli-storage/lazuli/storage"
)

// ChunkStore keeps one file per chunk under <Dir>/chunks/. A chunk's
// reference is 32 lowercase hex digits, 30 of them random (see newRef);
// the file lives at chunks/<first two digits>/<reference>. Put streams the
// body straight into that file: a reference is fresh and no one holds it
// before Put returns, so nobody reads a chunk while it is written. A crash leaves the chunk
// of an interrupted Put unreferenced, and the garbage collector removes
// it like any other. The file's modification time is the chunk's write
// time.
//
// Writing in place rather than into a temporary file renamed afterwards
// spares a durable Put a second metadata commit: with sync, the file's
// fsync commits its creation too, and the fsync of its directory finds
// that already done. (16 concurrent 64 MiB uploads: see the commit that
// made it so.)
type ChunkStore struct {
	fs     FS
	dir    string
	sync   bool
	closed *atomic.Bool
	bufs   sync.Pool // *[]byte copy buffers of copyBufSize
	dirs   [fanOut]dirSync
	// made counts the chunks made; firstDir is where the store began
	// (see newRef).
	made     atomic.Uint64
	firstDir uint64
}

const copyBufSize = 256 << 10

var _ storage.ChunkStore = (*ChunkStore)(nil)

const refLen = 32

// fanOut is the number of directories chunks are spread over, named by
// the first two digits of their references.
const fanOut = 256

// OpenChunkStore opens the chunk store rooted at dir. With sync set, every
// chunk is fsynced with its directory before Put returns. Once closed (which
// may be the owning engine's flag) is set, every call fails with
// storage.ErrClosed; nil gives the store a flag of its own.
func OpenChunkStore(dir string, sync bool, closed *atomic.Bool) (*ChunkStore, error) {
	return OpenChunkStoreFS(OS, dir, sync, closed)
}

// OpenChunkStoreFS is OpenChunkStore on the file system fsys.
func OpenChunkStoreFS(fsys FS, dir string, sync bool, closed *atomic.Bool) (*ChunkStore, error) {
	// Every fan-out directory exists from the start, so that a Put never
	// creates one: its directory's entry is durable before any chunk
	// lands in it.
	for i := range fanOut {
		if err := fsys.MkdirAll(filepath.Join(dir, fmt.Sprintf("%02x", i)), 0o755); err != nil {
			return nil, err
		}
	}
	if closed == nil {
		closed = new(atomic.Bool)
	}
	var b [1]byte
	rand.Read(b[:])
	c := &ChunkStore{fs: fsys, dir: dir, sync: sync, closed: closed, firstDir: uint64(b[0])}
	if sync {
		if err := fsys.SyncDir(dir); err != nil {
			return nil, err
		}
		if err := fsys.SyncDir(filepath.Dir(dir)); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// SyncDir fsyncs a directory, making the creation, renaming and removal of
// its entries durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

// path returns the file of ref, or false if ref is not a reference this
// store could have produced (which also rules out path tricks).
func (c *ChunkStore) path(ref storage.ChunkRef) (string, bool) {
	s := string(ref)
	if len(s) != refLen {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if (ch < '0' || ch > '9') && (ch < 'a' || ch > 'f') {
			return "", false
		}
	}
	return filepath.Join(c.dir, s[:2], s), true
}

// ctxReader stops a copy when the context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// Put implements storage.ChunkStore. The body is streamed to disk through a
// fixed-size buffer, never held whole in memory.
func (c *ChunkStore) Put(ctx context.Context, r io.Reader) (storage.ChunkRef, int64, error) {
	w, err := c.write(ctx, r)
	if err != nil {
		return "", 0, err
	}
	if err := c.finish(w); err != nil {
		return "", 0, err
	}
	return w.ref, w.n, nil
}

// PutDeferred implements storage.DeferredPutter: with sync, the chunk's
// fsync and its directory's run on their own goroutine, so that the
// caller writes its next chunk meanwhile. An 8 MiB SMB WRITE is two
// chunks: waiting for the first before writing the second left the disk
// idle while the second was copied.
func (c *ChunkStore) PutDeferred(ctx context.Context, r io.Reader) (storage.ChunkRef, int64, func() error, error) {
	w, err := c.write(ctx, r)
	if err != nil {
		return "", 0, nil, err
	}
	if !c.sync {
		if err := c.finish(w); err != nil {
			return "", 0, nil, err
		}
		return w.ref, w.n, func() error { return nil }, nil
	}
	done := make(chan error, 1)
	go func() { done <- c.finish(w) }()
	return w.ref, w.n, func() error { return <-done }, nil
}

// written is a chunk file written but not yet closed (nor, with sync,
// durable).
type written struct {
	f     File
	path  string
	ref   storage.ChunkRef
	n     int64
	dir   *dirSync
	entry uint64 // the file's creation in dir (dirSync.add)
}

// newRef returns a fresh reference. Its first byte, which names its
// directory, is not random: the store fills one directory with dirRun
// chunks before it moves to the next, so that the chunks written at about
// the same time share a directory, and one fsync of it (dirSync) makes
// the creation of all of them durable. Every directory still gets its
// share over time, and the other 15 bytes are random.
func (c *ChunkStore) newRef() storage.ChunkRef {
	var id [refLen / 2]byte
	rand.Read(id[:])
	id[0] = byte(c.firstDir + c.made.Add(1)/dirRun)
	return storage.ChunkRef(hex.EncodeToString(id[:]))
}

const dirRun = 64

// write creates a chunk file and streams r into it.
func (c *ChunkStore) write(ctx context.Context, r io.Reader) (written, error) {
	if c.closed.Load() {
		return written{}, storage.ErrClosed
	}
	ref := c.newRef()
	final, _ := c.path(ref)
	f, err := c.fs.OpenFile(final, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return written{}, err
	}
	d := &c.dirs[dirIndex(ref)]
	w := written{f: f, path: final, ref: ref, dir: d, entry: d.add()}
	// writeback also hides the file's ReaderFrom, so that a copy goes
	// through the fixed buffer.
	dst := &writeback{f: f, hint: c.sync}
	if wt, ok := r.(io.WriterTo); ok {
		// Bytes in memory (a bytes.Reader) go to the file as they are,
		// not through the buffer.
		if err = ctx.Err(); err == nil {
			w.n, err = wt.WriteTo(dst)
		}
	} else {
		bp, _ := c.bufs.Get().(*[]byte)
		if bp == nil {
			b := make([]byte, copyBufSize)
			bp = &b
		}
		w.n, err = io.CopyBuffer(dst, ctxReader{ctx, r}, *bp)
		c.bufs.Put(bp)
	}
	if err != nil {
		f.Close()
		c.fs.Remove(final)
		return written{}, err
	}
	return w, nil
}

// finish closes a written chunk file, with sync once the file and its
// directory entry are durable. On failure the file is removed.
func (c *ChunkStore) finish(w written) error {
	if c.sync {
		if err := w.f.Sync(); err != nil {
			w.f.Close()
			c.fs.Remove(w.path)
			return err
		}
	}
	if err := w.f.Close(); err != nil {
		c.fs.Remove(w.path)
		return err
	}
	if c.sync {
		if err := w.dir.sync(c.fs, filepath.Dir(w.path), w.entry); err != nil {
			c.fs.Remove(w.path)
			return err
		}
	}
	return nil
}

// dirIndex is the fan-out directory of a valid reference.
func dirIndex(ref storage.ChunkRef) int {
	b, _ := hex.DecodeString(string(ref[:2]))
	return int(b[0])
}

// dirSync is the group commit of one fan-out directory's fsyncs: an fsync
// makes durable every change to the directory made before it started, so
// the chunks created or deleted while one runs share the next one rather
// than each waiting for its own.
type dirSync struct {
	mu      sync.Mutex
	changes uint64        // changes made so far, numbered from 1
	synced  uint64        // changes up to this one are durable
	running chan struct{} // closed when the running fsync ends; nil: none runs
}

// add numbers a change just made to the directory, for sync.
func (d *dirSync) add() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.changes++
	return d.changes
}

// sync returns once change is durable: once an fsync of dir that started
// after the change has ended. A failed fsync fails the caller that ran
// it; the others it would have served try one of their own.
func (d *dirSync) sync(fsys FS, dir string, change uint64) error {
	d.mu.Lock()
	for d.synced < change {
		if ch := d.running; ch != nil {
			// It may have started before the change: wait and look again.
			d.mu.Unlock()
			<-ch
			d.mu.Lock()
			continue
		}
		upTo := d.changes
		ch := make(chan struct{})
		d.running = ch
		d.mu.Unlock()
		err := fsys.SyncDir(dir)
		d.mu.Lock()
		d.running = nil
		close(ch)
		if err != nil {
			d.mu.Unlock()
			return err
		}
		d.synced = max(d.synced, upTo)
	}
	d.mu.Unlock()
	return nil
}

// writeback writes to a chunk file in steps of at most a megabyte and,
// with hint (sync), has the kernel start writing every megabyte to disk
// as soon as it is written, so that the upload's bytes travel to the disk
// while the rest arrive and the final fsync finds little left to write.
// (Measured with 16 concurrent 64 MiB uploads of 4 MiB blocks: see the
// commit that added it.) The steps matter without sync too: one 8 MiB
// write(2) of an SMB WRITE's bytes cost a third more system CPU than the
// same bytes a megabyte at a time (BenchmarkBigPut without fsync).
type writeback struct {
	f         File
	hint      bool
	off, sent int64 // bytes written, bytes handed to Writeback
}

const writebackStep = 1 << 20

func (w *writeback) Write(p []byte) (int, error) {
	total := 0
	for len(p) > 0 {
		// A large write goes in steps, each handed to Writeback.
		step := p[:min(len(p), writebackStep)]
		n, err := w.f.Write(step)
		total += n
		w.off += int64(n)
		if w.hint && w.off-w.sent >= writebackStep {
			w.f.Writeback(w.sent, w.off-w.sent)
			w.sent = w.off
		}
		if err != nil {
			return total, err
		}
		p = p[n:]
	}
	return total, nil
}

// chunkReader reads a section of a chunk file.
type chunkReader struct {
	*io.SectionReader
	f      File
	off, n int64
}

func (r chunkReader) Close() error { return r.f.Close() }

// WriteTo implements io.WriterTo. A writer that takes a reader (a TCP
// connection, whose ReadFrom uses sendfile(2); a buffer reading straight
// into its memory) gets the file positioned at the section, so that the
// bytes do not pass through an intermediate buffer.
func (r chunkReader) WriteTo(w io.Writer) (int64, error) {
	rf, ok := w.(io.ReaderFrom)
	sk, seekable := r.f.(io.Seeker)
	if !ok || !seekable {
		return io.Copy(w, r.SectionReader)
	}
	if _, err := sk.Seek(r.off, io.SeekStart); err != nil {
		return 0, err
	}
	return rf.ReadFrom(&io.LimitedReader{R: r.f, N: r.n})
}

// Open implements storage.ChunkStore. An offset past the end yields an
// empty reader.
func (c *ChunkStore) Open(ctx context.Context, ref storage.ChunkRef, off, n int64) (io.ReadCloser, error) {
	if c.closed.Load() {
		return nil, storage.ErrClosed
	}
	if off < 0 {
		return nil, fmt.Errorf("filestore: negative chunk offset %d", off)
	}
	p, ok := c.path(ref)
	if !ok {
		return nil, storage.ErrNotFound
	}
	f, err := c.fs.OpenFile(p, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, storage.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	size := st.Size()
	off = min(off, size)
	if n < 0 || n > size-off {
		n = size - off
	}
	return chunkReader{io.NewSectionReader(f, off, n), f, off, n}, nil
}

// Delete implements storage.ChunkStore.
func (c *ChunkStore) Delete(ctx context.Context, refs []storage.ChunkRef) error {
	if c.closed.Load() {
		return storage.ErrClosed
	}
	changes := map[int]uint64{} // directory -> its last change here
	for _, ref := range refs {
		p, ok := c.path(ref)
		if !ok {
			continue
		}
		if err := c.fs.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		i := dirIndex(ref)
		changes[i] = c.dirs[i].add()
	}
	if c.sync {
		for i, change := range changes {
			if err := c.dirs[i].sync(c.fs, filepath.Join(c.dir, fmt.Sprintf("%02x", i)), change); err != nil {
				return err
			}
		}
	}
	return nil
}

// Walk implements storage.ChunkStore. Chunks written or deleted while Walk
// runs may or may not be reported.
func (c *ChunkStore) Walk(ctx context.Context, fn func(ref storage.ChunkRef, written time.Time) error) error {
	if c.closed.Load() {
		return storage.ErrClosed
	}
	for i := range fanOut {
		if err := ctx.Err(); err != nil {
			return err
		}
		entries, err := c.fs.ReadDir(filepath.Join(c.dir, fmt.Sprintf("%02x", i)))
		if err != nil {
			return err
		}
		for _, e := range entries {
			ref := storage.ChunkRef(e.Name())
			if _, ok := c.path(ref); !ok || !e.Type().IsRegular() {
				continue
			}
			info, err := e.Info()
			if errors.Is(err, fs.ErrNotExist) {
				continue // deleted meanwhile
			}
			if err != nil {
				return err
			}
			if err := fn(ref, info.ModTime()); err != nil {
				return err
			}
		}
	}
	return nil
}
