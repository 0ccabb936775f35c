package pgstore

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// Transactions talk to PostgreSQL through pgconn, below pgx's batches:
// every statement they send is one of the few in stmtNames, prepared on
// each connection before its first transaction (see prepare), and their
// parameters (int8, bytea and arrays of them) and results (bytea) are in
// PostgreSQL's binary format, which this file encodes itself. pgx's
// batches looked each statement up in a per-connection cache, planned the
// encoding of every argument by reflection and wrapped every result; in
// the server's CPU profiles under lazuli-bench on PostgreSQL that was
// about a tenth of lazuli's CPU per request.

// stmtNames names the prepared statements transactions use, by SQL.
var stmtNames = func() map[string]string {
	all := []string{beginSerializable, beginSnapshot, "COMMIT",
		sqlGet, sqlGetMany, sqlInsert, sqlUpsert, sqlUpdate, sqlUpdateMany, sqlDelete,
		sqlCheck, sqlCheckMany, sqlScanUp, sqlScanDown}
	for n := 1; n <= maxValuesRows; n++ {
		all = append(all, sqlUpsertValues[n], sqlInsertValues[n], sqlCheckValues[n])
	}
	m := make(map[string]string, len(all))
	for i, sql := range all {
		m[sql] = fmt.Sprintf("lazuli_%d", i)
	}
	return m
}()

// preparedKey marks, in a connection's custom data, that stmtNames are
// prepared on it.
const preparedKey = "lazuli_prepared"

// prepare prepares stmtNames on pc, in one round trip, unless done
// before. It runs at a transaction's first statement rather than when
// the connection opens, since the schema may not exist yet then.
func prepare(ctx context.Context, pc *pgconn.PgConn) error {
	if pc.CustomData()[preparedKey] != nil {
		return nil
	}
	p := pc.StartPipeline(ctx)
	for sql, name := range stmtNames {
		p.SendPrepare(name, sql, nil)
	}
	if err := p.Sync(); err != nil {
		p.Close()
		return err
	}
	for range stmtNames {
		if _, err := p.GetResults(); err != nil {
			p.Close()
			return err
		}
	}
	if _, err := p.GetResults(); err != nil { // the Sync
		p.Close()
		return err
	}
	if err := p.Close(); err != nil {
		return err
	}
	pc.CustomData()[preparedKey] = true
	return nil
}

// binaryFormat asks for every parameter or result column in binary.
var binaryFormat = []int16{1}

// batch is the statements of one round trip.
type batch struct {
	b pgconn.Batch
	n int
}

// queue adds statement sql with args, each an int64, an int, a []byte
// (nil: NULL), an []int64 or a [][]byte (nil elements: NULL).
func (b *batch) queue(sql string, args ...any) {
	name, ok := stmtNames[sql]
	if !ok {
		panic("pgstore: statement not prepared: " + sql)
	}
	vals := make([][]byte, len(args))
	for i, a := range args {
		vals[i] = encodeArg(a)
	}
	b.b.ExecPrepared(name, vals, binaryFormat, binaryFormat)
	b.n++
}

func (b *batch) len() int { return b.n }

// Element types of binary arrays.
const (
	oidBytea = 17
	oidInt8  = 20
)

func encodeArg(a any) []byte {
	switch v := a.(type) {
	case int64:
		return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(v))
	case int:
		return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(int64(v)))
	case []byte:
		if v == nil {
			return nil
		}
		if len(v) == 0 {
			return []byte{} // empty, not NULL
		}
		return v
	case []int64:
		buf := arrayHeader(len(v), oidInt8, false, 12*len(v))
		for _, x := range v {
			buf = binary.BigEndian.AppendUint32(buf, 8)
			buf = binary.BigEndian.AppendUint64(buf, uint64(x))
		}
		return buf
	case [][]byte:
		size, nulls := 0, false
		for _, x := range v {
			size += 4 + len(x)
			nulls = nulls || x == nil
		}
		buf := arrayHeader(len(v), oidBytea, nulls, size)
		for _, x := range v {
			if x == nil {
				buf = binary.BigEndian.AppendUint32(buf, 0xFFFFFFFF)
				continue
			}
			buf = binary.BigEndian.AppendUint32(buf, uint32(len(x)))
			buf = append(buf, x...)
		}
		return buf
	}
	panic(fmt.Sprintf("pgstore: no binary encoding for %T", a))
}

// arrayHeader begins a one-dimensional binary array of n elements of
// type elem, with room for size more bytes.
func arrayHeader(n int, elem uint32, nulls bool, size int) []byte {
	buf := make([]byte, 0, 20+size)
	if n == 0 {
		buf = binary.BigEndian.AppendUint32(buf, 0) // no dimensions
		buf = binary.BigEndian.AppendUint32(buf, 0)
		return binary.BigEndian.AppendUint32(buf, elem)
	}
	buf = binary.BigEndian.AppendUint32(buf, 1)
	hasNull := uint32(0)
	if nulls {
		hasNull = 1
	}
	buf = binary.BigEndian.AppendUint32(buf, hasNull)
	buf = binary.BigEndian.AppendUint32(buf, elem)
	buf = binary.BigEndian.AppendUint32(buf, uint32(n))
	return binary.BigEndian.AppendUint32(buf, 1) // lower bound
}

// send runs b in one round trip on pc. Each statement's outcome goes to
// done(i, err) in order, up to the first that fails (whose error send
// returns, as done made of it); rows of the last statement go to each
// (nil: none are read), their values valid only during the call.
func send(ctx context.Context, pc *pgconn.PgConn, b *batch, failed func(i int, err error) error, each func(vals [][]byte) error) error {
	mrr := pc.ExecBatch(ctx, &b.b)
	var err error
	i := 0
	for mrr.NextResult() {
		rr := mrr.ResultReader()
		if each != nil && i == b.n-1 {
			for rr.NextRow() {
				if err == nil {
					err = each(rr.Values())
				}
			}
		}
		if _, rerr := rr.Close(); rerr != nil && err == nil {
			err = failed(i, rerr)
		}
		i++
	}
	if cerr := mrr.Close(); cerr != nil && err == nil {
		// A statement's error ends the results: it is statement i's.
		err = failed(i, cerr)
	}
	return err
}
