package table

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/table/odata"
	"github.com/lazuli-storage/lazuli/storage"
)

// OpKind is an entity write operation.
type OpKind uint8

// Entity write operations.
const (
	// OpInsert is Insert Entity: 409 EntityAlreadyExists if present.
	OpInsert OpKind = iota + 1
	// OpUpdate is Update Entity (replace) with If-Match.
	OpUpdate
	// OpMerge is Merge Entity with If-Match.
	OpMerge
	// OpDelete is Delete Entity with If-Match.
	OpDelete
	// OpInsertOrReplace is Insert Or Replace Entity (PUT without If-Match).
	OpInsertOrReplace
	// OpInsertOrMerge is Insert Or Merge Entity (MERGE/PATCH without If-Match).
	OpInsertOrMerge
)

func (k OpKind) String() string {
	switch k {
	case OpInsert:
		return "InsertEntity"
	case OpUpdate:
		return "UpdateEntity"
	case OpMerge:
		return "MergeEntity"
	case OpDelete:
		return "DeleteEntity"
	case OpInsertOrReplace:
		return "InsertOrReplaceEntity"
	case OpInsertOrMerge:
		return "InsertOrMergeEntity"
	}
	return "Unknown"
}

// Op is one entity write. Props is ignored for OpDelete; IfMatch is the
// If-Match value for OpUpdate, OpMerge and OpDelete ("*" = any).
type Op struct {
	Kind         OpKind
	PartitionKey string
	RowKey       string
	IfMatch      string
	Props        []Property
}

// BatchError reports the failing operation of an entity group transaction
// by its zero-based index.
type BatchError struct {
	Index int
	Err   error
}

func (e *BatchError) Error() string { return fmt.Sprintf("operation %d: %v", e.Index, e.Err) }
func (e *BatchError) Unwrap() error { return e.Err }

// validate checks an operation before any transaction runs.
func (op *Op) validate() error {
	if op.Kind < OpInsert || op.Kind > OpInsertOrMerge {
		return azerr.New(azerr.InvalidInput)
	}
	if op.Kind == OpDelete {
		if err := ValidateKey("PartitionKey", op.PartitionKey); err != nil {
			return err
		}
		return ValidateKey("RowKey", op.RowKey)
	}
	e := Entity{PartitionKey: op.PartitionKey, RowKey: op.RowKey, Props: op.Props}
	return e.Validate()
}

// Apply runs one entity write in its own Update and returns the entity as
// stored (nil for OpDelete). Validation, the storage key, the If-Match
// value and the encoding of the new record are all prepared before the
// Update, so the single writer only checks and stores.
func (s *Service) Apply(ctx context.Context, account, table string, op Op) (*Entity, error) {
	if err := op.validate(); err != nil {
		return nil, err
	}
	// One allocation holds the operation, its prepared form and the
	// result.
	st := &applyState{op: op}
	st.p[0] = prepareOp(&st.op)
	st.tkey = tableKey(account, table)
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		uid, cur, err := s.readForWrite(tx, st.tkey, st.p[:])
		if err != nil {
			return err
		}
		st.out, err = applyPrepared(tx, uid, &st.p[0], cur[0], s.tick())
		return err
	})
	if err != nil {
		return nil, err
	}
	return st.out, nil
}

// applyState is what Apply's transaction function works on.
type applyState struct {
	op   Op
	p    [1]preparedOp // an array: readForWrite takes a slice
	tkey []byte
	out  *Entity
}

// preparedOp is an Op with everything that does not depend on the stored
// state done ahead of the transaction.
type preparedOp struct {
	op *Op
	// keyTail is the (PartitionKey, RowKey) part of the storage key.
	keyTail []byte
	// rec is the new record with a placeholder Timestamp, for the writes
	// whose stored properties do not depend on the current record
	// (everything but a merge into an existing entity); nil for a delete.
	rec []byte
	// recUsed is set once rec was handed to a Set; a rerun of the Update
	// then copies it.
	recUsed bool
	// If-Match, parsed: "*", or the Timestamp an entity ETag names.
	ifAny, ifOK bool
	ifTicks     int64
	// out is the entity handed back for a write.
	out Entity
}

