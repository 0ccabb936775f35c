package table

import (
	"context"
	"encoding/binary"
	"math"

	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/table/odata"
	"github.com/lazuli-storage/lazuli/storage"
)

// RowPage is one page of Query Entities as stored records: the keys and the
// encoded record of every entity, so a caller can render entities without
// building an Entity (and its strings) for each. The slices are the ones
// the engine handed out, which the storage contract keeps valid and
// unchanged after the transaction. A RowPage can be reused for the next
// query.
type RowPage struct {
	rows []Row
	size int
	// More is set when the client should continue at (NextPartitionKey,
	// NextRowKey).
	More             bool
	NextPartitionKey string
	NextRowKey       string
}

// Len is the number of entities in the page.
func (p *RowPage) Len() int { return len(p.rows) }

// Row returns the i-th entity of the page.
func (p *RowPage) Row(i int) Row { return p.rows[i] }

// Size is the number of bytes of keys and records in the page.
func (p *RowPage) Size() int { return p.size }

// Reset empties the page and lets go of its records.
func (p *RowPage) Reset() { p.reset() }

func (p *RowPage) reset() {
	clear(p.rows) // drop references to the previous page's records
	p.rows = p.rows[:0]
	p.size = 0
	p.More, p.NextPartitionKey, p.NextRowKey = false, "", ""
}

func (p *RowPage) add(pk, rk, rec []byte) {
	p.rows = append(p.rows, Row{PartitionKey: pk[:len(pk):len(pk)], RowKey: rk[:len(rk):len(rk)], rec: rec[:len(rec):len(rec)]})
	p.size += len(pk) + len(rk) + len(rec)
}

// Row is one entity of a RowPage. Its byte slices alias the page.
type Row struct {
	PartitionKey []byte
	RowKey       []byte
	rec          []byte
}

// Timestamp is the entity's Timestamp in ticks.
func (r Row) Timestamp() int64 { return int64(binary.BigEndian.Uint64(r.rec[1:9])) }

// Props returns an iterator over the custom properties in stored order.
func (r Row) Props() PropIter {
	it, _ := propsOf(r.rec)
	return it
}

// propsOf returns an iterator over the custom properties of the record
// rec; ok is false when the record's header is malformed (the iterator is
// then empty).
func propsOf(rec []byte) (it PropIter, ok bool) {
	if len(rec) < 9 || rec[0] != encVersion {
		return PropIter{}, false
	}
	b := rec[9:]
	cnt, n := binary.Uvarint(b)
	if n <= 0 || cnt > 1024 {
		return PropIter{}, false
	}
	return PropIter{b: b[n:], left: cnt}, true
}

// Lookup finds the custom property name.
func (r Row) Lookup(name string, p *RawProp) bool {
	it := r.Props()
	for it.Next(p) {
		if string(p.Name) == name {
			return true
		}
	}
	return false
}

// RawProp is one custom property read from a stored record. Name and Data
// alias the record.
//
//	String, Guid: Data holds the text
//	Binary:       Data holds the bytes
//	Int32, Int64: Int
//	DateTime:     Int (ticks)
//	Double:       Float
//	Boolean:      Bool
type RawProp struct {
	Name  []byte
	Type  odata.Type
	Data  []byte
	Int   int64
	Float float64
	Bool  bool
}

// PropIter walks the properties of a stored record, checking every
// length against the record. It is the one reader of the property
// encoding: decoding, filter lookups and response rendering all walk
// records with it. It slices the record itself, with content.Uvarint for
// lengths, rather than calling a content.Reader's methods, which made
// checkRecord take about 60% more CPU (BenchmarkEntityRecord/check).
type PropIter struct {
	b    []byte
	left uint64
	bad  bool // the record is malformed
}

// Next reads the next property into p; it reports false at the end, and
// also at a malformed property (bad is then set).
func (it *PropIter) Next(p *RawProp) bool {
	if it.left == 0 || it.bad {
		return false
	}
	it.left--
	b := it.b
	l, n := content.Uvarint(b)
	if n <= 0 || uint64(len(b)-n) <= l { // the name, then a type byte
		it.bad = true
		return false
	}
	p.Name = b[n : n+int(l)]
	p.Type = odata.Type(b[n+int(l)])
	b = b[n+int(l)+1:]
	switch p.Type {
	case odata.String, odata.Guid, odata.Binary:
		l, n := content.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			it.bad = true
			return false
		}
		p.Data = b[n : n+int(l)]
		b = b[n+int(l):]
	case odata.Int32:
		if len(b) < 4 {
			it.bad = true
			return false
		}
		p.Int = int64(int32(binary.BigEndian.Uint32(b)))
		b = b[4:]
	case odata.Int64, odata.DateTime, odata.Double:
		if len(b) < 8 {
			it.bad = true
			return false
		}
		u := binary.BigEndian.Uint64(b)
		p.Int, p.Float = int64(u), math.Float64frombits(u)
		b = b[8:]
	case odata.Boolean:
		if len(b) < 1 {
			it.bad = true
			return false
		}
		p.Bool = b[0] != 0
		b = b[1:]
	default:
		it.bad = true
		return false
	}
	it.b = b
	return true
}

