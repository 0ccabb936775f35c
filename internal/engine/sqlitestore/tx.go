package sqlitestore

import (
	"bytes"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"

	"github.com/lazuli-storage/lazuli/storage"
)

// conn is one SQLite connection with its prepared statements, used through
// the driver interfaces directly: database/sql would add a pool, locks,
// argument conversion and a second copy of every value read, none of which
// a connection owned by one goroutine needs. Worth it: CPU per
// commit in BenchmarkUpdateParallel16 went from about 30 to 22 µs when
// database/sql went. A conn is used by one
// goroutine at a time: the writer goroutine, or the View that borrowed it
// from the pool.
type conn struct {
	dc driver.Conn

	begin, beginImmediate, commit, rollback *stmt
	savepoint, release, rollbackTo          *stmt

	get, set, del *stmt
	// scan statements by direction/bound kind and page size, prepared on
	// first use (see scanStmt).
	scan [4][numPageSizes]*stmt

	all []*stmt

	// argv holds the arguments of the statement being run; the driver
	// binds them before ExecContext or QueryContext returns and keeps no
	// reference, so one buffer serves every call on the connection (one
	// allocation fewer per statement: BenchmarkUpdateSerial 20 -> 19
	// allocs, 623 -> 543 B per commit).
	argv [2]driver.NamedValue
}

// stmt is a prepared statement of the driver.
type stmt struct {
	driver.Stmt
	ex driver.StmtExecContext
	q  driver.StmtQueryContext
}

const (
	scanFwd = iota
	scanFwdOpen
	scanRev
	scanRevOpen
)

// openConn opens one connection and prepares the statements it needs.
// SQLite binds a zero-length Go slice as NULL; the statements' coalesce
// turns it back into the empty blob so that empty keys and values behave
// like any other.
func openConn(drv driver.Driver, dsn string, writer bool) (*conn, error) {
	dc, err := drv.Open(dsn)
	if err != nil {
		return nil, err
	}
	c := &conn{dc: dc}
	if writer {
		// The schema must exist before statements can be prepared.
		if err := c.execSQL(`CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID`); err != nil {
			dc.Close()
			return nil, err
		}
	}
	pc, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		dc.Close()
		return nil, errors.New("sqlitestore: driver cannot prepare with a context")
	}
	p := func(dst **stmt, query string) error {
		ds, err := pc.PrepareContext(context.Background(), query)
		if err != nil {
			return fmt.Errorf("sqlitestore: prepare %q: %w", query, err)
		}
		st := &stmt{Stmt: ds}
		st.ex, ok = ds.(driver.StmtExecContext)
		if ok {
			st.q, ok = ds.(driver.StmtQueryContext)
		}
		c.all = append(c.all, st)
		if !ok {
			return errors.New("sqlitestore: driver statements lack context methods")
		}
		*dst = st
		return nil
	}
	err = errors.Join(
		p(&c.begin, `BEGIN`),
		p(&c.commit, `COMMIT`),
		p(&c.rollback, `ROLLBACK`),
		p(&c.get, `SELECT v FROM kv WHERE k = coalesce(?1, x'')`),
	)
	if err == nil && writer {
		err = errors.Join(
			p(&c.beginImmediate, `BEGIN IMMEDIATE`),
			p(&c.savepoint, `SAVEPOINT u`),
			p(&c.release, `RELEASE u`),
			p(&c.rollbackTo, `ROLLBACK TO u`),
			p(&c.set, `INSERT INTO kv (k, v) VALUES (coalesce(?1, x''), coalesce(?2, x'')) ON CONFLICT (k) DO UPDATE SET v = excluded.v`),
			p(&c.del, `DELETE FROM kv WHERE k = coalesce(?1, x'')`),
		)
	}
	if err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// Scan page sizes: firstPageRows << i for i < numPageSizes.
const numPageSizes = 6