func prepareOp(op *Op) preparedOp {
	p := preparedOp{op: op}
	p.keyTail = make([]byte, 0, len(op.PartitionKey)+len(op.RowKey)+4)
	p.keyTail = keyenc.AppendString(keyenc.AppendString(p.keyTail, op.PartitionKey), op.RowKey)
	if op.Kind != OpDelete {
		p.rec = encodeEntity(&Entity{Props: op.Props})
	}
	if op.IfMatch != "" {
		p.ifAny = strings.TrimSpace(op.IfMatch) == "*"
		p.ifTicks, p.ifOK = parseETag(op.IfMatch)
	}
	return p
}

// ifMatches reports whether the op's If-Match value selects the entity
// whose Timestamp is ticks: "*", or an ETag naming that Timestamp in any
// spelling the service accepts. It is the one If-Match check of entity
// writes, batches included; the value is parsed once, in prepareOp.
func (p *preparedOp) ifMatches(ticks int64) bool {
	if p.ifAny || (p.ifOK && p.ifTicks == ticks) {
		return true
	}
	return p.op.IfMatch == ETagFor(ticks)
}

// record returns the prepared record with Timestamp ts.
func (p *preparedOp) record(ts int64) []byte {
	b := p.rec
	if p.recUsed {
		b = append([]byte(nil), b...)
	}
	p.recUsed = true
	binary.BigEndian.PutUint64(b[1:9], uint64(ts))
	return b
}

// entityNS is the key prefix of every entity row: ("tbl", "e").
var entityNS = keyenc.AppendString(nsPrefix(), "e")

// entityKeyOf is entityKey(uid, pk, rk) from the table uid and the
// prepared (pk, rk) part, in one allocation.
func entityKeyOf(uid, keyTail []byte) []byte {
	k := make([]byte, 0, len(entityNS)+len(uid)+2+len(keyTail))
	k = append(k, entityNS...)
	// keyenc's string element: 0x00 escaped as 0x00 0xFF, then 0x00 0x01.
	for _, c := range uid {
		if c == 0x00 {
			k = append(k, 0x00, 0xFF)
		} else {
			k = append(k, c)
		}
	}
	k = append(k, 0x00, 0x01)
	return append(k, keyTail...)
}

