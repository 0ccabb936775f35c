// Package pgstore is the storage engine on PostgreSQL, through which any
// number of stateless lazuli instances serve one set of accounts.
//
// Keys and values live in one table, lazuli_kv (h BIGINT, k BYTEA,
// v BYTEA, primary key (h, k), h a hash of k; an index on k serves range
// scans); chunk bytes live in the database too, as rows of at most
// PartSize bytes, so an instance keeps nothing on local disk. The table
// also holds 8,192 placeholder rows under keys that begin with eight
// 0xFF bytes, which no Scan shows and no Update may write: they keep
// the primary key's pages many however few keys there are (see
// placeholders).
//
// Update runs a SERIALIZABLE transaction and runs it again, after a short
// randomized backoff, when the database reports a serialization failure
// (SQLSTATE 40001) or a deadlock (40P01): both guarantee the attempt was
// rolled back, so a retry never repeats a committed effect. A commit whose
// outcome is unknown (the connection died during COMMIT) is never retried;
// it returns an error wrapping storage.ErrUnavailable. Writes are held in
// the transaction and sent with COMMIT in one round trip, and BEGIN goes
// out with the first statement, so an Update costs one round trip per read
// (GetMany reads several keys in one) plus one; reads answered from the
// instance's hints of what keys hold cost none, and are checked in the
// transaction with its writes (see hints), so that most Updates cost one
// round trip. A key the transaction read is written with a plain UPDATE
// or INSERT as it found it present or absent, and only keys it never
// read with INSERT ... ON CONFLICT (see tx.known).
//
// View runs a REPEATABLE READ READ ONLY transaction: one snapshot for all
// its reads, taken at its first read.
//
// The SQL is the subset PostgreSQL 13+, CockroachDB and YugabyteDB accept
// in common: plain tables with primary keys, one plain index, INSERT
// (VALUES lists or unnest of arrays, with or without ON CONFLICT), UPDATE
// ... FROM unnest in a WITH ... RETURNING, DELETE, ANY, substring on
// BYTEA, clock_timestamp(). No large objects, advisory locks or LISTEN/NOTIFY.
// Only PostgreSQL is tested.
package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lazuli-storage/lazuli/storage"
)

// Options configure Open.
type Options struct {
	// URL is a PostgreSQL connection string (postgres://user:pw@host/db
	// or key=value form).
	URL string
	// MaxConns bounds the connection pool (0: pgx's default, the larger
	// of 4 and the number of CPUs).
	MaxConns int32
	// Clock is the instance's own clock (nil: time.Now). Store.Now
	// corrects it against the database's clock; tests skew it.
	Clock func() time.Time
	// Log receives clock and connectivity warnings (nil: discarded).
	Log *slog.Logger
}

// Store is a storage.Engine on PostgreSQL. It is safe for concurrent use
// by many goroutines and by many processes sharing the database.
type Store struct {
	pool   *pgxpool.Pool
	chunks *chunkStore
	clock  *dbClock
	log    *slog.Logger
	closed atomic.Bool
	stats  updateStats
	hints  hints
	// retryLane admits one retried Update attempt at a time (see
	// Update).
	retryLane chan struct{}

	stopClock context.CancelFunc
	clockDone chan struct{}
}

var _ storage.Engine = (*Store)(nil)

// preferIndexScans keeps PostgreSQL's planner off sequential scans on
// every connection. Under SERIALIZABLE a sequential scan takes a predicate
// lock on the whole table, so that every concurrent write to any row of it
// becomes a read/write conflict of the reading transaction, and bursts of
// "canceled on identification as a pivot" failures follow. The planner
// picks one for a point read or a checked UPDATE whenever the table is
// small, or its statistics say so (a cached generic plan keeps the choice
// until the next ANALYZE); every statement lazuli runs has an index that
// serves it. PostgreSQL's documentation advises encouraging index scans
// for the same reason. CockroachDB has neither the setting nor predicate
// locks, and is left alone.
func preferIndexScans(ctx context.Context, c *pgx.Conn) error {
	if c.PgConn().ParameterStatus("crdb_version") != "" {
		return nil
	}
	_, err := c.Exec(ctx, "SET enable_seqscan = off")
	return err
}

