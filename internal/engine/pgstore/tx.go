package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lazuli-storage/lazuli/storage"
)

// Statements of the key/value table.
const (
	beginSerializable = "BEGIN ISOLATION LEVEL SERIALIZABLE"
	beginSnapshot     = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"

	// sqlGet selects by h alone, so that only the primary key can
	// serve it (see keyHash); the caller picks k among the rows (two
	// keys of one hash are possible, if unlikely).
	sqlGet     = "SELECT k, v FROM lazuli_kv WHERE h = $1"
	sqlGetMany = "SELECT k, v FROM lazuli_kv WHERE h = ANY($1::int8[])"
	sqlInsert  = "INSERT INTO lazuli_kv (h, k, v) SELECT * FROM unnest($1::int8[], $2::bytea[], $3::bytea[])"
	sqlUpsert  = sqlInsert + " ON CONFLICT (h, k) DO UPDATE SET v = excluded.v"
	// sqlUpdate and sqlUpdateMany rewrite rows the transaction found
	// (see tx.known), failing if they meet fewer than they should.
	//
	// They and sqlDelete find their rows through the primary key, as
	// point reads do (see keyHash): k is compared with IS NOT DISTINCT
	// FROM (the same as = on a NOT NULL column), which no index serves,
	// so that the planner cannot pick lazuli_kv_k, whose pages hold a
	// queue's count shards side by side. Through that index every Put
	// Message's rewrite of its shard read (and SSI-locked) the one page
	// the other puts' rewrites wrote into, and 16 concurrent puts to one
	// queue ran again 0.07-0.2 times per Update (TestPutMessagesNoRetries
	// in the queue package).
	sqlUpdate = "WITH u AS (UPDATE lazuli_kv SET v = $3 WHERE h = $1 AND k IS NOT DISTINCT FROM $2 RETURNING 1) " +
		"SELECT 1 / count(*) FROM u"
	sqlUpdateMany = "WITH u AS (UPDATE lazuli_kv AS t SET v = x.v " +
		"FROM unnest($1::int8[], $2::bytea[], $3::bytea[]) AS x (h, k, v) WHERE t.h = x.h AND t.k IS NOT DISTINCT FROM x.k RETURNING 1) " +
		"SELECT 1 / (count(*) = $4)::int FROM u"
	sqlDelete = "DELETE FROM lazuli_kv AS t USING unnest($1::int8[], $2::bytea[]) AS x (h, k) " +
		"WHERE t.h = x.h AND t.k IS NOT DISTINCT FROM x.k"

	// sqlCheck, sqlCheckValues and sqlCheckMany check that keys hold
	// the values an Update took from the hints (NULL: absent), failing
	// with a division by zero (SQLSTATE 22012) if one does not (see
	// hints). They read through the primary key, as point reads do.
	sqlCheck = "SELECT 1 / ((SELECT v FROM lazuli_kv WHERE h = $1 AND k IS NOT DISTINCT FROM $2) " +
		"IS NOT DISTINCT FROM $3::bytea)::int"
	sqlCheckMany = "SELECT 1 / (count(*) = $4)::int FROM unnest($1::int8[], $2::bytea[], $3::bytea[]) AS x (h, k, v) " +
		"WHERE (SELECT t.v FROM lazuli_kv AS t WHERE t.h = x.h AND t.k IS NOT DISTINCT FROM x.k) IS NOT DISTINCT FROM x.v"

	// Scans always have an upper bound, at most reservedKeys (see
	// tx.Scan).
	sqlScanUp   = "SELECT k, v FROM lazuli_kv WHERE k >= $1 AND k < $2 ORDER BY k LIMIT $3"
	sqlScanDown = "SELECT k, v FROM lazuli_kv WHERE k >= $1 AND k < $2 ORDER BY k DESC LIMIT $3"
)

// maxValuesRows is the most rows written with one of sqlUpsertValues;
// larger sets of writes go as arrays through sqlUpsert. An Update writes a
// handful of keys, and a plain VALUES list costs PostgreSQL less to run
// than unnest of arrays (see the commit that introduced it).
const maxValuesRows = 8