// Batch runs an entity group transaction: every operation on one
// partition, each entity at most once, all applied in one Update or none.
// A failing operation yields a *BatchError naming its index.
func (s *Service) Batch(ctx context.Context, account, table string, ops []Op) ([]*Entity, error) {
	if len(ops) > MaxBatchOperations {
		return nil, azerr.Newf(azerr.InvalidInput, "The batch request operation exceeds the maximum %d changes per change set.", MaxBatchOperations)
	}
	seen := make(map[string]struct{}, len(ops))
	for i := range ops {
		op := &ops[i]
		if op.PartitionKey != ops[0].PartitionKey {
			return nil, &BatchError{i, azerr.New(azerr.CommandsInBatchActOnDifferentPartitions)}
		}
		if _, dup := seen[op.RowKey]; dup {
			return nil, &BatchError{i, azerr.New(azerr.InvalidDuplicateRow)}
		}
		seen[op.RowKey] = struct{}{}
		if err := op.validate(); err != nil {
			return nil, &BatchError{i, err}
		}
	}
	out := make([]*Entity, len(ops))
	prep := make([]preparedOp, len(ops))
	for i := range ops {
		prep[i] = prepareOp(&ops[i])
	}
	tkey := tableKey(account, table)
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		uid, cur, err := s.readForWrite(tx, tkey, prep)
		if err != nil {
			return &BatchError{0, err}
		}
		// One clock reading for the whole transaction: entities written by
		// one batch may share a Timestamp, as on Azure.
		now := s.tick()
		for i := range prep {
			e, err := applyPrepared(tx, uid, &prep[i], cur[i], now)
			if err != nil {
				return &BatchError{i, err}
			}
			out[i] = e
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readForWrite reads, in tx, the uid of the table whose record is at tkey
// and the current records of the entities prep write (nil where absent).
// With the uid this Service last saw for the table, the table record and
// the entities are read together (one round trip on a server engine); if
// the table's uid changed since (deleted and created again), the entities
// are read again under the new one.
func (s *Service) readForWrite(tx storage.Tx, tkey []byte, prep []preparedOp) (uid []byte, cur [][]byte, err error) {
	keys := make([][]byte, 1, len(prep)+1)
	keys[0] = tkey
	cached, _ := s.uids.Get(string(tkey))
	if cached != nil {
		for i := range prep {
			keys = append(keys, entityKeyOf(cached, prep[i].keyTail))
		}
	}
	vals, err := storage.GetMany(tx, keys)
	if err != nil {
		return nil, nil, err
	}
	if uid, err = tableUIDFrom(vals[0]); err != nil {
		s.uids.Drop(string(tkey))
		return nil, nil, err
	}
	if cached != nil && bytes.Equal(uid, cached) {
		return uid, vals[1:], nil
	}
	s.uids.Put(string(tkey), bytes.Clone(uid))
	keys = keys[:0]
	for i := range prep {
		keys = append(keys, entityKeyOf(uid, prep[i].keyTail))
	}
	cur, err = storage.GetMany(tx, keys)
	return uid, cur, err
}

// applyPrepared runs a prepared write inside tx, given the entity's
// current record raw (nil when absent) as readForWrite read it. The
// current record is decoded in full only for a merge; every other
// operation needs no more than its Timestamp. The entity returned is
// p.out.
func applyPrepared(tx storage.Tx, uid []byte, p *preparedOp, raw []byte, now int64) (*Entity, error) {
	op := p.op
	key := entityKeyOf(uid, p.keyTail)
	merge := op.Kind == OpMerge || op.Kind == OpInsertOrMerge
	var cur *Entity
	exists := false
	var curTS int64
	var err error
	switch {
	case raw != nil:
		exists = true
		if merge {
			cur, err = decodeEntity(op.PartitionKey, op.RowKey, raw)
			if err != nil {
				return nil, err
			}
			curTS = cur.Timestamp
		} else {
			if len(raw) < 9 || raw[0] != encVersion {
				return nil, errCorrupt
			}
			curTS = int64(binary.BigEndian.Uint64(raw[1:9]))
		}
	}
	switch op.Kind {
	case OpInsert:
		if exists {
			return nil, azerr.New(azerr.EntityAlreadyExists)
		}
	case OpUpdate, OpMerge, OpDelete:
		if !exists {
			return nil, azerr.New(azerr.ResourceNotFound)
		}
		if !p.ifMatches(curTS) {
			return nil, azerr.New(azerr.UpdateConditionNotSatisfied)
		}
	}
	if op.Kind == OpDelete {
		return nil, tx.Delete(key)
	}
	// Timestamp = max(now, previous + 100 ns): every write of an entity
	// gets a distinct ETag even within one clock tick.
	ts := now
	if exists && curTS >= ts {
		ts = curTS + 1
	}
	next := &p.out
	*next = Entity{PartitionKey: op.PartitionKey, RowKey: op.RowKey, Timestamp: ts}
	if cur != nil && merge {
		next.Props = mergeProps(cur.Props, op.Props)
		if err := next.Validate(); err != nil {
			return nil, err
		}
		if err := tx.Set(key, encodeEntity(next)); err != nil {
			return nil, err
		}
		return next, nil
	}
	next.Props = op.Props
	if err := tx.Set(key, p.record(ts)); err != nil {
		return nil, err
	}
	return next, nil
}

// mergeProps overwrites or appends the supplied properties; a merge never
// removes one.
func mergeProps(cur, upd []Property) []Property {
	out := make([]Property, len(cur), len(cur)+len(upd))
	copy(out, cur)
	idx := make(map[string]int, len(out))
	for i, p := range out {
		idx[p.Name] = i
	}
	for _, p := range upd {
		if i, ok := idx[p.Name]; ok {
			out[i] = p
			continue
		}
		idx[p.Name] = len(out)
		out = append(out, p)
	}
	return out
}

// GetEntity implements a point query by keys (404 ResourceNotFound).
func (s *Service) GetEntity(ctx context.Context, account, table, pk, rk string) (*Entity, error) {
	var out *Entity
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		uid, err := tableUID(tx, account, table)
		if err != nil {
			return err
		}
		raw, err := tx.Get(entityKey(uid, pk, rk))
		if errors.Is(err, storage.ErrNotFound) {
			return azerr.New(azerr.ResourceNotFound)
		}
		if err != nil {
			return err
		}
		out, err = decodeEntity(pk, rk, raw)
		return err
	})
	return out, err
}

// Query describes one page of Query Entities.
type Query struct {
	Filter *odata.Expr
	// Top is the page size (1..1000); 0 means 1000.
	Top int
	// Continue resumes at (NextPartitionKey, NextRowKey) inclusive.
	Continue         bool
	NextPartitionKey string
	NextRowKey       string
	// Range confines the query to the entities a Table SAS grants
	// (inclusive bounds, "" for an open side); the zero value is the whole
	// table.
	Range KeyRange
}