// Open connects to the database, creates or migrates the schema (safe when
// several instances start at once), and synchronizes the clock.
func Open(ctx context.Context, o Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(o.URL)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	}
	cfg.AfterConnect = preferIndexScans
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	s := &Store{pool: pool, log: o.Log, retryLane: make(chan struct{}, 1)}
	s.chunks = &chunkStore{s: s}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	s.clock = &dbClock{local: o.Clock}
	if err := s.clock.sync(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: clock: %w", err)
	}
	cctx, cancel := context.WithCancel(context.Background())
	s.stopClock, s.clockDone = cancel, make(chan struct{})
	go s.clock.run(cctx, pool, s.log, s.clockDone)
	return s, nil
}

// Now returns the database's clock, read from the instance's monotonic
// clock since the last synchronization: every instance on one database
// decides times (lease expiry, visibility, SAS validity, Last-Modified) by
// the same clock, whatever its own wall clock says. It never goes back.
func (s *Store) Now() time.Time { return s.clock.now() }

// Chunks returns the chunk store (rows in the same database).
func (s *Store) Chunks() storage.ChunkStore { return s.chunks }

// Close waits for transactions in flight and closes the pool.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.stopClock()
	<-s.clockDone
	s.pool.Close()
	if st := s.UpdateStats(); st.Updates > 0 {
		s.log.Info("pgstore updates", "updates", st.Updates, "retried_attempts", st.Retries,
			"max_attempts", st.MaxAttempts, "gave_up", st.GaveUp,
			"lane_wait", st.LaneWait, "lane_timeouts", st.LaneTimeouts)
	}
	return nil
}

// UpdateStats counts Update calls and their retries since Open.
type UpdateStats struct {
	// Updates counts Update calls that reached the database.
	Updates int64
	// Retries counts attempts run again after a serialization failure,
	// a deadlock or a connection that was dead before the attempt.
	Retries int64
	// MaxAttempts is the most attempts one Update took.
	MaxAttempts int64
	// GaveUp counts Updates that still conflicted after maxAttempts.
	GaveUp int64
	// LaneWait is the time retried attempts spent waiting for the retry
	// lane, and LaneTimeouts how many of them ran without it after
	// laneWait.
	LaneWait     time.Duration
	LaneTimeouts int64
	// RoundTrips counts the round trips to the database of every
	// attempt (each sends its statements as one batch): what an
	// Update costs the instance is mostly these.
	RoundTrips int64
	// StaleHints counts attempts run again because what they read from
	// the hints was not so in the database (see hints); Retries counts
	// them too.
	StaleHints int64
}

type updateStats struct {
	updates, retries, maxAttempts, gaveUp, laneWait, laneTimeouts, roundTrips, staleHints atomic.Int64
}

// note records one finished Update of attempts attempts.
func (u *updateStats) note(attempts int) {
	u.updates.Add(1)
	u.retries.Add(int64(attempts - 1))
	for {
		m := u.maxAttempts.Load()
		if int64(attempts) <= m || u.maxAttempts.CompareAndSwap(m, int64(attempts)) {
			return
		}
	}
}

// UpdateStats returns the counts so far.
func (s *Store) UpdateStats() UpdateStats {
	return UpdateStats{Updates: s.stats.updates.Load(), Retries: s.stats.retries.Load(),
		MaxAttempts: s.stats.maxAttempts.Load(), GaveUp: s.stats.gaveUp.Load(),
		LaneWait: time.Duration(s.stats.laneWait.Load()), LaneTimeouts: s.stats.laneTimeouts.Load(),
		RoundTrips: s.stats.roundTrips.Load(), StaleHints: s.stats.staleHints.Load()}
}