// sqlUpsertValues[n] writes n rows given as 3n parameters (h, k, v);
// sqlInsertValues[n] inserts n rows known to be absent.
var sqlUpsertValues, sqlInsertValues = valuesStatements(func(int) string { return "INSERT INTO lazuli_kv (h, k, v) VALUES " },
	" ON CONFLICT (h, k) DO UPDATE SET v = excluded.v"),
	valuesStatements(func(int) string { return "INSERT INTO lazuli_kv (h, k, v) VALUES " }, "")

// sqlCheckValues[n] is sqlCheckMany for n keys given as 3n parameters
// (h, k, v), as a VALUES list for the reason above.
var sqlCheckValues = valuesStatements(func(n int) string { return fmt.Sprintf("SELECT 1 / (count(*) = %d)::int FROM (VALUES ", n) },
	") AS x (h, k, v) WHERE (SELECT t.v FROM lazuli_kv AS t WHERE t.h = x.h AND t.k IS NOT DISTINCT FROM x.k) IS NOT DISTINCT FROM x.v")

// valuesStatements returns, for n from 1 to maxValuesRows, head(n), a
// list of n rows of parameters (h, k, v), and tail.
func valuesStatements(head func(n int) string, tail string) []string {
	out := make([]string, maxValuesRows+1)
	for n := 1; n <= maxValuesRows; n++ {
		var b strings.Builder
		b.WriteString(head(n))
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "($%d::int8, $%d::bytea, $%d::bytea)", 3*i+1, 3*i+2, 3*i+3)
		}
		b.WriteString(tail)
		out[n] = b.String()
	}
	return out
}