// KeyRange is an inclusive range of (PartitionKey, RowKey) pairs. An empty
// StartPK or EndPK leaves that side open; an empty row key bound covers the
// whole boundary partition.
type KeyRange struct {
	StartPK, StartRK, EndPK, EndRK string
}

// bounds narrows the scan range [lo, hi) of table uid to r.
func (r KeyRange) bounds(uid string, lo, hi []byte) ([]byte, []byte) {
	if r.StartPK != "" {
		k := partitionPrefix(uid, r.StartPK)
		if r.StartRK != "" {
			k = entityKey(uid, r.StartPK, r.StartRK)
		}
		if bytes.Compare(k, lo) > 0 {
			lo = k
		}
	}
	if r.EndPK != "" {
		k := keyenc.PrefixEnd(partitionPrefix(uid, r.EndPK))
		if r.EndRK != "" {
			k = keyenc.After(entityKey(uid, r.EndPK, r.EndRK))
		}
		if bytes.Compare(k, hi) < 0 {
			hi = k
		}
	}
	return lo, hi
}

// Page is one page of results with the continuation, if any.
type Page struct {
	Entities []*Entity
	// More is set when the client should continue at (NextPartitionKey,
	// NextRowKey).
	More             bool
	NextPartitionKey string
	NextRowKey       string
}