// value is the property as an odata.Value; Str is a copy of Data, Bytes
// aliases it.
func (p *RawProp) value() odata.Value {
	v := odata.Value{Type: p.Type}
	switch p.Type {
	case odata.String, odata.Guid:
		v.Str = string(p.Data)
	case odata.Binary:
		v.Bytes = p.Data
	case odata.Int32, odata.Int64, odata.DateTime:
		v.Int = p.Int
	case odata.Double:
		v.Float = p.Float
	case odata.Boolean:
		v.Bool = p.Bool
	}
	return v
}

// checkRecord reports whether b is a well-formed entity record: the
// checks PropIter makes, without reading anything. A query checks every
// row it returns before it renders any, so this runs once per row; it is
// kept beside PropIter because walking the record with PropIter instead
// made Query Entities (WorkloadQueryPartition, memory engine) spend about
// 13% more CPU.
func checkRecord(b []byte) bool {
	if len(b) < 9 || b[0] != encVersion {
		return false
	}
	b = b[9:]
	cnt, n := binary.Uvarint(b)
	if n <= 0 || cnt > 1024 {
		return false
	}
	b = b[n:]
	skip := func() bool {
		l, n := content.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			return false
		}
		b = b[n+int(l):]
		return true
	}
	for i := uint64(0); i < cnt; i++ {
		if !skip() || len(b) < 1 {
			return false
		}
		t := odata.Type(b[0])
		b = b[1:]
		w := 0
		switch t {
		case odata.String, odata.Guid, odata.Binary:
			if !skip() {
				return false
			}
		case odata.Int32:
			w = 4
		case odata.Int64, odata.DateTime, odata.Double:
			w = 8
		case odata.Boolean:
			w = 1
		default:
			return false
		}
		if len(b) < w {
			return false
		}
		b = b[w:]
	}
	return true
}

// QueryRows is QueryEntities returning the stored records of the page in
// page (which it resets first) rather than decoded entities: same order,
// filter, page size, scan cap and continuation.
//
// A page is kept in memory only up to hold bytes of keys and records
// (hold <= 0: no bound). A larger page is not kept: page is left with its
// extent only (More and the next keys; Len is 0), and stream is called,
// still inside the read transaction that found the page, with a function
// that hands each of the page's rows in order to its argument (the rows'
// slices are valid only during that call); QueryRows returns what stream
// returns. So a page of large entities (up to 1,000 of up to 1 MiB each)
// never sits in memory whole, whatever the engine: engines that copy
// records out of storage (SQLite, PostgreSQL) copy one row at a time.
func (s *Service) QueryRows(ctx context.Context, account, table string, q Query, page *RowPage, hold int, stream func(page *RowPage, rows func(func(Row) error) error) error) error {
	top := pageSize(q.Top)
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		page.reset()
		count, over := 0, false
		more, npk, nrk, err := s.scanTx(tx, account, table, q, top, func(pk, rk, rec []byte) error {
			if !checkRecord(rec) {
				return errCorrupt
			}
			count++
			if over {
				return nil
			}
			page.add(pk, rk, rec)
			if hold > 0 && page.size > hold {
				// Too large to hold: go on for the page's extent only.
				over = true
				page.reset()
			}
			return nil
		})
		if err != nil {
			return err
		}
		page.More, page.NextPartitionKey, page.NextRowKey = more, npk, nrk
		if !over {
			return nil
		}
		// The same scan again, in the same snapshot, handing the rows
		// over one at a time.
		return stream(page, func(each func(Row) error) error {
			_, _, _, err := s.scanTx(tx, account, table, q, count, func(pk, rk, rec []byte) error {
				if !checkRecord(rec) {
					return errCorrupt
				}
				return each(Row{PartitionKey: pk, RowKey: rk, rec: rec})
			})
			return err
		})
	})
	if err != nil {
		page.reset()
		return err
	}
	return nil
}

// rangeExact reports whether the scan range keyRange derives from f
// selects exactly the entities f matches, so evaluating f on each row in
// it would change nothing. That holds when f is nothing but an "and" of
// string comparisons eq, ge, gt, lt or le on PartitionKey, and on RowKey
// when one of them is PartitionKey eq: keyRange turns each of them into a
// bound, and keys compare bytewise exactly as the evaluator compares
// strings (internal/keyenc preserves order).
func rangeExact(f *odata.Expr) bool {
	if f == nil {
		return true
	}
	pkEq := false
	var walk func(e *odata.Expr) bool
	walk = func(e *odata.Expr) bool {
		switch e.Kind {
		case odata.KindAnd:
			return walk(e.L) && walk(e.R)
		case odata.KindCompare:
			if e.Value.Type != odata.String {
				return false
			}
			switch e.Op {
			case odata.Eq, odata.Ge, odata.Gt, odata.Lt, odata.Le:
			default:
				return false
			}
			switch e.Property {
			case "PartitionKey":
				if e.Op == odata.Eq {
					pkEq = true
				}
				return true
			case "RowKey":
				return true
			}
		}
		return false
	}
	if !walk(f) {
		return false
	}
	if pkEq {
		return true
	}
	// Without PartitionKey eq, keyRange ignores RowKey comparisons.
	for _, c := range f.Conjuncts() {
		if c.Property == "RowKey" {
			return false
		}
	}
	return true
}
