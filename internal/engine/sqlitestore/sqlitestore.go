// Package sqlitestore is the durable storage engine for data larger than
// memory: SQLite through modernc.org/sqlite (pure Go, no cgo) with plain
// group commit. It is not the default engine (the log engine is), so it
// keeps only the tuning a benchmark shows is worth its lines, each with a
// comment saying so.
//
// # Layout
//
// The data directory holds lazuli.db (plus lazuli.db-wal and lazuli.db-shm
// while open) with a single table kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT
// ROWID in WAL mode, chunks/ with one file per chunk (see
// filestore.ChunkStore), and lazuli.lock, flocked while a process has the
// directory open.
//
// # Concurrency
//
// One writer connection is fed by a group-commit queue. A writer goroutine
// takes every Update that is waiting, opens one SQLite transaction, runs
// each Update's function in turn inside its own SAVEPOINT (rolled back alone
// when the function returns an error), issues a single COMMIT and only then
// releases all callers. The functions run one after another on the writer
// connection, so Updates are serializable by construction: each sees the
// writes of the ones committed before it in the same batch. Update runs fn
// again only when SQLite itself fails mid-batch (the batch is then redone
// without the failing Update), and never returns storage.ErrConflict.
//
// View takes an idle read-only connection from a pool (opening another when
// all are busy, so Views never wait for each other) and runs inside one
// read transaction, so every read of a View observes the same WAL snapshot
// while writers keep committing. Scan reads in pages (16 rows at first,
// doubling up to 512) and never keeps a statement open between calls.
//
// Connections are driven through the database/sql/driver interfaces
// directly, with every statement prepared once per connection.
//
// # Durability
//
// With Options.Sync set, the database runs with synchronous=FULL (the WAL is
// fsynced on every commit) and chunk files and their directory are fsynced
// before Put returns: an acknowledged write survives power loss.
//
// Without Sync, the database runs with synchronous=NORMAL: a commit writes
// its WAL frames to the operating system (write(2)) before COMMIT returns
// but does not wait for fsync, and chunk files are written but not fsynced.
// An acknowledged write therefore survives the lazuli process being killed
// (kill -9, panic, OOM killer), because the data already sits in the
// kernel's page cache; it does not necessarily survive power loss or a
// kernel crash, after which the most recent commits may be missing (the
// database itself stays consistent). TestCrashKill9 checks the kill -9
// guarantee for both settings in a separate process.
package sqlitestore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/lazuli-storage/lazuli/internal/engine/filestore"
	"github.com/lazuli-storage/lazuli/storage"
)

// Options configures the engine.
type Options struct {
	// Dir is the data directory. It is created if needed.
	Dir string
	// Sync makes every commit and chunk fsync before it is acknowledged.
	Sync bool
	// Readers is how many idle read connections are kept for reuse; 0
	// picks a default. More are opened while more Views run at once.
	Readers int
}

// DBFile and ChunkDir name the engine's entries inside Options.Dir.
const (
	DBFile   = "lazuli.db"
	ChunkDir = "chunks"
	LockFile = "lazuli.lock"
)

func lockPath(dir string) string { return filepath.Join(dir, LockFile) }

// maxBatch bounds how many Updates share one SQLite transaction.
const maxBatch = 256

// Store is the SQLite engine. It is safe for concurrent use.
type Store struct {
	opts   Options
	drv    driver.Driver
	writer *conn

	queue   chan *request
	quit    chan struct{}
	stopped chan struct{} // closed when the writer goroutine has exited

	readers chan *conn   // idle read connections kept for reuse
	views   atomic.Int64 // Views running; Close waits for them

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error

	chunks *filestore.ChunkStore
	unlock func() error

	// Counters for Stats.
	nCommits, nUpdates atomic.Int64
}

// Stats reports how many SQLite transactions the writer committed and how
// many Updates they carried; their ratio is the group-commit batch size.
func (s *Store) Stats() (commits, updates int64) {
	return s.nCommits.Load(), s.nUpdates.Load()
}