// QueryEntities implements Query Entities: entities in (PartitionKey,
// RowKey) order matching the filter, one page at a time. The scan is
// narrowed to the key range the filter's top-level conjunction allows, and
// it stops after the service's MaxScan rows with a continuation even when
// the page is not full.
func (s *Service) QueryEntities(ctx context.Context, account, table string, q Query) (*Page, error) {
	page := &Page{}
	// Entities and their properties are decoded into shared backing
	// arrays allocated a chunk at a time, and consecutive rows of one
	// partition share its PartitionKey string.
	var ents []Entity
	var props []Property
	prevPK := ""
	top := pageSize(q.Top)
	reset := func() {
		page.Entities = page.Entities[:0]
		ents, props, prevPK = nil, nil, ""
	}
	more, npk, nrk, err := s.scan(ctx, account, table, q, reset, func(pkb, rkb, rec []byte) error {
		pk := prevPK
		if string(pkb) != prevPK || prevPK == "" {
			pk = string(pkb)
			prevPK = pk
		}
		if len(ents) == cap(ents) {
			ents = make([]Entity, 0, min(top-len(page.Entities), 64))
		}
		if cap(props)-len(props) < maxSlabProps {
			props = make([]Property, 0, 16*maxSlabProps)
		}
		ents = ents[:len(ents)+1]
		e := &ents[len(ents)-1]
		var err error
		if props, err = decodeEntityInto(e, pk, string(rkb), rec, props); err != nil {
			return err
		}
		page.Entities = append(page.Entities, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	page.More, page.NextPartitionKey, page.NextRowKey = more, npk, nrk
	return page, nil
}

// pageSize is the effective page size of a Query's Top.
func pageSize(top int) int {
	if top <= 0 || top > MaxPageSize {
		return MaxPageSize
	}
	return top
}

// scan runs the range scan of Query Entities: it hands emit the keys and
// record of every row the filter matches, in key order, until the page is
// full or MaxScan rows were examined, and returns the continuation. The
// slices passed to emit are valid only during the call. reset is called
// at the start of each attempt of the read transaction.
//
// When the key range is exactly what the filter asks for (rangeExact), the
// filter is not evaluated row by row.
func (s *Service) scan(ctx context.Context, account, table string, q Query, reset func(), emit func(pk, rk, rec []byte) error) (more bool, npk, nrk string, err error) {
	err = s.eng.View(ctx, func(tx storage.Tx) error {
		reset()
		var err error
		more, npk, nrk, err = s.scanTx(tx, account, table, q, pageSize(q.Top), emit)
		return err
	})
	return more, npk, nrk, err
}

// scanTx is scan inside the read transaction tx, for a page of at most top
// entities.
func (s *Service) scanTx(tx storage.Tx, account, table string, q Query, top int, emit func(pk, rk, rec []byte) error) (more bool, npk, nrk string, err error) {
	filter := q.Filter
	if rangeExact(filter) {
		filter = nil
	}
	uid, err := tableUID(tx, account, table)
	if err != nil {
		return false, "", "", err
	}
	base := entitiesPrefix(uid)
	lo, hi := keyRange(uid, q.Filter)
	lo, hi = q.Range.bounds(uid, lo, hi)
	if q.Continue {
		resume := entityKey(uid, q.NextPartitionKey, q.NextRowKey)
		if bytes.Compare(resume, lo) > 0 {
			lo = resume
		}
	}
	if hi != nil && bytes.Compare(lo, hi) >= 0 {
		return false, "", "", nil
	}
	it := tx.Scan(lo, hi, false)
	defer it.Close()
	examined, matched := 0, 0
	var raw rawEntity
	var pkStr string
	for it.Next() {
		pkb, rest, err := keyStringBytes(it.Key()[len(base):])
		if err != nil {
			return false, "", "", err
		}
		rkb, _, err := keyStringBytes(rest)
		if err != nil {
			return false, "", "", err
		}
		// Without a filter the next row is the next result; with one, a
		// full page looks on for a further match (within the scan budget)
		// so that the last page of a query carries no continuation.
		if examined >= s.maxScan || (matched == top && filter == nil) {
			more, npk, nrk = true, string(pkb), string(rkb)
			break
		}
		examined++
		if filter != nil {
			// The evaluator reads keys as strings; consecutive rows of
			// one partition share one.
			if string(pkb) != pkStr || pkStr == "" {
				pkStr = string(pkb)
			}
			raw = rawEntity{pk: pkStr, rk: rkb, b: it.Value()}
			if !filter.Match(&raw) {
				continue
			}
		}
		if matched == top {
			more, npk, nrk = true, string(pkb), string(rkb)
			break
		}
		matched++
		if err := emit(pkb, rkb, it.Value()); err != nil {
			return false, "", "", err
		}
	}
	return more, npk, nrk, it.Err()
}

// keyRange derives the scan bounds [lo, hi) from the comparisons on
// PartitionKey and RowKey that the filter requires.
func keyRange(uid string, f *odata.Expr) (lo, hi []byte) {
	base := entitiesPrefix(uid)
	lo, hi = base, keyenc.PrefixEnd(base)
	raise := func(k []byte) {
		if bytes.Compare(k, lo) > 0 {
			lo = k
		}
	}
	lower := func(k []byte) {
		if bytes.Compare(k, hi) < 0 {
			hi = k
		}
	}
	var pkEq *string
	conj := f.Conjuncts()
	for _, c := range conj {
		if c.Property != "PartitionKey" || c.Value.Type != odata.String {
			continue
		}
		pp := partitionPrefix(uid, c.Value.Str)
		switch c.Op {
		case odata.Eq:
			v := c.Value.Str
			pkEq = &v
			raise(pp)
			lower(keyenc.PrefixEnd(pp))
		case odata.Ge:
			raise(pp)
		case odata.Gt:
			raise(keyenc.PrefixEnd(pp))
		case odata.Lt:
			lower(pp)
		case odata.Le:
			lower(keyenc.PrefixEnd(pp))
		}
	}
	if pkEq == nil {
		return lo, hi
	}
	for _, c := range conj {
		if c.Property != "RowKey" || c.Value.Type != odata.String {
			continue
		}
		ek := entityKey(uid, *pkEq, c.Value.Str)
		switch c.Op {
		case odata.Eq:
			raise(ek)
			lower(keyenc.After(ek))
		case odata.Ge:
			raise(ek)
		case odata.Gt:
			raise(keyenc.After(ek))
		case odata.Lt:
			lower(ek)
		case odata.Le:
			lower(keyenc.After(ek))
		}
	}
	return lo, hi
}

// maxSlabProps is the most properties of one entity a query decodes into
// its shared property array; larger entities get their own.
const maxSlabProps = 32

// keyStringBytes is readKeyString without the copy when the element needs
// no unescaping: the bytes alias b.
func keyStringBytes(b []byte) ([]byte, []byte, error) {
	if i := bytes.IndexByte(b, 0x00); i >= 0 && i+1 < len(b) && b[i+1] == 0x01 {
		return b[:i], b[i+2:], nil
	}
	s, rest, err := keyenc.ReadString(b)
	return []byte(s), rest, err
}
