package memstore

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/btree"

	"github.com/lazuli-storage/lazuli/storage/filestore"
)

// Layout of a durable store's directory.
const (
	LogDir   = "log"         // the write-ahead log and its snapshots
	ChunkDir = "chunks"      // one file per chunk (filestore.ChunkStore)
	LockFile = "lazuli.lock" // flocked while a process has the directory open
)

// DefaultCompactBytes is the log size from which a durable store compacts
// its log, unless Options says otherwise.
const DefaultCompactBytes = 64 << 20

// Options configures a durable store.
type Options struct {
	// Dir is the data directory; it is created if need be.
	Dir string
	// Sync makes every Update fsync the log before it returns, sharing
	// the fsync with the Updates that wait at the same time. Without it
	// an Update returns once its record is written to the log file: it
	// survives the process being killed, but not the machine losing
	// power.
	Sync bool
	// CompactBytes is the log size from which the log is compacted, once
	// it also holds more than twice the bytes of the live data
	// (DefaultCompactBytes when zero).
	CompactBytes int64
	// Log receives a line when a background compaction fails.
	Log *slog.Logger
}

// Open opens the durable store in opts.Dir, creating it if need be.
//
// The directory holds log/ with numbered log files (<gen>.log) and
// snapshots (<gen>.snap), chunks/ and lazuli.lock. Every Update that
// writes appends one record to the newest log: its writes, with their
// length and CRC-32C. Once the log has grown past Options.CompactBytes and
// more than twice the live data, a new log is started and a snapshot of
// the whole store as of that moment is written beside it in the
// background; the older files are removed once the snapshot is on disk.
// Open loads the newest snapshot and replays the logs from the same
// generation on, in order. The first damaged or unfinished record (what a
// crash leaves behind) ends the replay: it and everything after it are
// cut off, so the store is as it was at some moment, never a mix. Damage
// in a snapshot fails Open.
//
// Every key and value lives in memory, so the data must fit in memory.
func Open(opts Options) (*Store, error) {
	if opts.CompactBytes <= 0 {
		opts.CompactBytes = DefaultCompactBytes
	}
	if err := os.MkdirAll(filepath.Join(opts.Dir, LogDir), 0o755); err != nil {
		return nil, err
	}
	unlock, err := filestore.LockDir(filepath.Join(opts.Dir, LockFile))
	if err != nil {
		return nil, err
	}
	s := &Store{tree: btree.NewG(32, less)}
	ok := false
	defer func() {
		if !ok {
			unlock()
		}
	}()
	s.chunks, err = filestore.OpenChunkStore(filepath.Join(opts.Dir, ChunkDir), opts.Sync, &s.closed)
	if err != nil {
		return nil, err
	}
	w := &wal{dir: filepath.Join(opts.Dir, LogDir), sync: opts.Sync, compactAt: opts.CompactBytes,
		logger: opts.Log, unlock: unlock}
	if err := w.recover(s.tree); err != nil {
		return nil, err
	}
	s.log = w
	s.pub.Store(s.tree.Clone())
	ok = true
	return s, nil
}

// logOp is one write of an Update: a Set of k to v, or a Delete of k.
type logOp struct {
	k, v []byte
	del  bool
}

// Record ops.
const (
	opSet    = 1
	opDelete = 2
)

// headerLen is a record's header: the payload's length and its CRC-32C,
// both little-endian uint32.
const headerLen = 8

// maxRecord bounds a record's payload; a larger length is damage.
const maxRecord = 1 << 30

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// itemSize is what an item counts toward the live data.
func itemSize(it item) int64 { return int64(len(it.k)+len(it.v)) + 32 }

// wal is a durable store's log. Its fields are guarded by the store's mu,
// except where noted.
type wal struct {
	dir       string
	sync      bool
	compactAt int64
	logger    *slog.Logger
	unlock    func() error

	f      *os.File // the newest log, opened for appending
	gen    uint64   // its generation
	size   int64    // its length
	seq    uint64   // records appended since Open
	live   int64    // bytes of live data (itemSize of every item)
	buf    []byte   // encoding buffer
	broken error    // a failure that stops every later Update

	compacting bool
	closing    bool
	done       chan struct{} // closed when the running compaction ends

	// syncMu serializes fsyncs and log rotation; it is taken before mu.
	syncMu  sync.Mutex
	synced  uint64 // records known to be on disk (under syncMu)
	syncErr error  // the fsync failure, if any (under syncMu)
}