// EngineStats implements storage.StatsReporter.
func (s *Store) EngineStats() []storage.Stat {
	return []storage.Stat{
		{Name: "commits_total", Help: "SQLite transactions the writer committed.", Counter: true, Value: float64(s.nCommits.Load())},
		{Name: "updates_total", Help: "Updates those transactions carried.", Counter: true, Value: float64(s.nUpdates.Load())},
	}
}

var _ storage.Engine = (*Store)(nil)

// Open opens (creating if needed) the engine in opts.Dir.
func Open(opts Options) (*Store, error) {
	if opts.Dir == "" {
		return nil, errors.New("sqlitestore: Options.Dir is empty")
	}
	// SQLite is given a file: URI, which only takes absolute paths.
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	opts.Dir = dir
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	if opts.Readers <= 0 {
		opts.Readers = max(16, 8*runtime.GOMAXPROCS(0))
	}
	unlock, err := filestore.LockDir(lockPath(opts.Dir))
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			unlock()
		}
	}()
	s := &Store{
		opts:    opts,
		queue:   make(chan *request),
		quit:    make(chan struct{}),
		stopped: make(chan struct{}),
		readers: make(chan *conn, opts.Readers),
		unlock:  unlock,
	}
	s.chunks, err = filestore.OpenChunkStore(filepath.Join(opts.Dir, ChunkDir), opts.Sync, &s.closed)
	if err != nil {
		return nil, err
	}
	// database/sql only serves to find the registered driver.
	db, err := sql.Open("sqlite", "")
	if err != nil {
		return nil, err
	}
	s.drv = db.Driver()
	db.Close()
	if err := s.openWriter(); err != nil {
		return nil, err
	}
	ok = true
	go s.writeLoop()
	return s, nil
}

// dsn builds the connection string. Pragmas given in the DSN are applied by
// the driver to every new connection.
func (s *Store) dsn(readOnly bool) string {
	sync := "NORMAL"
	if s.opts.Sync {
		sync = "FULL"
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+sync+")")
	if readOnly {
		// Many readers may be open; keep each one's page cache small.
		q.Add("_pragma", "cache_size(-2048)")
	} else {
		q.Add("_pragma", "cache_size(-16384)")
	}
	// Savepoint sub-journals stay in memory instead of temp files.
	q.Add("_pragma", "temp_store(MEMORY)")
	// Checkpoint less often: pages rewritten between checkpoints are
	// copied back to the database once, and checkpoints fsync.
	q.Add("_pragma", "wal_autocheckpoint(8192)")
	// A burst of large values can grow the WAL far beyond that; shrink
	// it back after checkpoints.
	q.Add("_pragma", "journal_size_limit(67108864)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	}
	u := url.URL{Scheme: "file", Path: filepath.Join(s.opts.Dir, DBFile), RawQuery: q.Encode()}
	return u.String()
}

// pageSize is the page size of a new database. Pages large enough that a
// record with a small inline blob (up to about 2 KiB) fits in its b-tree
// cell keep lookups off overflow pages, which SQLite reads in full for
// every key comparison against such a cell. Larger pages cost more: the
// driver's allocator serves blocks over 16 KiB (a 16 KiB page with its
// header, the scratch space of a page split) with mmap and munmap each.
// Worth it: with 4 KiB pages overflow reads were a fifth of the writer's
// time in a Put Blob profile, and 8 KiB pages took lazuli-bench
// blob-put-1k from about 260 to 215 server CPU µs per op against 16 KiB.
const pageSize = 8192

// createDB gives a database that has no pages yet its page size. The
// driver applies DSN pragmas in lexicographic order, journal_mode before
// page_size, and a database in WAL mode keeps the page size it has, so the
// first page is written here, by a connection without pragmas, before the
// writer opens. An existing database keeps its page size.
func (s *Store) createDB() error {
	path := filepath.Join(s.opts.Dir, DBFile)
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
		return nil
	}
	u := url.URL{Scheme: "file", Path: path}
	dc, err := s.drv.Open(u.String())
	if err != nil {
		return err
	}
	c := &conn{dc: dc}
	err = errors.Join(
		c.execSQL(fmt.Sprintf(`PRAGMA page_size = %d`, pageSize)),
		c.execSQL(`CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID`),
	)
	return errors.Join(err, dc.Close())
}