// scanStmt returns the scan statement of the given kind whose LIMIT is
// firstPageRows << size. The LIMIT is written into the SQL rather than bound:
// SQLite re-prepares a statement whose bound LIMIT changes, which costs
// more than the scan of a small page.
func (c *conn) scanStmt(kind, size int) (*stmt, error) {
	if st := c.scan[kind][size]; st != nil {
		return st, nil
	}
	where := `k >= coalesce(?1, x'')`
	if kind == scanFwd || kind == scanRev {
		where += ` AND k < ?2`
	}
	order := `k`
	if kind == scanRev || kind == scanRevOpen {
		order = `k DESC`
	}
	query := fmt.Sprintf(`SELECT k, v FROM kv WHERE %s ORDER BY %s LIMIT %d`, where, order, firstPageRows<<size)
	ds, err := c.dc.(driver.ConnPrepareContext).PrepareContext(context.Background(), query)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: prepare %q: %w", query, err)
	}
	st := &stmt{Stmt: ds}
	var ok bool
	if st.ex, ok = ds.(driver.StmtExecContext); ok {
		st.q, ok = ds.(driver.StmtQueryContext)
	}
	if !ok {
		ds.Close()
		return nil, errors.New("sqlitestore: driver statements lack context methods")
	}
	c.all = append(c.all, st)
	c.scan[kind][size] = st
	return st, nil
}

// execSQL runs unprepared SQL (setup only).
func (c *conn) execSQL(query string) error {
	ex, ok := c.dc.(driver.ExecerContext)
	if !ok {
		return errors.New("sqlitestore: driver cannot exec directly")
	}
	_, err := ex.ExecContext(context.Background(), query, nil)
	return err
}

// querySQL returns the first column of the first row of unprepared SQL
// (setup only).
func (c *conn) querySQL(query string) (driver.Value, error) {
	qc, ok := c.dc.(driver.QueryerContext)
	if !ok {
		return nil, errors.New("sqlitestore: driver cannot query directly")
	}
	rows, err := qc.QueryContext(context.Background(), query, nil)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	if err := rows.Next(dest); err != nil {
		return nil, err
	}
	return dest[0], nil
}