// appendRecord encodes ops as one record after b.
func appendRecord(b []byte, ops []logOp) []byte {
	start := len(b)
	b = append(b, make([]byte, headerLen)...)
	for _, op := range ops {
		if op.del {
			b = append(b, opDelete)
			b = binary.AppendUvarint(b, uint64(len(op.k)))
			b = append(b, op.k...)
			continue
		}
		b = append(b, opSet)
		b = binary.AppendUvarint(b, uint64(len(op.k)))
		b = append(b, op.k...)
		b = binary.AppendUvarint(b, uint64(len(op.v)))
		b = append(b, op.v...)
	}
	payload := b[start+headerLen:]
	binary.LittleEndian.PutUint32(b[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(payload, castagnoli))
	return b
}

// append writes one record holding ops and returns its sequence number.
// live is the change in live bytes the writes make. On failure nothing of
// the record stays in the log, or the log is broken.
func (w *wal) append(ops []logOp, live int64) (uint64, error) {
	if len(ops) == 0 {
		return w.seq, nil
	}
	b := appendRecord(w.buf[:0], ops)
	if cap(b) <= 1<<20 {
		w.buf = b
	} else {
		w.buf = nil
	}
	n, err := w.f.Write(b)
	if err != nil {
		// Take back whatever part of the record reached the file, so
		// that the next record follows the last whole one.
		if terr := w.f.Truncate(w.size); terr != nil {
			w.broken = fmt.Errorf("memstore: log write failed (%v) and could not be undone: %w", err, terr)
		}
		return 0, fmt.Errorf("memstore: log write: %w", err)
	}
	w.size += int64(n)
	w.seq++
	w.live += live
	return w.seq, nil
}

// syncTo returns once record seq is on disk, then publishes the store's
// tree to Views. One caller fsyncs for everybody waiting.
func (w *wal) syncTo(s *Store, seq uint64) error {
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	if w.synced >= seq || w.syncErr != nil {
		return w.syncErr
	}
	s.mu.Lock()
	upto, f, tree := w.seq, w.f, s.tree.Clone()
	s.mu.Unlock()
	if err := f.Sync(); err != nil {
		// What the kernel failed to write is unknown: stop here.
		w.syncErr = fmt.Errorf("memstore: log fsync: %w", err)
		s.mu.Lock()
		w.broken = w.syncErr
		s.mu.Unlock()
		return w.syncErr
	}
	w.synced = upto
	s.pub.Store(tree)
	return nil
}

// maybeCompact starts a compaction in the background when the log is due
// for one. It runs under the store's mu.
func (w *wal) maybeCompact(s *Store) {
	if w.compacting || w.closing || w.size < w.compactAt || w.size <= 2*w.live {
		return
	}
	w.compacting = true
	w.done = make(chan struct{})
	go w.compact(s, w.done)
}

// compact starts a new log, writes a snapshot of the store as of that
// moment and removes the files the snapshot replaces.
func (w *wal) compact(s *Store, done chan struct{}) {
	defer close(done)
	err := w.rotateAndSnapshot(s)
	s.mu.Lock()
	w.compacting = false
	if err != nil {
		// Try again once the log has doubled.
		w.compactAt = max(w.compactAt, 2*w.size)
	}
	s.mu.Unlock()
	if err != nil && w.logger != nil {
		w.logger.Error("memstore: log compaction failed", "err", err)
	}
}

func (w *wal) rotateAndSnapshot(s *Store) error {
	w.syncMu.Lock()
	s.mu.Lock()
	old, gen := w.f, w.gen+1
	nf, err := createLog(w.dir, gen)
	if err == nil && w.sync {
		// Whoever waits for a record of the old log is served here.
		err = errors.Join(old.Sync(), filestore.SyncDir(w.dir))
	}
	if err != nil {
		if nf != nil {
			nf.Close()
			os.Remove(logPath(w.dir, gen))
		}
		s.mu.Unlock()
		w.syncMu.Unlock()
		return err
	}
	if w.sync {
		w.synced = w.seq
		s.pub.Store(s.tree.Clone())
	}
	snap := s.tree.Clone()
	w.f, w.gen, w.size = nf, gen, 0
	s.mu.Unlock()
	w.syncMu.Unlock()
	// Put the old log on disk now rather than leave it to the kernel:
	// after a power cut, recovery stops at its first missing record and
	// drops the newer log.
	if err := errors.Join(old.Sync(), old.Close()); err != nil {
		return err
	}
	if err := writeSnapshot(w.dir, gen, snap); err != nil {
		return err
	}
	return removeBefore(w.dir, gen)
}

// close ends the log: it waits for a running compaction, fsyncs when
// configured to and closes the file.
func (w *wal) close(s *Store) error {
	s.mu.Lock()
	w.closing = true
	done := w.done
	s.mu.Unlock()
	if done != nil {
		<-done
	}
	w.syncMu.Lock()
	s.mu.Lock()
	var errs []error
	if w.f != nil {
		if w.sync && w.syncErr == nil {
			errs = append(errs, w.f.Sync())
			w.synced = w.seq
			s.pub.Store(s.tree.Clone())
		}
		errs = append(errs, w.f.Close())
		w.f = nil
	}
	s.mu.Unlock()
	w.syncMu.Unlock()
	if w.unlock != nil {
		errs = append(errs, w.unlock())
		w.unlock = nil
	}
	return errors.Join(errs...)
}

func logPath(dir string, gen uint64) string { return filepath.Join(dir, fmt.Sprintf("%016x.log", gen)) }
func snapPath(dir string, gen uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%016x.snap", gen))
}

func createLog(dir string, gen uint64) (*os.File, error) {
	return os.OpenFile(logPath(dir, gen), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
}

// files lists the generations of the logs and snapshots in dir, in
// ascending order, removing unfinished snapshots.
func files(dir string) (logs, snaps []uint64, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasSuffix(name, ".tmp") {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return nil, nil, err
			}
			continue
		}
		base, ext, _ := strings.Cut(name, ".")
		gen, perr := strconv.ParseUint(base, 16, 64)
		if perr != nil || len(base) != 16 {
			continue
		}
		switch ext {
		case "log":
			logs = append(logs, gen)
		case "snap":
			snaps = append(snaps, gen)
		}
	}
	slices.Sort(logs)
	slices.Sort(snaps)
	return logs, snaps, nil
}