// EngineStats implements storage.StatsReporter: Updates, their retries
// (stale hints among them), and the pool's connections.
func (s *Store) EngineStats() []storage.Stat {
	st := s.UpdateStats()
	ps := s.pool.Stat()
	return []storage.Stat{
		{Name: "transactions_total", Help: "Update transactions that reached the database.", Counter: true, Value: float64(st.Updates)},
		{Name: "retries_total", Help: "Update attempts run again after a serialization failure, a deadlock or a dead connection.", Counter: true, Value: float64(st.Retries)},
		{Name: "gave_up_total", Help: "Updates that still conflicted after the last attempt.", Counter: true, Value: float64(st.GaveUp)},
		{Name: "retry_lane_wait_seconds_total", Help: "Time retried attempts waited for the retry lane.", Counter: true, Value: st.LaneWait.Seconds()},
		{Name: "round_trips_total", Help: "Round trips of Update attempts to the database.", Counter: true, Value: float64(st.RoundTrips)},
		{Name: "stale_hints_total", Help: "Update attempts run again because what they read from the instance's hints had changed in the database.", Counter: true, Value: float64(st.StaleHints)},
		{Name: "retry_lane_timeouts_total", Help: "Retried attempts that ran without the lane after waiting for it.", Counter: true, Value: float64(st.LaneTimeouts)},
		{Name: "connections", Help: "Connections open in the pool.", Value: float64(ps.TotalConns())},
		{Name: "connections_in_use", Help: "Connections of the pool in use.", Value: float64(ps.AcquiredConns())},
	}
}

// Ping implements storage.Pinger: the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

// SharedByInstances marks the store as shared by lazuli instances
// (storage.Shared).
func (s *Store) SharedByInstances() {}

// Retry policy of Update: exponential backoff with full jitter, bounded in
// attempts and in each wait.
const (
	maxAttempts = 60
	minBackoff  = 500 * time.Microsecond
	maxBackoff  = 50 * time.Millisecond
	// commitTimeout bounds a commit that runs on after the caller's
	// context ended (its outcome must be known).
	commitTimeout = 30 * time.Second
)