// keyHash is the h column of key k: FNV-1a, 64 bits, then a 64-bit
// finalizer (MurmurHash3's), without which keys that differ only in their
// last bytes (blob-1, blob-2) get neighbouring hashes, and so one page.
//
// Why a hash: PostgreSQL's SERIALIZABLE records what a transaction read as
// locks on whole index pages, and a read of an absent key (the new blob,
// entity or message a request creates) locks the page where the key would
// go. Keys written together (blobs of one container, messages of one
// queue) sort next to each other, so with an index on k alone every such
// transaction read the page the others insert into, and about half of
// them failed to serialize and ran again (measured: 16 writers of
// disjoint new keys, 1,562 retries in 3,201 Updates; see
// BenchmarkUpdateNewKeys). In hash order their pages differ; range scans
// still lock the k index's pages, which is what their correctness needs.
// Point reads name only h, so the planner cannot serve them from the k
// index (smaller, and so its choice when k is named too).
func keyHash(k []byte) int64 {
	h := uint64(14695981039346656037)
	for _, c := range k {
		h ^= uint64(c)
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return int64(h)
}

// Scan pages: the first is small (listings often stop early), later ones
// grow fourfold, so that a listing or query of a few hundred rows takes
// three round trips rather than five (lazuli-bench table-query-partition,
// 500 entities: see the commit that introduced it).
const (
	firstPage  = 32
	pageGrowth = 4
	maxPage    = 1024
)

// errTxDone is returned by a Tx used after its function returned.
var errTxDone = errors.New("pgstore: transaction used after it ended")

// errReservedKey is returned by a write of a key under reservedKeys.
var errReservedKey = errors.New("pgstore: keys beginning with eight 0xFF bytes are reserved")

// reserved reports whether key is one the engine keeps for itself.
func reserved(key []byte) bool { return strings.HasPrefix(string(key), reservedKeys) }

// tx is one View or Update attempt on one pooled connection. BEGIN is
// sent with the first statement; writes are held in pend until a Scan or
// the commit sends them.
type tx struct {
	ctx   context.Context
	s     *Store
	c     *pgxpool.Conn // taken at the first statement
	write bool
	begin string
	begun bool
	done  bool
	// released is set once the connection went back to the pool.
	released bool
	// err is the first statement failure: the database transaction is
	// aborted from then on.
	err  error
	pend map[string]pendingWrite
	// known holds what this transaction learnt of keys' presence in the
	// table (by reading them, or from statements it already sent): true
	// for a row that is there, false for one that is not. A key known to
	// be there is rewritten with UPDATE, one known to be absent with a
	// plain INSERT; both cost the database less than INSERT ... ON
	// CONFLICT, whose check of the primary key also takes SSI locks on
	// the index pages it looks at, and so causes serialization failures
	// between writers of unrelated keys. Under SERIALIZABLE no other
	// transaction can remove or add such a row without one of the two
	// failing to serialize (an INSERT that meets a row another
	// transaction added is a unique violation, retried like a
	// serialization failure); should an UPDATE still miss a row, it fails
	// (division by zero) and so does the transaction.
	known map[string]bool
	// read holds what Get and GetMany found in the table (nil for an
	// absent key), so that reading a key again costs no round trip: the
	// transaction reads one snapshot, and its own writes are in pend or,
	// once sent, copied here (see queue). A caller that knows it will
	// need a key later in the transaction can so fold that read into an
	// earlier GetMany (Put Blob reads the account's delete retention
	// policy with the blob, its staging record and its container).
	read map[string][]byte
	// spec: reads may come from the store's hints (see hints).
	spec bool
	// assumed holds what reads took from the hints that no statement has
	// checked yet (nil: absent); hinted lists every key read from them
	// in this attempt.
	assumed map[string][]byte
	hinted  []string
	// check is the place, in the batch being sent, of the statement
	// that checks assumed (-1: none).
	check int
	// wrote lists the keys of the writes sent, for the hints once the
	// transaction commits.
	wrote []string
}

// errStaleHint fails an attempt whose reads from the hints did not match
// the database: the attempt is run again reading the database.
var errStaleHint = errors.New("pgstore: a hinted read was stale")

// checkFailed returns the error of statement i of the batch just sent:
// errStaleHint when it is the check of hinted reads and found them stale.
func (t *tx) checkFailed(i int, err error) error {
	var pe *pgconn.PgError
	if i == t.check && errors.As(err, &pe) && pe.Code == "22012" {
		return fmt.Errorf("%w: %v", errStaleHint, err)
	}
	return err
}

// hinted answers a read of keys from the hints, if every one of them can
// be: what each holds, copied, in vs (nil: absent).
func (t *tx) fromHints(keys [][]byte) (vs [][]byte, ok bool) {
	if !t.spec || t.err != nil {
		return nil, false
	}
	hs := make([][]byte, len(keys))
	for i, k := range keys {
		if hs[i], ok = t.s.hints.get(string(k)); !ok {
			return nil, false
		}
	}
	vs = make([][]byte, len(keys))
	if t.assumed == nil {
		t.assumed = make(map[string][]byte, len(keys))
	}
	for i, k := range keys {
		ks := string(k) // one copy of the key for every map below
		t.assumed[ks] = hs[i]
		t.hinted = append(t.hinted, ks)
		vs[i] = bytes.Clone(hs[i])
		t.learn(ks, vs[i] != nil)
		t.remember(ks, vs[i])
	}
	return vs, true
}

// queueCheck adds to b the check of the hinted reads not checked yet.
func (t *tx) queueCheck(b *batch) {
	t.check = -1
	if len(t.assumed) == 0 {
		return
	}
	t.check = b.len()
	switch n := len(t.assumed); {
	case n == 1:
		for k, v := range t.assumed {
			b.queue(sqlCheck, keyHash([]byte(k)), []byte(k), v)
		}
	case n <= maxValuesRows:
		args := make([]any, 0, 3*n)
		for k, v := range t.assumed {
			args = append(args, keyHash([]byte(k)), []byte(k), v)
		}
		b.queue(sqlCheckValues[n], args...)
	default:
		hs := make([]int64, 0, len(t.assumed))
		ks := make([][]byte, 0, len(t.assumed))
		vs := make([][]byte, 0, len(t.assumed))
		for k, v := range t.assumed {
			hs, ks, vs = append(hs, keyHash([]byte(k))), append(ks, []byte(k)), append(vs, v)
		}
		b.queue(sqlCheckMany, hs, ks, vs, len(ks))
	}
	t.assumed = nil
}

// countTrip counts a round trip of an Update (UpdateStats.RoundTrips).
func (t *tx) countTrip() {
	if t.write {
		t.s.stats.roundTrips.Add(1)
	}
}

// remember records what a read found at key (nil: absent).
func (t *tx) remember(key string, v []byte) {
	if t.read == nil {
		t.read = map[string][]byte{}
	}
	t.read[key] = v
}

// recall returns what this transaction already knows to be at key: its
// own pending write, or what it read; ok is false when it must ask the
// database.
func (t *tx) recall(key []byte) (v []byte, ok bool) {
	if p, held := t.pend[string(key)]; held {
		if p.del {
			return nil, true
		}
		return p.v, true
	}
	v, ok = t.read[string(key)]
	return v, ok
}

// learn records whether key is in the table.
func (t *tx) learn(key string, there bool) {
	if !t.write {
		return
	}
	if t.known == nil {
		t.known = map[string]bool{}
	}
	t.known[key] = there
}

type pendingWrite struct {
	v   []byte
	del bool
	// insert: the caller vouched that the key is absent (see Insert).
	insert bool
}

func (t *tx) Get(key []byte) ([]byte, error) {
	if t.done {
		return nil, errTxDone
	}
	if v, ok := t.recall(key); ok {
		return foundValue(v != nil, v)
	}
	if vs, ok := t.fromHints([][]byte{key}); ok {
		return foundValue(vs[0] != nil, vs[0])
	}
	var v []byte
	found := false
	err := t.run(sqlGet, []any{keyHash(key)}, func(r [][]byte) error {
		if bytes.Equal(r[0], key) {
			found, v = true, bytes.Clone(r[1])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ks := string(key)
	t.learn(ks, found)
	v, err = foundValue(found, v)
	t.remember(ks, v)
	t.hint(ks, v)
	return v, err
}

// hint records in the hints what an Update read in the database.
func (t *tx) hint(key string, v []byte) {
	if t.write {
		t.s.hints.put(key, v)
	}
}

// GetMany reads keys in one statement (see storage.MultiGetter).
func (t *tx) GetMany(keys [][]byte) ([][]byte, error) {
	if t.done {
		return nil, errTxDone
	}
	out := make([][]byte, len(keys))
	hs := make([]int64, 0, len(keys))
	need := make([]int, 0, len(keys))
	for i, k := range keys {
		if v, ok := t.recall(k); ok {
			out[i] = v
			continue
		}
		hs, need = append(hs, keyHash(k)), append(need, i)
	}
	if len(hs) == 0 {
		return out, nil
	}
	missing := make([][]byte, len(need))
	for j, i := range need {
		missing[j] = keys[i]
	}
	if vs, ok := t.fromHints(missing); ok {
		for j, i := range need {
			out[i] = vs[j]
		}
		return out, nil
	}
	err := t.run(sqlGetMany, []any{hs}, func(r [][]byte) error {
		k := r[0]
		for _, i := range need {
			if bytes.Equal(keys[i], k) {
				out[i] = append([]byte{}, r[1]...)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, i := range need {
		ks := string(keys[i])
		t.learn(ks, out[i] != nil)
		t.remember(ks, out[i])
		t.hint(ks, out[i])
	}
	return out, nil
}

// foundValue is the outcome of a point read.
func foundValue(found bool, v []byte) ([]byte, error) {
	if !found {
		return nil, storage.ErrNotFound
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

func (t *tx) Set(key, value []byte) error { return t.set(key, value, false) }

// Insert stores a key the caller knows to be absent (see
// storage.Inserter): a plain INSERT, which fails the transaction if the
// key exists after all.
func (t *tx) Insert(key, value []byte) error { return t.set(key, value, true) }

func (t *tx) set(key, value []byte, insert bool) error {
	if !t.write {
		return storage.ErrReadOnly
	}
	if t.done {
		return errTxDone
	}
	if reserved(key) {
		return errReservedKey
	}
	if value == nil {
		value = []byte{}
	}
	if insert {
		// Deleted by this transaction but not yet in the table: the row
		// may still be there, for a Set to replace.
		_, held := t.pend[string(key)]
		insert = !held
	}
	t.put(key, pendingWrite{v: value, insert: insert})
	return nil
}

func (t *tx) Delete(key []byte) error {
	if !t.write {
		return storage.ErrReadOnly
	}
	if t.done {
		return errTxDone
	}
	if reserved(key) {
		return errReservedKey
	}
	t.put(key, pendingWrite{del: true})
	return nil
}

func (t *tx) put(key []byte, p pendingWrite) {
	if t.pend == nil {
		t.pend = map[string]pendingWrite{}
	}
	t.pend[string(key)] = p
}

// acquire takes the connection for the first statement. Taking it this
// late keeps a View or Update that waits on something else (a nested
// View) from holding a connection others need.
func (t *tx) acquire() error {
	if t.c != nil {
		return nil
	}
	c, err := t.s.pool.Acquire(t.ctx)
	if err != nil {
		t.err = err
		return err
	}
	if err := prepare(t.ctx, c.Conn().PgConn()); err != nil {
		c.Release()
		t.err = err
		return err
	}
	t.c = c
	return nil
}

// queueRows adds to b the statement that writes rows (hs[i], ks[i],
// vs[i]): few[n] with its VALUES list for up to maxValuesRows rows, else
// many with arrays.
func queueRows(b *batch, few []string, many string, hs []int64, ks, vs [][]byte) {
	switch {
	case len(ks) == 0:
	case len(ks) <= maxValuesRows:
		args := make([]any, 0, 3*len(ks))
		for i := range ks {
			args = append(args, hs[i], ks[i], vs[i])
		}
		b.queue(few[len(ks)], args...)
	default:
		b.queue(many, hs, ks, vs)
	}
}

// queue adds BEGIN (once) and the held writes to b.
func (t *tx) queue(b *batch) {
	if !t.begun {
		b.queue(t.begin)
	}
	// The check goes before the writes, which may rewrite what it
	// checks.
	t.queueCheck(b)
	if len(t.pend) == 0 {
		return
	}
	var ks, vs, dels, uks, uvs, iks, ivs [][]byte
	var hs, dhs, uhs, ihs []int64
	for k, p := range t.pend {
		there, known := t.known[k]
		switch {
		case p.del:
			dhs, dels = append(dhs, keyHash([]byte(k))), append(dels, []byte(k))
			t.learn(k, false)
			t.remember(k, nil)
			continue
		case known && there:
			uhs, uks, uvs = append(uhs, keyHash([]byte(k))), append(uks, []byte(k)), append(uvs, p.v)
		case known || p.insert:
			ihs, iks, ivs = append(ihs, keyHash([]byte(k))), append(iks, []byte(k)), append(ivs, p.v)
		default:
			hs, ks, vs = append(hs, keyHash([]byte(k))), append(ks, []byte(k)), append(vs, p.v)
		}
		t.learn(k, true)
		t.remember(k, p.v)
	}
	for k := range t.pend {
		t.wrote = append(t.wrote, k)
	}
	queueRows(b, sqlInsertValues, sqlInsert, ihs, iks, ivs)
	switch {
	case len(uks) == 0:
	case len(uks) == 1:
		b.queue(sqlUpdate, uhs[0], uks[0], uvs[0])
	default:
		b.queue(sqlUpdateMany, uhs, uks, uvs, len(uks))
	}
	queueRows(b, sqlUpsertValues, sqlUpsert, hs, ks, vs)
	if len(dels) > 0 {
		b.queue(sqlDelete, dhs, dels)
	}
	t.pend = nil
}

// run sends BEGIN if needed, the held writes and one query in a single
// round trip, and calls each for every row (its columns' values, valid
// during the call).
func (t *tx) run(sql string, args []any, each func([][]byte) error) error {
	if t.err != nil {
		return t.err
	}
	if err := t.acquire(); err != nil {
		return err
	}
	b := &batch{}
	t.queue(b)
	b.queue(sql, args...)
	t.countTrip()
	err := send(t.ctx, t.c.Conn().PgConn(), b, t.checkFailed, each)
	t.begun = true
	if err != nil {
		t.err = err
	}
	return err
}

// commit sends BEGIN if needed, the held writes and COMMIT in one round
// trip, and releases the connection. The commit runs to its end even if
// the caller's context ends: its outcome must be reported.
func (t *tx) commit() error {
	if !t.begun && len(t.pend) == 0 {
		err := t.verify()
		t.finish(false)
		return err
	}
	if err := t.acquire(); err != nil {
		t.released = true
		return err
	}
	ctx := t.ctx
	if dl, _ := ctx.Deadline(); time.Until(dl) < commitTimeout {
		// fn ran long: the commit still gets its own commitTimeout.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
		defer cancel()
	}
	b := &batch{}
	t.queue(b)
	b.queue("COMMIT")
	t.countTrip()
	err := send(ctx, t.c.Conn().PgConn(), b, t.checkFailed, nil)
	t.begun = true
	t.release()
	var pe *pgconn.PgError
	switch {
	case err == nil:
		for _, k := range t.wrote {
			t.s.hints.put(k, t.read[k])
		}
	case !errors.Is(err, errStaleHint) && !errors.As(err, &pe):
		// Whether the writes were committed is unknown.
		t.s.hints.drop(t.wrote)
	}
	return err
}

// verify checks the hinted reads not checked yet, alone: inside the
// transaction once it has begun, else as a statement of its own, whose
// one snapshot is enough for an attempt that writes nothing.
func (t *tx) verify() error {
	if t.err != nil || len(t.assumed) == 0 {
		return t.err
	}
	if err := t.acquire(); err != nil {
		return err
	}
	b := &batch{}
	t.queueCheck(b)
	t.countTrip()
	if err := send(t.ctx, t.c.Conn().PgConn(), b, t.checkFailed, nil); err != nil {
		t.err = err
	}
	return t.err
}

// finish ends the transaction without committing and releases the
// connection.
func (t *tx) finish(bool) {
	t.done = true
	t.release()
}

// rollbackTimeout bounds the ROLLBACK of a transaction left open.
const rollbackTimeout = 5 * time.Second

// release rolls back whatever transaction is still open on the
// connection and returns it to the pool (which drops a connection that is
// broken or still inside a transaction). The ROLLBACK's context is made
// only when one is sent: after a COMMIT or a read-only attempt that sent
// nothing, none is, and the timer of a context per Update showed in the
// server's CPU profile.
func (t *tx) release() {
	if t.c == nil {
		t.released = true
		return
	}
	pc := t.c.Conn().PgConn()
	if !pc.IsClosed() && pc.TxStatus() != 'I' {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.ctx), rollbackTimeout)
		if _, err := pc.Exec(ctx, "ROLLBACK").ReadAll(); err != nil {
			pc.Close(ctx)
		}
		cancel()
	}
	t.c.Release()
	t.released = true
}

func (t *tx) Scan(lower, upper []byte, reverse bool) storage.Iterator {
	if t.done {
		return &iter{err: errTxDone}
	}
	if lower == nil {
		lower = []byte{} // NULL would match nothing
	}
	if upper == nil || string(upper) > reservedKeys {
		// The placeholders stay out of sight (see placeholders).
		upper = []byte(reservedKeys)
	}
	return &iter{t: t, lower: lower, upper: upper, reverse: reverse, limit: firstPage}
}

// iter reads a key range in pages, each page one query in the
// transaction's snapshot, so Gets may run between its pages.
type iter struct {
	t            *tx
	lower, upper []byte
	reverse      bool
	limit        int
	last         bool // the previous page was the last
	page         []kv
	i            int
	cur          kv
	err          error
	closed       bool
}

type kv struct{ k, v []byte }

func (it *iter) Next() bool {
	if it.err != nil || it.closed {
		return false
	}
	if it.i >= len(it.page) {
		if it.last || !it.fetch() {
			return false
		}
	}
	it.cur = it.page[it.i]
	it.i++
	return true
}

func (it *iter) fetch() bool {
	if it.t.done {
		it.err = errTxDone
		return false
	}
	if string(it.lower) >= string(it.upper) {
		it.last = true
		return false
	}
	sql, args := sqlScanUp, []any{it.lower, it.upper, it.limit}
	if it.reverse {
		sql = sqlScanDown
	}
	page := it.page[:0]
	err := it.t.run(sql, args, func(r [][]byte) error {
		page = append(page, kv{k: append([]byte{}, r[0]...), v: append([]byte{}, r[1]...)})
		return nil
	})
	if err != nil {
		it.err = err
		return false
	}
	it.page, it.i = page, 0
	if len(page) < it.limit {
		it.last = true
	} else {
		lastKey := page[len(page)-1].k
		if it.reverse {
			it.upper = lastKey
		} else {
			it.lower = append(append(make([]byte, 0, len(lastKey)+1), lastKey...), 0)
		}
		it.limit = min(it.limit*pageGrowth, maxPage)
	}
	// Entries of the page are handed out; a new slice for the next one.
	it.page = page
	return len(page) > 0
}

func (it *iter) Key() []byte   { return it.cur.k }
func (it *iter) Value() []byte { return it.cur.v }
func (it *iter) Err() error    { return it.err }
func (it *iter) Close() error  { it.closed = true; return nil }