// removeBefore removes the logs and snapshots older than gen.
func removeBefore(dir string, gen uint64) error {
	logs, snaps, err := files(dir)
	if err != nil {
		return err
	}
	return removeOlder(dir, logs, snaps, gen)
}

// removeOlder removes those of the listed logs and snapshots that are
// older than gen.
func removeOlder(dir string, logs, snaps []uint64, gen uint64) error {
	var errs []error
	for _, g := range logs {
		if g < gen {
			errs = append(errs, os.Remove(logPath(dir, g)))
		}
	}
	for _, g := range snaps {
		if g < gen {
			errs = append(errs, os.Remove(snapPath(dir, g)))
		}
	}
	return errors.Join(errs...)
}

// recover loads the newest snapshot and replays the logs after it into
// tree, then opens the newest log for appending.
func (w *wal) recover(tree *btree.BTreeG[item]) error {
	logs, snaps, err := files(w.dir)
	if err != nil {
		return err
	}
	var from uint64
	if len(snaps) > 0 {
		from = snaps[len(snaps)-1]
		path := snapPath(w.dir, from)
		if _, _, err := w.replay(path, tree, false); err != nil {
			return err
		}
	}
	allLogs := slices.Clone(logs)
	logs = slices.DeleteFunc(logs, func(g uint64) bool { return g < from })
	for i, g := range logs {
		path := logPath(w.dir, g)
		good, size, err := w.replay(path, tree, true)
		if err != nil {
			return err
		}
		w.size = good // the newest log's length once the loop ends
		if good == size {
			continue
		}
		// A damaged or unfinished record: what a crash leaves at the end
		// of the log being written (or, after a power cut without Sync,
		// of a log whose tail never reached the disk). Everything after
		// it is newer than the damage and cannot be applied without it:
		// the store is what it was just before.
		if w.logger != nil {
			w.logger.Warn("memstore: log ends in a damaged record; later writes are dropped",
				"file", path, "offset", good, "dropped_bytes", size-good, "later_logs", len(logs)-i-1)
		}
		if err := os.Truncate(path, good); err != nil {
			return err
		}
		for _, later := range logs[i+1:] {
			if err := os.Remove(logPath(w.dir, later)); err != nil {
				return err
			}
		}
		logs = logs[:i+1]
		break
	}
	if err := removeOlder(w.dir, allLogs, snaps, from); err != nil {
		return err
	}
	if len(logs) == 0 {
		w.gen = max(from, 1)
		f, err := createLog(w.dir, w.gen)
		if err != nil {
			return err
		}
		if err := filestore.SyncDir(w.dir); err != nil {
			f.Close()
			return err
		}
		w.f = f
		return nil
	}
	w.gen = logs[len(logs)-1]
	f, err := os.OpenFile(logPath(w.dir, w.gen), os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	w.f = f
	return nil
}

// errDamaged reports a record that fails its checks.
var errDamaged = errors.New("damaged record")

// replay applies every record of the file at path to tree and returns the
// length of the whole, intact records it applied and the file's size. With tail set, a damaged
// or unfinished record ends the replay; otherwise it is an error.
func (w *wal) replay(path string, tree *btree.BTreeG[item], tail bool) (good, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	size = st.Size()
	r := bufio.NewReaderSize(f, 1<<20)
	var hdr [headerLen]byte
	var payload []byte
	for {
		_, err := io.ReadFull(r, hdr[:])
		if err == io.EOF {
			return good, size, nil
		}
		n := binary.LittleEndian.Uint32(hdr[:4])
		if err == nil && n > maxRecord {
			err = errDamaged
		}
		if err == nil {
			if cap(payload) < int(n) {
				payload = make([]byte, n)
			}
			payload = payload[:n]
			_, err = io.ReadFull(r, payload)
		}
		if err == nil && crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(hdr[4:]) {
			err = errDamaged
		}
		if err == nil {
			err = w.applyRecord(tree, payload)
		}
		if err != nil {
			if tail && (err == errDamaged || err == io.ErrUnexpectedEOF) {
				return good, size, nil
			}
			return 0, 0, fmt.Errorf("memstore: %s at offset %d: %w", path, good, err)
		}
		good += int64(headerLen) + int64(n)
	}
}

// applyRecord applies one record's writes to tree. The payload's bytes are
// copied: the caller reuses it.
func (w *wal) applyRecord(tree *btree.BTreeG[item], p []byte) error {
	var ops []logOp
	for len(p) > 0 {
		kind := p[0]
		p = p[1:]
		k, rest, ok := takeBytes(p)
		if !ok {
			return errDamaged
		}
		p = rest
		switch kind {
		case opSet:
			v, rest, ok := takeBytes(p)
			if !ok {
				return errDamaged
			}
			p = rest
			ops = append(ops, logOp{k: k, v: v})
		case opDelete:
			ops = append(ops, logOp{k: k, del: true})
		default:
			return errDamaged
		}
	}
	// A record is checked whole before any of it is applied.
	for _, op := range ops {
		if op.del {
			if old, found := tree.Delete(item{k: op.k}); found {
				w.live -= itemSize(old)
			}
			continue
		}
		it := item{k: bytes.Clone(op.k), v: bytes.Clone(op.v)}
		if old, replaced := tree.ReplaceOrInsert(it); replaced {
			w.live += int64(len(it.v) - len(old.v))
		} else {
			w.live += itemSize(it)
		}
	}
	return nil
}

func takeBytes(p []byte) (b, rest []byte, ok bool) {
	n, used := binary.Uvarint(p)
	if used <= 0 || n > uint64(len(p)-used) {
		return nil, nil, false
	}
	p = p[used:]
	return p[:n], p[n:], true
}

// writeSnapshot writes every item of tree to <gen>.snap, through a
// temporary file that is fsynced and renamed into place.
func writeSnapshot(dir string, gen uint64, tree *btree.BTreeG[item]) error {
	final := snapPath(dir, gen)
	tmp := final + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	var ops []logOp
	var rec []byte
	pending := 0
	var werr error
	flush := func() {
		if len(ops) == 0 || werr != nil {
			return
		}
		rec = appendRecord(rec[:0], ops)
		_, werr = bw.Write(rec)
		ops, pending = ops[:0], 0
	}
	tree.Ascend(func(it item) bool {
		ops = append(ops, logOp{k: it.k, v: it.v})
		pending += len(it.k) + len(it.v)
		if pending >= 256<<10 {
			flush()
		}
		return werr == nil
	})
	flush()
	err = errors.Join(werr, bw.Flush(), f.Sync(), f.Close())
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err == nil {
		err = filestore.SyncDir(dir)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("memstore: write snapshot: %w", err)
	}
	return nil
}