// Update runs fn in a SERIALIZABLE transaction, retried on serialization
// failures and deadlocks.
func (s *Store) Update(ctx context.Context, fn func(storage.Tx) error) error {
	if s.closed.Load() {
		return storage.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	deadConnRetries := 0
	// The first attempt may read from the hints; one that runs again
	// reads the database, whatever failed the one before.
	spec := s.hints.allow()
	conflicts := 0
	for attempt := 0; ; attempt++ {
		// Attempts after the first run one at a time in this
		// instance: Updates that conflicted are likely to conflict
		// again (a hot key, such as a queue's statistics record), and
		// in single file they commit one after the other instead of
		// failing each other again, each failure a wasted attempt on
		// both tiers. First attempts stay concurrent. An attempt waits
		// for its turn at most laneWait, so that nothing (an Update
		// nested in another's function) can wait on the lane forever.
		// Measured with scripts/bench-postgres.sh, one instance, 16
		// clients: attempts run again fell from 96,478 to 27,563 over
		// the same five workloads, Create File + Put Range rose from
		// 123 to 394 ops/s, and Insert Entity and Lease Blob no longer
		// collapsed into retry storms (446 and 291 ops/s before, 2,898
		// and 1,623 after); one queue's Put Message stays bounded by
		// the commit latency either way (about 650 ops/s).
		inLane := conflicts > 0 && s.enterLane(ctx)
		err, retry := s.updateOnce(ctx, fn, spec)
		spec = false
		if inLane {
			<-s.retryLane
		}
		var fe fnError
		if errors.As(err, &fe) {
			s.stats.note(attempt + 1)
			return fe.err // fn's own error, unchanged
		}
		if errors.Is(err, errStaleHint) {
			// Not a conflict with a concurrent attempt: the hints were
			// behind the database. Again at once.
			s.stats.staleHints.Add(1)
			continue
		}
		conflicts++
		if !retry && deadConnRetries < 2 && pgconn.SafeToRetry(err) {
			// Nothing reached the server (a connection it had closed,
			// after a restart): the attempt never began there.
			deadConnRetries++
			retry = true
		}
		if !retry {
			s.stats.note(attempt + 1)
			return s.mapErr(err)
		}
		if attempt+1 >= maxAttempts {
			s.stats.note(attempt + 1)
			s.stats.gaveUp.Add(1)
			return fmt.Errorf("%w: %d attempts: %v", storage.ErrConflict, attempt+1, err)
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return err
		}
		if s.closed.Load() {
			return storage.ErrClosed
		}
	}
}

// laneWait bounds the wait of a retried attempt for its turn.
const laneWait = 100 * time.Millisecond

// enterLane waits, at most laneWait, for the retry lane, and reports
// whether it was entered.
func (s *Store) enterLane(ctx context.Context) bool {
	select {
	case s.retryLane <- struct{}{}:
		return true
	default:
	}
	start := time.Now()
	defer func() { s.stats.laneWait.Add(int64(time.Since(start))) }()
	t := time.NewTimer(laneWait)
	defer t.Stop()
	select {
	case s.retryLane <- struct{}{}:
		return true
	case <-t.C:
		s.stats.laneTimeouts.Add(1)
	case <-ctx.Done():
	}
	return false
}

func backoff(attempt int) time.Duration {
	d := minBackoff << min(attempt, 10)
	d = min(d, maxBackoff)
	return time.Duration(rand.Int64N(int64(d)) + 1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// updateOnce runs one attempt; retry reports whether the database rolled
// it back for a reason another attempt may not meet.
func (s *Store) updateOnce(ctx context.Context, fn func(storage.Tx) error, spec bool) (err error, retry bool) {
	tctx, cancel := txContext(ctx)
	defer cancel()
	t := &tx{ctx: tctx, s: s, write: true, begin: beginSerializable, spec: spec, check: -1}
	defer func() {
		// fn panicked or called runtime.Goexit: roll back, release.
		if !t.released {
			t.finish(false)
		}
		if len(t.hinted) > 0 {
			var fe fnError
			switch stale := errors.Is(err, errStaleHint); {
			case stale:
				s.hints.drop(t.hinted)
				s.hints.note(true)
			case err == nil || errors.As(err, &fe):
				s.hints.note(false)
			}
		}
	}()
	ferr := fn(t)
	t.done = true
	if ferr != nil && t.err == nil {
		// fn's outcome stands only if what it read from the hints was
		// so.
		t.verify()
	}
	if t.err != nil {
		// A statement failed: the transaction is aborted whatever fn
		// made of the error.
		t.finish(false)
		return t.err, isRetryable(t.err)
	}
	if ferr != nil {
		t.finish(false)
		return fnError{ferr}, false
	}
	if err := t.commit(); err != nil {
		return err, isRetryable(err)
	}
	return nil, false
}

// txTimeout bounds one View or Update attempt.
const txTimeout = time.Minute

// txContext is the context of a transaction's statements: once fn runs,
// the transaction finishes whatever becomes of the caller's context (as on
// the embedded engines, whose reads do not watch it), within txTimeout.
func txContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), txTimeout)
}

// fnError carries the error of an Update's function out of updateOnce.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

