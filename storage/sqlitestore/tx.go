package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/lazuli-storage/lazuli/storage"
)

// conn is one SQLite connection with its prepared statements. A conn is
// used by one goroutine at a time: the writer goroutine, or the View that
// borrowed it from the pool.
type conn struct {
	sc *sql.Conn

	begin, beginImmediate, commit, rollback *sql.Stmt
	savepoint, release, rollbackTo          *sql.Stmt

	get, set, del *sql.Stmt
	// scan statements indexed by scanKind.
	scan [4]*sql.Stmt

	all []*sql.Stmt
}

const (
	scanFwd = iota
	scanFwdOpen
	scanRev
	scanRevOpen
)

// SQLite binds a zero-length Go slice as NULL; coalesce turns it back into
// the empty blob so that empty keys and values behave like any other.
func prepare(sc *sql.Conn, writer bool) (*conn, error) {
	c := &conn{sc: sc}
	p := func(dst **sql.Stmt, query string) error {
		st, err := sc.PrepareContext(context.Background(), query)
		if err != nil {
			return fmt.Errorf("sqlitestore: prepare %q: %w", query, err)
		}
		*dst = st
		c.all = append(c.all, st)
		return nil
	}
	const (
		fwd     = `SELECT k, v FROM kv WHERE k >= coalesce(?1, x'') AND k < ?2 ORDER BY k LIMIT ?3`
		fwdOpen = `SELECT k, v FROM kv WHERE k >= coalesce(?1, x'') ORDER BY k LIMIT ?2`
		rev     = `SELECT k, v FROM kv WHERE k >= coalesce(?1, x'') AND k < ?2 ORDER BY k DESC LIMIT ?3`
		revOpen = `SELECT k, v FROM kv WHERE k >= coalesce(?1, x'') ORDER BY k DESC LIMIT ?2`
	)
	err := errors.Join(
		p(&c.begin, `BEGIN`),
		p(&c.commit, `COMMIT`),
		p(&c.rollback, `ROLLBACK`),
		p(&c.get, `SELECT v FROM kv WHERE k = coalesce(?1, x'')`),
		p(&c.scan[scanFwd], fwd),
		p(&c.scan[scanFwdOpen], fwdOpen),
		p(&c.scan[scanRev], rev),
		p(&c.scan[scanRevOpen], revOpen),
	)
	if err == nil && writer {
		err = errors.Join(
			p(&c.beginImmediate, `BEGIN IMMEDIATE`),
			p(&c.savepoint, `SAVEPOINT u`),
			p(&c.release, `RELEASE u`),
			p(&c.rollbackTo, `ROLLBACK TO u`),
			p(&c.set, `INSERT OR REPLACE INTO kv (k, v) VALUES (coalesce(?1, x''), coalesce(?2, x''))`),
			p(&c.del, `DELETE FROM kv WHERE k = coalesce(?1, x'')`),
		)
	}
	if err != nil {
		for _, st := range c.all {
			st.Close()
		}
		return nil, err
	}
	return c, nil
}

// exec runs a prepared statement that returns no rows. The background
// context keeps the driver from starting an interrupt watcher per call.
func (c *conn) exec(st *sql.Stmt, args ...any) error {
	_, err := st.ExecContext(context.Background(), args...)
	return err
}

func (c *conn) close() error {
	var errs []error
	for _, st := range c.all {
		errs = append(errs, st.Close())
	}
	errs = append(errs, c.sc.Close())
	return errors.Join(errs...)
}

// errTxDone is returned when a Tx is used after its function returned.
var errTxDone = errors.New("sqlitestore: transaction used after its function returned")

// tx implements storage.Tx on a conn inside an open SQLite transaction.
type tx struct {
	c         *conn
	ro        bool
	done      bool
	savepoint bool  // a SAVEPOINT is open for this Update's writes
	err       error // first failed write
}

func (t *tx) Get(key []byte) ([]byte, error) {
	if t.done {
		return nil, errTxDone
	}
	var v []byte
	err := t.c.get.QueryRowContext(context.Background(), key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, storage.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// write runs a statement of an Update, opening the Update's SAVEPOINT on
// its first write so that read-only Updates cost no savepoint at all.
func (t *tx) write(st *sql.Stmt, args ...any) error {
	if t.done {
		return errTxDone
	}
	if t.ro {
		return storage.ErrReadOnly
	}
	if !t.savepoint {
		if err := t.c.exec(t.c.savepoint); err != nil {
			t.err = err
			return err
		}
		t.savepoint = true
	}
	if err := t.c.exec(st, args...); err != nil {
		if t.err == nil {
			t.err = err
		}
		return err
	}
	return nil
}

func (t *tx) Set(key, value []byte) error { return t.write(t.c.set, key, value) }

func (t *tx) Delete(key []byte) error { return t.write(t.c.del, key) }

func (t *tx) Scan(lower, upper []byte, reverse bool) storage.Iterator {
	it := &iter{t: t, lo: bytes.Clone(lower), hi: bytes.Clone(upper), reverse: reverse}
	if upper != nil && it.hi == nil {
		it.hi = []byte{}
	}
	return it
}

// Page limits for Scan: a page is read completely and its statement reset
// before Next returns, so no statement stays open while the caller makes
// other calls on the same transaction.
const (
	pageRows  = 256
	pageBytes = 1 << 20
)

type iter struct {
	t       *tx
	lo, hi  []byte // remaining range; hi == nil means unbounded
	reverse bool

	keys, vals [][]byte
	pos        int
	last       bool // the current page is the final one
	err        error
	k, v       []byte
}

func (it *iter) fill() error {
	if it.t.done {
		return errTxDone
	}
	var st *sql.Stmt
	args := []any{it.lo}
	switch {
	case !it.reverse && it.hi != nil:
		st = it.t.c.scan[scanFwd]
		args = append(args, it.hi)
	case !it.reverse:
		st = it.t.c.scan[scanFwdOpen]
	case it.hi != nil:
		st = it.t.c.scan[scanRev]
		args = append(args, it.hi)
	default:
		st = it.t.c.scan[scanRevOpen]
	}
	args = append(args, pageRows)
	rows, err := st.QueryContext(context.Background(), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	it.keys, it.vals, it.pos = it.keys[:0], it.vals[:0], 0
	size := 0
	full := false
	for rows.Next() {
		var k, v []byte
		if err := rows.Scan(&k, &v); err != nil {
			return err
		}
		if v == nil {
			v = []byte{}
		}
		it.keys = append(it.keys, k)
		it.vals = append(it.vals, v)
		size += len(k) + len(v)
		if size >= pageBytes {
			full = true
			break
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if err := rows.Close(); err != nil {
		return err
	}
	n := len(it.keys)
	it.last = !full && n < pageRows
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

func (it *iter) Next() bool {
	if it.err != nil {
		return false
	}
	if it.pos >= len(it.keys) {
		if it.last {
			return false
		}
		if err := it.fill(); err != nil {
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
