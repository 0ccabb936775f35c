// Package logstore is lazuli's default durable engine: every key lives in
// memory (a memstore.Tree), and each Update's writes are appended to a
// checksummed log in the data directory before anyone can see them. The
// log is compacted into snapshot files in the background; chunks are
// files of a filestore.ChunkStore beside it.
//
// With Options.Sync (the server's default) an Update returns only once its
// record is on stable storage. Updates that wait at the same time share one
// fsync (group commit): whoever finds no fsync running starts one for every
// record written so far (after letting the goroutines ready to run append
// theirs), and each Update waits for at most the fsync in flight and the
// one after it. Updates append and apply while an fsync runs; only their
// answer waits. Views see a write only once it is on disk,
// so nobody is ever answered with data a power cut could take back.
package logstore

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/filestore"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/storage"
)

// Layout of a data directory.
const (
	LogDir     = "log"         // the log files and their snapshots
	ChunkDir   = "chunks"      // one file per chunk (filestore.ChunkStore)
	LockFile   = "lazuli.lock" // locked while a process has the directory open
	SalvageDir = "salvage"     // where Options.Salvage moves damaged files
)

// DefaultCompactBytes is the log size from which the log is compacted,
// unless Options says otherwise.
const DefaultCompactBytes = 64 << 20

// Options configures a Store.
type Options struct {
	// Dir is the data directory; it is created if need be.
	Dir string
	// Sync makes every Update, and every chunk Put, return only once its
	// data is on stable storage (it survives the machine losing power).
	// Without it they return once the data is written to the files: it
	// survives the process being killed, not a power cut.
	Sync bool
	// CompactBytes is the log size from which the log is compacted, once
	// it also holds more than twice the bytes of the live data
	// (DefaultCompactBytes when zero).
	CompactBytes int64
	// Salvage lets Open go on past damage that is not a torn tail: the
	// damaged file and every later log are moved into a new directory
	// under <Dir>/salvage/, and the intact records before the damage are
	// written back in the damaged file's place. Nothing is deleted.
	Salvage bool
	// Log receives a line when a background compaction fails, when a torn
	// tail is cut and when files are salvaged.
	Log *slog.Logger
	// FS is the file system beneath the directory (filestore.OS when nil).
	FS filestore.FS
}

// Store is the log engine.
type Store struct {
	mu     sync.Mutex    // serializes Updates and guards tree and the log's writer state
	tree   memstore.Tree // the newest state, including records not on disk yet
	pub    atomic.Pointer[memstore.Tree]
	chunks *filestore.ChunkStore
	closed atomic.Bool
	log    *wal
}