// args numbers positional arguments for the driver in c.argv.
func (c *conn) args(vals []driver.Value) []driver.NamedValue {
	nv := c.argv[:0]
	if len(vals) > len(c.argv) {
		nv = make([]driver.NamedValue, 0, len(vals))
	}
	for i, v := range vals {
		nv = append(nv, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	return nv
}

// exec runs a prepared statement that returns no rows. The background
// context keeps the driver from starting an interrupt watcher per call.
func (c *conn) exec(st *stmt, vals ...driver.Value) error {
	nv := c.args(vals)
	_, err := st.ex.ExecContext(context.Background(), nv)
	clear(nv)
	return err
}

// query runs a prepared statement; the caller must close the rows, which
// resets the statement.
func (c *conn) query(st *stmt, vals ...driver.Value) (driver.Rows, error) {
	nv := c.args(vals)
	rows, err := st.q.QueryContext(context.Background(), nv)
	clear(nv)
	return rows, err
}

func (c *conn) close() error {
	var errs []error
	for _, st := range c.all {
		errs = append(errs, st.Close())
	}
	errs = append(errs, c.dc.Close())
	return errors.Join(errs...)
}

// write runs a Set or Delete.
func (c *conn) write(w pendingWrite) error {
	if w.del {
		return c.exec(c.del, w.key)
	}
	return c.exec(c.set, w.key, w.value)
}

// errTxDone is returned when a Tx is used after its function returned.
var errTxDone = errors.New("sqlitestore: transaction used after its function returned")

// tx implements storage.Tx on a conn inside an open SQLite transaction.
//
// An Update's writes are held in pend until its function returns: when it
// succeeds they go to SQLite one after another, and when it fails they are
// simply dropped, so the Update needs no SAVEPOINT (a SAVEPOINT statement,
// its RELEASE, and a copy of every page the Update modifies into the
// statement journal). Get sees the pending writes. A Scan cannot merge
// them cheaply; the first Scan after a write opens the SAVEPOINT, hands
// the pending writes to SQLite and from then on writes go straight
// through, as does everything else in that Update. Worth its lines: the
// SAVEPOINT, its RELEASE and the statement journal cost 7.6% of server CPU
// in a Put Blob profile, and lazuli-bench blob-put-1k from 16 clients went
// from about 4.4k to 6.3k ops/s when they went.
type tx struct {
	c         *conn
	ro        bool
	done      bool
	savepoint bool  // a SAVEPOINT is open for this Update's writes
	sqlErr    error // first error SQLite reported in this transaction

	pend    []pendingWrite
	pendIdx map[string]int // latest pending write by key, once pend is long
}

// pendingWrite is a Set (del false) or Delete of an Update not yet run.
type pendingWrite struct {
	key, value []byte
	del        bool
}

// pendIndexMin is the number of pending writes from which Get finds them
// through pendIdx instead of a backward search.
const pendIndexMin = 16

// pending returns the latest pending write of key.
func (t *tx) pending(key []byte) (pendingWrite, bool) {
	if t.pendIdx != nil {
		i, ok := t.pendIdx[string(key)]
		if !ok {
			return pendingWrite{}, false
		}
		return t.pend[i], true
	}
	for i := len(t.pend) - 1; i >= 0; i-- {
		if bytes.Equal(t.pend[i].key, key) {
			return t.pend[i], true
		}
	}
	return pendingWrite{}, false
}

// flush opens the SAVEPOINT if needed and runs the pending writes.
func (t *tx) flush() error {
	if len(t.pend) == 0 {
		return nil
	}
	if !t.savepoint {
		if err := t.c.exec(t.c.savepoint); err != nil {
			return t.fail(err)
		}
		t.savepoint = true
	}
	return t.runPending()
}

// runPending runs the pending writes in order and forgets them.
func (t *tx) runPending() error {
	for _, w := range t.pend {
		if err := t.apply(w); err != nil {
			return err
		}
	}
	clear(t.pend)
	t.pend, t.pendIdx = t.pend[:0], nil
	return nil
}

// apply runs one write in SQLite.
func (t *tx) apply(w pendingWrite) error {
	if err := t.c.write(w); err != nil {
		return t.fail(err)
	}
	return nil
}

// fail records an error SQLite reported and returns it.
func (t *tx) fail(err error) error {
	if t.sqlErr == nil {
		t.sqlErr = err
	}
	return err
}

func (t *tx) Get(key []byte) ([]byte, error) {
	if t.done {
		return nil, errTxDone
	}
	if len(t.pend) > 0 {
		if w, ok := t.pending(key); ok {
			if w.del {
				return nil, storage.ErrNotFound
			}
			if w.value == nil {
				return []byte{}, nil
			}
			return w.value, nil
		}
	}
	rows, err := t.c.query(t.c.get, key)
	if err != nil {
		return nil, t.fail(err)
	}
	var dest [1]driver.Value
	err = rows.Next(dest[:])
	// Closing resets the statement for its next use.
	if cerr := rows.Close(); err == nil || err == io.EOF {
		if cerr != nil {
			return nil, t.fail(cerr)
		}
	}
	switch {
	case err == io.EOF:
		return nil, storage.ErrNotFound
	case err != nil:
		return nil, t.fail(err)
	}
	return blob(dest[0])
}

// blob converts a column value the driver returned; the driver hands out a
// fresh copy, so it can be returned as is.
func blob(v driver.Value) ([]byte, error) {
	switch b := v.(type) {
	case []byte:
		if b == nil {
			return []byte{}, nil
		}
		return b, nil
	case nil:
		return []byte{}, nil
	case string:
		return []byte(b), nil
	}
	return nil, fmt.Errorf("sqlitestore: unexpected column type %T", v)
}

// write records a Set or Delete of an Update: pending until the Update's
// function returns, or run at once inside the SAVEPOINT once a Scan has
// opened it.
func (t *tx) write(w pendingWrite) error {
	if t.done {
		return errTxDone
	}
	if t.ro {
		return storage.ErrReadOnly
	}
	if t.savepoint {
		return t.apply(w)
	}
	t.pend = append(t.pend, w)
	switch n := len(t.pend); {
	case n > pendIndexMin:
		t.pendIdx[string(w.key)] = n - 1
	case n == pendIndexMin:
		t.pendIdx = make(map[string]int, 2*pendIndexMin)
		for i, p := range t.pend {
			t.pendIdx[string(p.key)] = i
		}
	}
	return nil
}

func (t *tx) Set(key, value []byte) error { return t.write(pendingWrite{key: key, value: value}) }

func (t *tx) Delete(key []byte) error { return t.write(pendingWrite{key: key, del: true}) }

func (t *tx) Scan(lower, upper []byte, reverse bool) storage.Iterator {
	if !t.done && len(t.pend) > 0 {
		// The range may hold pending writes: give them to SQLite first.
		if err := t.flush(); err != nil {
			return &iter{t: t, err: err, last: true}
		}
	}
	it := &iter{t: t, lo: bytes.Clone(lower), hi: bytes.Clone(upper), reverse: reverse}
	if upper != nil && it.hi == nil {
		it.hi = []byte{}
	}
	return it
}

// Page limits for Scan: a page is read completely and its statement reset
// before Next returns, so no statement stays open while the caller makes
// other calls on the same transaction. Pages start small, since many scans
// stop after a few rows, and double (up to 512 rows) for scans that keep
// going.
const (
	firstPageRows = 16
	pageBytes     = 1 << 20
)

type iter struct {
	t       *tx
	lo, hi  []byte // remaining range; hi == nil means unbounded
	reverse bool

	keys, vals [][]byte
	pos        int
	pageSize   int  // index of the next page's size (see scanStmt)
	last       bool // the current page is the final one
	err        error
	k, v       []byte
}

func (it *iter) fill() error {
	if it.t.done {
		return errTxDone
	}
	if len(it.t.pend) > 0 {
		// Writes made since the previous page must be visible to this one.
		if err := it.t.flush(); err != nil {
			return err
		}
	}
	kind := scanFwdOpen
	vals := []driver.Value{it.lo}
	if it.hi != nil {
		kind = scanFwd
		vals = append(vals, it.hi)
	}
	if it.reverse {
		kind += scanRev - scanFwd
	}
	limit := firstPageRows << it.pageSize
	st, err := it.t.c.scanStmt(kind, it.pageSize)
	if err != nil {
		return err
	}
	it.pageSize = min(it.pageSize+1, numPageSizes-1)
	rows, err := it.t.c.query(st, vals...)
	if err != nil {
		return err
	}
	it.keys, it.vals, it.pos = it.keys[:0], it.vals[:0], 0
	full, err := it.readPage(rows)
	// Closing resets the statement for its next use.
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	n := len(it.keys)
	it.last = !full && n < limit
	if n > 0 {
		// Narrow the remaining range past the page.
		lastKey := it.keys[n-1]
		if it.reverse {
			it.hi = lastKey
		} else {
			it.lo = append(bytes.Clone(lastKey), 0)
		}
	}
	return nil
}

// readPage appends rows to the page until they run out or the page holds
// pageBytes; full reports the latter.
func (it *iter) readPage(rows driver.Rows) (full bool, err error) {
	size := 0
	var dest [2]driver.Value
	for {
		err := rows.Next(dest[:])
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		k, err := blob(dest[0])
		if err != nil {
			return false, err
		}
		v, err := blob(dest[1])
		if err != nil {
			return false, err
		}
		it.keys = append(it.keys, k)
		it.vals = append(it.vals, v)
		size += len(k) + len(v)
		if size >= pageBytes {
			return true, nil
		}
	}
}

func (it *iter) Next() bool {
	if it.err != nil {
		return false
	}
	if it.pos >= len(it.keys) {
		if it.last {
			return false
		}
		if err := it.fill(); err != nil {
			if err != errTxDone {
				it.t.fail(err)
			}
			it.err = err
			return false
		}
		if len(it.keys) == 0 {
			it.last = true
			return false
		}
	}
	it.k, it.v = it.keys[it.pos], it.vals[it.pos]
	it.pos++
	return true
}

func (it *iter) Key() []byte   { return it.k }
func (it *iter) Value() []byte { return it.v }
func (it *iter) Err() error    { return it.err }
func (it *iter) Close() error {
	it.last, it.keys, it.vals, it.pos = true, nil, nil, 0
	return nil
}