// View runs fn against one snapshot.
func (s *Store) View(ctx context.Context, fn func(storage.Tx) error) error {
	if s.closed.Load() {
		return storage.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	tctx, cancel := txContext(ctx)
	defer cancel()
	t := &tx{ctx: tctx, s: s, begin: beginSnapshot}
	defer func() {
		// fn panicked or called runtime.Goexit: roll back, release.
		if !t.released {
			t.finish(false)
		}
	}()
	ferr := fn(t)
	t.done = true
	t.finish(true)
	if t.err != nil {
		return s.mapErr(t.err)
	}
	return ferr
}

// GetOne reads one key in a single statement (its own snapshot), without
// an explicit transaction.
func (s *Store) GetOne(ctx context.Context, key []byte) ([]byte, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	var v []byte
	found := false
	err := s.withRetryOnDeadConn(ctx, func() error {
		rows, err := s.pool.Query(ctx, sqlGet, keyHash(key))
		if err != nil {
			return err
		}
		found = false
		for rows.Next() {
			var k, kv []byte
			if err := rows.Scan(&k, &kv); err != nil {
				rows.Close()
				return err
			}
			if bytes.Equal(k, key) {
				found, v = true, kv
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.mapErr(err)
	}
	return foundValue(found, v)
}

// withRetryOnDeadConn runs a single statement again when it failed before
// anything reached the server (an idle connection the server had closed,
// after a database restart), at most a few times.
func (s *Store) withRetryOnDeadConn(ctx context.Context, f func() error) error {
	for i := 0; ; i++ {
		err := f()
		if err == nil || i == 3 || !pgconn.SafeToRetry(err) || ctx.Err() != nil {
			return err
		}
	}
}

// mapErr turns database and connection failures into storage sentinels:
// a closed engine, contention that outlasted the retries, or a database
// that cannot be reached (storage.ErrUnavailable, which clients see as a
// retryable 503 ServerBusy).
func (s *Store) mapErr(err error) error {
	if err == nil {
		return nil
	}
	if s.closed.Load() && !errors.Is(err, storage.ErrNotFound) {
		return storage.ErrClosed
	}
	if errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrConflict) ||
		errors.Is(err, storage.ErrClosed) || errors.Is(err, storage.ErrUnavailable) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case isRetryable(err):
			return fmt.Errorf("%w: %v", storage.ErrConflict, err)
		case len(pe.Code) == 5 && (pe.Code[:2] == "08" || pe.Code[:2] == "53" || pe.Code[:2] == "57"):
			// Connection exceptions, insufficient resources, operator
			// intervention (shutdown, starting up).
			return fmt.Errorf("%w: %v", storage.ErrUnavailable, err)
		}
		return fmt.Errorf("pgstore: %w", err)
	}
	// Everything else from the driver is about reaching the server.
	return fmt.Errorf("%w: %v", storage.ErrUnavailable, err)
}

// isRetryable reports a serialization failure, a deadlock, or a unique
// violation: the transaction was rolled back and may simply run again.
// Updates meet unique violations only in their plain INSERTs of keys they
// read as absent (see tx.known), when a concurrent transaction added the
// key first: a conflict like any other, which the next attempt reads.
func isRetryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01" || pe.Code == "23505")
}

// dbClock tracks the database's clock with the instance's monotonic one.
type dbClock struct {
	local func() time.Time

	mu      sync.Mutex
	dbAt    time.Time // database time at the sample
	localAt time.Time // local clock at the sample
	rtt     time.Duration
	last    time.Time // latest value handed out
}

// Clock synchronization: a sample's error is at most half its round trip;
// samples slower than maxSampleRTT are not taken unless nothing better
// came for syncMaxAge.
const (
	syncEvery    = 5 * time.Second
	syncMaxAge   = time.Minute
	maxSampleRTT = 20 * time.Millisecond
)

func (c *dbClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.dbAt.Add(c.local().Sub(c.localAt))
	if t.Before(c.last) {
		t = c.last
	}
	c.last = t
	return t
}

// sync takes a sample: the database's clock_timestamp() against the
// midpoint of the local clock around the query.
func (c *dbClock) sync(ctx context.Context, pool *pgxpool.Pool) error {
	best := time.Duration(-1)
	var dbAt, localAt time.Time
	for range 3 {
		t0 := c.local()
		var db time.Time
		if err := pool.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&db); err != nil {
			return err
		}
		t1 := c.local()
		if rtt := t1.Sub(t0); best < 0 || rtt < best {
			best, dbAt, localAt = rtt, db.Add(rtt/2), t1
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.localAt.IsZero() || best <= maxSampleRTT || c.local().Sub(c.localAt) > syncMaxAge {
		c.dbAt, c.localAt, c.rtt = dbAt, localAt, best
	}
	return nil
}

func (c *dbClock) run(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(syncEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := c.sync(sctx, pool)
		cancel()
		if err != nil && ctx.Err() == nil {
			log.Warn("pgstore: clock synchronization", "err", err)
		}
	}
}