// Open opens the store in opts.Dir, creating it if need be.
//
// The directory holds log/ with numbered log files (<gen>.log) and
// snapshots (<gen>.snap), chunks/ and lazuli.lock. Open loads the newest
// snapshot and replays the logs of the same generation and later, in
// order. Recovery never drops data it cannot prove was never
// acknowledged: only a torn tail of the newest log (what a crash or power
// cut leaves of records whose writes had not reached the disk) is cut.
// Any other damage fails Open with a *DamageError naming the file and
// offset, and changes nothing, unless Options.Salvage is set.
//
// Every key and value lives in memory, so the data must fit in memory.
func Open(opts Options) (*Store, error) {
	if opts.CompactBytes <= 0 {
		opts.CompactBytes = DefaultCompactBytes
	}
	if opts.FS == nil {
		opts.FS = filestore.OS
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	fsys := opts.FS
	if err := fsys.MkdirAll(filepath.Join(opts.Dir, LogDir), 0o755); err != nil {
		return nil, err
	}
	// The directories themselves must survive a power cut.
	for _, d := range []string{opts.Dir, filepath.Dir(opts.Dir)} {
		if err := fsys.SyncDir(d); err != nil {
			return nil, err
		}
	}
	unlock, err := fsys.Lock(filepath.Join(opts.Dir, LockFile))
	if err != nil {
		return nil, err
	}
	s := &Store{tree: memstore.NewTree()}
	ok := false
	defer func() {
		if !ok {
			unlock()
		}
	}()
	w := &wal{opts: opts, fs: fsys, dir: filepath.Join(opts.Dir, LogDir), unlock: unlock}
	w.cond = sync.NewCond(&w.smu)
	if err := w.recover(s.tree); err != nil {
		if w.f != nil {
			w.f.Close()
		}
		return nil, err
	}
	s.chunks, err = filestore.OpenChunkStoreFS(fsys, filepath.Join(opts.Dir, ChunkDir), opts.Sync, &s.closed)
	if err != nil {
		w.f.Close()
		return nil, err
	}
	s.log = w
	pub := s.tree.Clone()
	s.pub.Store(&pub)
	ok = true
	return s, nil
}

// View implements storage.Engine.
func (s *Store) View(ctx context.Context, fn func(storage.Tx) error) error {
	if s.closed.Load() {
		return storage.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return fn(memstore.ReadTx(*s.pub.Load()))
}

// Update implements storage.Engine. fn writes to the tree in place,
// keeping what each write replaced: if fn fails (or panics) or the log
// cannot take the record, the writes are taken back. Views never see the
// tree itself, only clones of it taken once its records are on disk, so
// the tree is copied (copy-on-write) once per fsync rather than once per
// Update: in the create + Put Range benchmark, cloning per Update spent a
// tenth of the server's CPU copying B-tree nodes.
func (s *Store) Update(ctx context.Context, fn func(storage.Tx) error) error {
	return s.update(ctx, fn, false)
}

// UpdateTransient implements storage.TransientUpdater: with Sync, its
// writes are visible as soon as they are in the tree when every earlier
// durable Update's record is on disk and no fsync or rotation has taken a
// copy of the tree yet (one would later publish that older copy); they
// reach the disk with the next fsync. Otherwise it waits as Update does.
// Closing an SMB handle is such a write: a durable close cost a third of
// the fsyncs of a small file put (create, write, close).
func (s *Store) UpdateTransient(ctx context.Context, fn func(storage.Tx) error) error {
	return s.update(ctx, fn, true)
}

func (s *Store) update(ctx context.Context, fn func(storage.Tx) error, transient bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w := s.log
	s.mu.Lock()
	locked := true // a panic in fn must not leave mu held
	var t *memstore.Tx
	defer func() {
		if locked {
			if t != nil {
				// fn panicked or the log refused the record: the
				// writes must not stay in the tree.
				t.Rollback()
			}
			s.mu.Unlock()
		}
	}()
	if s.closed.Load() {
		return storage.ErrClosed
	}
	if w.broken != nil {
		return w.broken
	}
	t = memstore.WriteTx(s.tree, true)
	if err := fn(t); err != nil {
		t.Rollback()
		t = nil
		// The failure may rest on writes that are not on disk yet.
		locked = false
		if serr := s.awaitRead(); serr != nil {
			return serr
		}
		return err
	}
	if len(t.Writes()) == 0 {
		t = nil
		locked = false
		return s.awaitRead()
	}
	seq, err := w.append(t.Writes(), t.LiveDelta())
	if err != nil {
		return err
	}
	t = nil
	w.maybeCompact(s)
	if !w.opts.Sync {
		pub := s.tree.Clone()
		s.pub.Store(&pub)
		return nil
	}
	if !transient {
		w.durable = seq
	} else if w.publishTransient(s) {
		return nil
	}
	// Later Updates already build on these writes (their records follow
	// in the log); Views see them once they are on disk.
	locked = false
	s.mu.Unlock()
	return w.syncTo(s, seq)
}

// awaitRead lets an Update that wrote nothing answer only once everything
// it may have read is on disk, as a writing Update would. It is called
// under mu and releases it.
func (s *Store) awaitRead() error {
	w := s.log
	if !w.opts.Sync {
		s.mu.Unlock()
		return nil
	}
	seq := w.seq
	s.mu.Unlock()
	return w.syncTo(s, seq)
}

// Chunks implements storage.Engine.
func (s *Store) Chunks() storage.ChunkStore { return s.chunks }

// Close implements storage.Engine: it waits for a running compaction,
// fsyncs the log (with Sync) and releases the directory.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return s.log.close(s)
}

// SyncStats counts the log's fsyncs since Open.
type SyncStats struct {
	Fsyncs  uint64        // fsyncs of the log made for waiting Updates
	Records uint64        // records those fsyncs put on disk
	Total   time.Duration // time spent in those fsyncs
	Max     time.Duration // the longest of them
}

// RecordsPerFsync is how many Updates one fsync served on average.
func (st SyncStats) RecordsPerFsync() float64 {
	if st.Fsyncs == 0 {
		return 0
	}
	return float64(st.Records) / float64(st.Fsyncs)
}

// MeanFsync is the average fsync latency.
func (st SyncStats) MeanFsync() time.Duration {
	if st.Fsyncs == 0 {
		return 0
	}
	return st.Total / time.Duration(st.Fsyncs)
}

// Summary reports the group commit's figures, for the log line the server
// writes when it stops (storage.Summarizer); nothing without fsyncs.
func (s *Store) Summary() (string, []slog.Attr) {
	st := s.SyncStats()
	if st.Fsyncs == 0 {
		return "", nil
	}
	return "log group commit", []slog.Attr{slog.Uint64("fsyncs", st.Fsyncs), slog.Uint64("updates", st.Records),
		slog.String("updates_per_fsync", fmt.Sprintf("%.1f", st.RecordsPerFsync())),
		slog.Duration("mean_fsync", st.MeanFsync()), slog.Duration("max_fsync", st.Max)}
}

// SyncStats reports the group commit's fsyncs so far.
func (s *Store) SyncStats() SyncStats {
	w := s.log
	w.smu.Lock()
	defer w.smu.Unlock()
	return w.stats
}

// EngineStats implements storage.StatsReporter: the log's size, its
// fsyncs and the Updates they carried, and compactions.
func (s *Store) EngineStats() []storage.Stat {
	st := s.SyncStats()
	s.mu.Lock()
	size, live := s.log.size, s.log.live
	s.mu.Unlock()
	return []storage.Stat{
		{Name: "log_bytes", Help: "Length of the newest log file.", Value: float64(size)},
		{Name: "live_bytes", Help: "Bytes of live keys and values held in memory.", Value: float64(live)},
		{Name: "fsyncs_total", Help: "Fsyncs of the log made for waiting Updates.", Counter: true, Value: float64(st.Fsyncs)},
		{Name: "fsynced_updates_total", Help: "Updates those fsyncs put on disk (divided by fsyncs_total: Updates per fsync).", Counter: true, Value: float64(st.Records)},
		{Name: "fsync_seconds_total", Help: "Time spent in those fsyncs.", Counter: true, Value: st.Total.Seconds()},
		{Name: "compactions_total", Help: "Log compactions finished.", Counter: true, Value: float64(s.log.compactions.Load())},
	}
}