func (s *Store) openWriter() error {
	if err := s.createDB(); err != nil {
		return err
	}
	c, err := openConn(s.drv, s.dsn(false), true)
	if err != nil {
		return err
	}
	mode, err := c.querySQL(`PRAGMA journal_mode`)
	if err != nil {
		c.close()
		return err
	}
	if m, _ := blob(mode); string(m) != "wal" {
		c.close()
		return fmt.Errorf("sqlitestore: journal_mode is %q, want wal", m)
	}
	s.writer = c
	return nil
}

// Chunks implements storage.Engine.
func (s *Store) Chunks() storage.ChunkStore { return s.chunks }

// Close implements storage.Engine. Updates already taken by the writer
// complete; Updates still waiting return storage.ErrClosed. Views that are
// running finish on their connection, which is closed when they return.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		close(s.quit)
		<-s.stopped
		// Views still running finish on their connection and close it
		// on return; wait for them, then close the idle ones.
		for s.views.Load() > 0 {
			time.Sleep(time.Millisecond)
		}
		var errs []error
		for done := false; !done; {
			select {
			case c := <-s.readers:
				errs = append(errs, c.close())
			default:
				done = true
			}
		}
		if s.writer != nil {
			errs = append(errs, s.writer.close())
		}
		errs = append(errs, s.unlock())
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// View implements storage.Engine. Each View runs on its own read
// connection: an idle one from the pool or, when all are busy, a new one,
// so Views never wait for each other (and a View nested in another View or
// in an Update cannot deadlock).
func (s *Store) View(ctx context.Context, fn func(storage.Tx) error) (err error) {
	s.views.Add(1)
	defer s.views.Add(-1)
	if s.closed.Load() {
		return storage.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c, err := s.acquireReader()
	if err != nil {
		return err
	}
	if err := c.exec(c.begin); err != nil {
		c.close() // a connection that cannot begin is not reused
		return err
	}
	t := &tx{c: c, ro: true}
	defer func() {
		t.done = true
		// A read transaction has nothing to commit; ROLLBACK ends it and
		// drops the snapshot (also when fn panicked). A connection that
		// cannot end its transaction is not reused.
		if rerr := c.exec(c.rollback); rerr != nil {
			c.close()
			if err == nil {
				err = rerr
			}
			return
		}
		s.releaseReader(c)
	}()
	return fn(t)
}

func (s *Store) acquireReader() (*conn, error) {
	select {
	case c := <-s.readers:
		return c, nil
	default:
		return openConn(s.drv, s.dsn(true), false)
	}
}

// releaseReader keeps c for reuse unless the pool is full or the store is
// closing.
func (s *Store) releaseReader(c *conn) {
	if s.closed.Load() {
		c.close()
		return
	}
	select {
	case s.readers <- c:
	default:
		c.close()
	}
}

// request is one Update waiting for the writer.
type request struct {
	ctx   context.Context
	fn    func(storage.Tx) error
	err   error
	panic any
	done  chan struct{}
}

// Update implements storage.Engine. fn runs on the writer goroutine; a
// panic in fn is recovered there, the Update's writes are rolled back, and
// the panic is raised again in the caller.
func (s *Store) Update(ctx context.Context, fn func(storage.Tx) error) error {
	if s.closed.Load() {
		return storage.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &request{ctx: ctx, fn: fn, done: make(chan struct{})}
	select {
	case s.queue <- r:
	case <-s.quit:
		return storage.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	// Once taken, the request is always finished by the writer: the caller
	// must learn whether it committed, so it waits even if ctx ends.
	<-r.done
	if r.panic != nil {
		panic(r.panic)
	}
	return r.err
}

// writeLoop is the single writer: it batches waiting Updates into one
// SQLite transaction.
func (s *Store) writeLoop() {
	defer close(s.stopped)
	batch := make([]*request, 0, maxBatch)
	for {
		select {
		case r := <-s.queue:
			batch = append(batch[:0], r)
		case <-s.quit:
			return
		}
		// Let the callers released by the previous commit queue their next
		// Updates before the transaction opens, so they share it instead
		// of each paying for a commit of their own. Worth its line:
		// without it BenchmarkUpdateParallel16 batches 2.4 instead of 13
		// Updates per transaction and spends 18.8 instead of 15.2 cpu-µs
		// per commit.
		runtime.Gosched()
		s.runBatch(batch)
		clear(batch)
	}
}

// runBatch commits the first request and every request that arrives while
// the transaction is open (up to maxBatch) in one transaction. If SQLite
// fails in a way that may have undone more than one Update's savepoint,
// the whole transaction is abandoned and the innocent requests run again
// in a fresh one (the contract allows running fn more than once).
func (s *Store) runBatch(batch []*request) {
	for len(batch) > 0 {
		batch = s.runTx(batch)
	}
}

// outcome of one request inside the batch transaction.
type outcome int

const (
	applied outcome = iota // fn succeeded; its writes wait for COMMIT
	failed                 // fn failed or panicked; its savepoint was rolled back
	broken                 // SQLite failed; the transaction must be abandoned
)

// runTx runs batch in one transaction and returns the requests that must
// run again because the transaction was abandoned.
func (s *Store) runTx(batch []*request) (retry []*request) {
	c := s.writer
	if err := c.exec(c.beginImmediate); err != nil {
		err = fmt.Errorf("sqlitestore: begin: %w", err)
		for _, r := range batch {
			r.err = err
			close(r.done)
		}
		return nil
	}
	var ok []*request // requests whose fn succeeded, waiting for COMMIT
	for i := 0; i < len(batch); i++ {
		r := batch[i]
		switch s.apply(r) {
		case applied:
			ok = append(ok, r)
		case failed:
			close(r.done)
		case broken:
			close(r.done)
			c.exec(c.rollback)
			return append(ok, batch[i+1:]...)
		}
		if i == len(batch)-1 && len(batch) < maxBatch {
			// Take whoever is waiting now; they join this transaction.
			select {
			case r := <-s.queue:
				batch = append(batch, r)
			default:
			}
		}
	}
	err := c.exec(c.commit)
	if err != nil {
		c.exec(c.rollback)
		err = fmt.Errorf("sqlitestore: commit: %w", err)
	}
	s.nCommits.Add(1)
	s.nUpdates.Add(int64(len(batch)))
	for _, r := range ok {
		r.err = err
		close(r.done)
	}
	return nil
}

// apply runs one request inside the open transaction. Unless the outcome
// is applied, r.err or r.panic is set.
func (s *Store) apply(r *request) (res outcome) {
	if err := r.ctx.Err(); err != nil {
		r.err = err
		return failed
	}
	c := s.writer
	t := &tx{c: c}
	res = failed
	defer func() {
		t.done = true
		if p := recover(); p != nil {
			r.panic = p
			res = failed
		}
		if res == applied && t.sqlErr == nil {
			// The function succeeded: its pending writes run now, inside
			// the SAVEPOINT if a Scan opened one, else directly (any
			// failure of SQLite abandons the whole transaction anyway).
			t.runPending()
		} else {
			t.pend = nil
		}
		if t.sqlErr != nil {
			// SQLite reported an error (I/O, full disk, ...): it may
			// have rolled back more than this savepoint.
			if r.err == nil && r.panic == nil {
				r.err = t.sqlErr
			}
			res = broken
			return
		}
		if !t.savepoint {
			return
		}
		if res == applied {
			if err := c.exec(c.release); err != nil {
				r.err, res = fmt.Errorf("sqlitestore: release savepoint: %w", err), broken
			}
			return
		}
		if err := errors.Join(c.exec(c.rollbackTo), c.exec(c.release)); err != nil {
			res = broken
		}
	}()
	if err := r.fn(t); err != nil {
		r.err = err
		return failed
	}
	return applied
}
