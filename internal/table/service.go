// Package table is the Table service domain: tables, their access
// policies, service properties, entities, queries and entity group
// transactions, written once on top of the storage contract.
//
// Every condition (If-Match, existence) is checked inside the same
// storage Update as the write it guards, and a whole entity group
// transaction is one Update, so concurrent writers and readers see each
// operation or batch entirely or not at all.
//
// Key layout (internal/keyenc tuples, all under the "tbl" namespace):
//
//	("tbl", "t", account, lower(table))        -> table record (JSON)
//	("tbl", "e", table uid, PartitionKey, RowKey) -> entity record
//	("tbl", "s", account)                      -> service properties (JSON)
//	("tbl", "d", table uid)                    -> purge marker of a deleted table
//
// Entities are keyed by a per-incarnation table uid, so deleting a table
// is one small write and a recreated table starts empty; the old rows are
// removed afterwards in the background, in bounded chunks, under a purge
// marker written with the delete so a restart resumes the work.
package table

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/keycache"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/internal/table/odata"
	"github.com/lazuli-storage/lazuli/internal/worker"
	"github.com/lazuli-storage/lazuli/storage"
)

// Options tunes a Service.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Floor, if set, is the time below which entity Timestamps (and so
	// ETags) never go: the latest time a test clock showed before it was
	// moved back.
	Floor func() time.Time
	// MaxScan caps the rows one query request examines before it returns
	// a continuation token (default 10,000), so a filter that matches
	// nothing cannot scan a huge table in one request.
	MaxScan int
}

// Service is the Table service domain over one storage engine.
type Service struct {
	eng     storage.Engine
	now     func() time.Time
	floor   func() time.Time
	maxScan int
	// purges runs the removal of deleted tables' rows (see Run).
	purges worker.Loop
	// clock is the last Timestamp handed out, in ticks: writes get
	// strictly increasing Timestamps even within one clock tick, so an
	// entity deleted and inserted again never repeats an old ETag.
	clock atomic.Int64
	// uids remembers the uid of tables this Service wrote to (by table
	// key), so that a write reads the table record and the entities it
	// changes together (see readForWrite).
	uids keycache.Cache[[]byte]
}

// tick returns max(now, last + 100 ns) in ticks.
func (s *Service) tick() int64 {
	t := s.now()
	if s.floor != nil {
		if f := s.floor(); t.Before(f) {
			t = f
		}
	}
	now := odata.TimeToTicks(t)
	for {
		last := s.clock.Load()
		next := max(now, last+1)
		if s.clock.CompareAndSwap(last, next) {
			return next
		}
	}
}

// New returns a Service.
func New(eng storage.Engine, o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxScan <= 0 {
		o.MaxScan = 10_000
	}
	return &Service{eng: eng, now: o.Now, floor: o.Floor, maxScan: o.MaxScan}
}

// Run is the service's background worker: until ctx ends, it removes the
// rows of deleted tables, after each Delete Table and once at start for
// purges a previous process left unfinished (a crash or shutdown in the
// middle of removing a deleted table's rows). The server runs it; no rows
// are purged without it.
func (s *Service) Run(ctx context.Context) error { return s.purges.Run(ctx, s.resumePurges) }

// WaitPurges blocks until the purges of the tables deleted before the
// call have finished (or stopped because the engine closed); it needs Run.
func (s *Service) WaitPurges() { s.purges.Wait(context.Background()) }

// nsPrefix is the key namespace of the Table service.
func nsPrefix() []byte { return keyenc.AppendString(nil, "tbl") }

func tablesPrefix(account string) []byte {
	k := nsPrefix()
	k = keyenc.AppendString(k, "t")
	return keyenc.AppendString(k, account)
}

// tablesNS is the key prefix of table records: ("tbl", "t").
var tablesNS = keyenc.AppendString(nsPrefix(), "t")

func tableKey(account, name string) []byte {
	k := make([]byte, 0, len(tablesNS)+len(account)+len(name)+8)
	k = append(k, tablesNS...)
	k = keyenc.AppendString(k, account)
	return keyenc.AppendString(k, strings.ToLower(name))
}

func entitiesPrefix(uid string) []byte {
	k := nsPrefix()
	k = keyenc.AppendString(k, "e")
	return keyenc.AppendString(k, uid)
}

func partitionPrefix(uid, pk string) []byte {
	return keyenc.AppendString(entitiesPrefix(uid), pk)
}

func entityKey(uid, pk, rk string) []byte {
	return keyenc.AppendString(partitionPrefix(uid, pk), rk)
}

func purgeKey(uid string) []byte {
	k := nsPrefix()
	k = keyenc.AppendString(k, "d")
	return keyenc.AppendString(k, uid)
}

func serviceKey(account string) []byte {
	k := nsPrefix()
	k = keyenc.AppendString(k, "s")
	return keyenc.AppendString(k, account)
}

// SignedIdentifier is one stored access policy of a table ACL.
type SignedIdentifier struct {
	ID         string    `json:"id"`
	Start      time.Time `json:"start,omitzero"`
	Expiry     time.Time `json:"expiry,omitzero"`
	Permission string    `json:"perm,omitempty"`
	// HasStart / HasExpiry / HasPermission record which elements were
	// present, so Get Table ACL echoes exactly what was set.
	HasStart      bool `json:"hs,omitempty"`
	HasExpiry     bool `json:"he,omitempty"`
	HasPermission bool `json:"hp,omitempty"`
}

// TableInfo is a stored table record.
type TableInfo struct {
	Name    string             `json:"name"`
	UID     string             `json:"uid"`
	Created time.Time          `json:"created"`
	ACL     []SignedIdentifier `json:"acl,omitempty"`
}

var tableNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{2,62}$`)

// ValidTableName reports whether name is a legal table name.
func ValidTableName(name string) bool {
	return tableNameRE.MatchString(name) && !strings.EqualFold(name, "tables")
}

func newUID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// A table record is 0x02 | uvarint len(uid) | uid | JSON(TableInfo): the
// uid every entity operation needs is read without parsing the JSON.
const tableRecordVersion = 2

func encodeTable(t *TableInfo) ([]byte, error) {
	js, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 1+binary.MaxVarintLen64+len(t.UID)+len(js))
	b = append(b, tableRecordVersion)
	b = content.AppendBytes(b, t.UID)
	return append(b, js...), nil
}

// splitTable returns the uid and the JSON part of a table record, both
// aliasing it.
func splitTable(v []byte) (uid, js []byte, err error) {
	if len(v) < 2 || v[0] != tableRecordVersion {
		return nil, nil, errCorrupt
	}
	l, n := content.Uvarint(v[1:])
	if n <= 0 || uint64(len(v)-1-n) < l {
		return nil, nil, errCorrupt
	}
	end := 1 + n + int(l)
	return v[1+n : end : end], v[end:], nil
}

func decodeTable(v []byte) (*TableInfo, error) {
	_, js, err := splitTable(v)
	if err != nil {
		return nil, err
	}
	var t TableInfo
	if err := json.Unmarshal(js, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

func getTable(tx storage.Tx, account, name string) (*TableInfo, error) {
	v, err := tx.Get(tableKey(account, name))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, azerr.New(azerr.TableNotFound)
	}
	if err != nil {
		return nil, err
	}
	return decodeTable(v)
}

// tableUID returns the uid of a table (404 TableNotFound).
func tableUID(tx storage.Tx, account, name string) (string, error) {
	uid, err := tableUIDOf(tx, tableKey(account, name))
	return string(uid), err
}

// tableUIDOf returns the uid of the table stored at key tkey (404
// TableNotFound), aliasing the stored record.
func tableUIDOf(tx storage.Tx, tkey []byte) ([]byte, error) {
	v, err := tx.Get(tkey)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, azerr.New(azerr.TableNotFound)
	}
	if err != nil {
		return nil, err
	}
	return tableUIDFrom(v)
}

// tableUIDFrom decodes the uid of a stored table record; nil v (absent)
// is TableNotFound.
func tableUIDFrom(v []byte) ([]byte, error) {
	if v == nil {
		return nil, azerr.New(azerr.TableNotFound)
	}
	uid, _, err := splitTable(v)
	return uid, err
}

func putTable(tx storage.Tx, account string, t *TableInfo) error {
	b, err := encodeTable(t)
	if err != nil {
		return err
	}
	return tx.Set(tableKey(account, t.Name), b)
}

// CreateTable implements Create Table: 409 TableAlreadyExists when a table
// of that name (in any case) exists.
func (s *Service) CreateTable(ctx context.Context, account, name string) (*TableInfo, error) {
	if !ValidTableName(name) {
		return nil, azerr.Newf(azerr.InvalidResourceName, "The table name %q is not valid.", name)
	}
	var out *TableInfo
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		if _, err := tx.Get(tableKey(account, name)); err == nil {
			return azerr.New(azerr.TableAlreadyExists)
		} else if !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		out = &TableInfo{Name: name, UID: newUID(), Created: s.now().UTC()}
		return putTable(tx, account, out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteTable implements Delete Table (404 ResourceNotFound when absent, as
// Azure answers on this operation). The table disappears atomically; its
// entities are then removed in the background.
func (s *Service) DeleteTable(ctx context.Context, account, name string) error {
	var uid string
	err := s.eng.Update(ctx, func(tx storage.Tx) error {
		t, err := getTable(tx, account, name)
		if err != nil {
			if e, ok := azerr.As(err); ok && e.Code == azerr.TableNotFound {
				return azerr.New(azerr.ResourceNotFound)
			}
			return err
		}
		uid = t.UID
		if err := tx.Set(purgeKey(uid), []byte{}); err != nil {
			return err
		}
		return tx.Delete(tableKey(account, name))
	})
	if err != nil {
		return err
	}
	s.purges.Kick()
	return nil
}

// resumePurges finishes every purge recorded by a marker: a pass of Run.
func (s *Service) resumePurges(ctx context.Context) {
	var uids []string
	lo := purgeKey("")
	lo = lo[:len(lo)-2] // the ("tbl","d") prefix
	s.eng.View(ctx, func(tx storage.Tx) error {
		uids = nil
		it := tx.Scan(lo, keyenc.PrefixEnd(lo), false)
		defer it.Close()
		for it.Next() {
			uid, _, err := keyenc.ReadString(it.Key()[len(lo):])
			if err == nil {
				uids = append(uids, uid)
			}
		}
		return it.Err()
	})
	for _, uid := range uids {
		if s.purge(ctx, uid) != nil {
			return
		}
	}
}

// purge removes every entity row of a deleted table incarnation, 1,000
// rows per Update so no transaction grows with the table, then its marker.
func (s *Service) purge(ctx context.Context, uid string) error {
	lo := entitiesPrefix(uid)
	hi := keyenc.PrefixEnd(lo)
	for {
		n := 0
		err := s.eng.Update(ctx, func(tx storage.Tx) error {
			var err error
			if n, err = storage.DeleteRange(tx, lo, hi, 1000); err != nil {
				return err
			}
			if n < 1000 {
				return tx.Delete(purgeKey(uid))
			}
			return nil
		})
		if err != nil || n < 1000 {
			return err
		}
	}
}

// GetTable returns the table record (404 TableNotFound).
func (s *Service) GetTable(ctx context.Context, account, name string) (*TableInfo, error) {
	var out *TableInfo
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		t, err := getTable(tx, account, name)
		out = t
		return err
	})
	return out, err
}

// QueryTables implements Query Tables: tables in name order (case
// insensitive) starting at next, filtered on TableName, at most top per
// page. It returns the continuation (the next table name) or "".
func (s *Service) QueryTables(ctx context.Context, account string, filter *odata.Expr, top int, next string) ([]string, string, error) {
	if top <= 0 || top > MaxPageSize {
		top = MaxPageSize
	}
	var names []string
	cont := ""
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		names, cont = nil, ""
		lo := tablesPrefix(account)
		hi := keyenc.PrefixEnd(lo)
		if next != "" {
			lo = tableKey(account, next)
		}
		it := tx.Scan(lo, hi, false)
		defer it.Close()
		examined := 0
		for it.Next() {
			t, err := decodeTable(it.Value())
			if err != nil {
				return err
			}
			if examined >= s.maxScan {
				cont = t.Name
				break
			}
			examined++
			if !filter.Match(tableEntity(t.Name)) {
				continue
			}
			// A full page continues only where a further match is: the
			// last page of a query carries no continuation.
			if len(names) == top {
				cont = t.Name
				break
			}
			names = append(names, t.Name)
		}
		return it.Err()
	})
	return names, cont, err
}

// tableEntity exposes a table name to the $filter evaluator.
type tableEntity string

func (t tableEntity) Lookup(name string) (odata.Value, bool) {
	if name == "TableName" {
		return odata.Value{Type: odata.String, Str: string(t)}, true
	}
	return odata.Value{}, false
}

// GetACL implements Get Table ACL.
func (s *Service) GetACL(ctx context.Context, account, name string) ([]SignedIdentifier, error) {
	t, err := s.GetTable(ctx, account, name)
	if err != nil {
		return nil, err
	}
	return t.ACL, nil
}

// SetACL implements Set Table ACL: replaces every stored access policy.
func (s *Service) SetACL(ctx context.Context, account, name string, acl []SignedIdentifier) error {
	if len(acl) > 5 {
		return azerr.Newf(azerr.InvalidXmlDocument, "At most 5 signed identifiers are permitted.")
	}
	for _, si := range acl {
		if si.ID == "" || len(si.ID) > 64 {
			return azerr.Newf(azerr.InvalidXmlDocument, "A signed identifier must be 1 to 64 characters long.")
		}
		for _, c := range si.Permission {
			if !strings.ContainsRune("raud", c) {
				return azerr.Newf(azerr.InvalidXmlNodeValue, "The permission %q is not valid for a table.", si.Permission)
			}
		}
	}
	return s.eng.Update(ctx, func(tx storage.Tx) error {
		t, err := getTable(tx, account, name)
		if err != nil {
			return err
		}
		t.ACL = acl
		return putTable(tx, account, t)
	})
}

// Policy returns the stored access policy id of a table, or nil.
func (s *Service) Policy(ctx context.Context, account, name, id string) (*SignedIdentifier, error) {
	t, err := s.GetTable(ctx, account, name)
	if err != nil {
		return nil, err
	}
	for i := range t.ACL {
		if t.ACL[i].ID == id {
			return &t.ACL[i], nil
		}
	}
	return nil, nil
}

// ServiceProperties are the Table service properties of an account.
type ServiceProperties struct {
	Logging       *Logging   `json:"logging,omitempty"`
	HourMetrics   *Metrics   `json:"hour,omitempty"`
	MinuteMetrics *Metrics   `json:"minute,omitempty"`
	Cors          []CorsRule `json:"cors"`
	// CorsSet records that Cors was part of the last Set request.
	CorsSet bool `json:"corsSet,omitempty"`
}

// Logging is the analytics logging setting.
type Logging struct {
	Version             string `json:"v"`
	Delete, Read, Write bool
	RetentionEnabled    bool `json:"re"`
	RetentionDays       int  `json:"rd,omitempty"`
}

// Metrics is an hour or minute metrics setting.
type Metrics struct {
	Version          string `json:"v"`
	Enabled          bool   `json:"e"`
	IncludeAPIs      *bool  `json:"api,omitempty"`
	RetentionEnabled bool   `json:"re"`
	RetentionDays    int    `json:"rd,omitempty"`
}

// CorsRule is one CORS rule.
type CorsRule struct {
	AllowedOrigins  string `json:"o"`
	AllowedMethods  string `json:"m"`
	AllowedHeaders  string `json:"h"`
	ExposedHeaders  string `json:"x"`
	MaxAgeInSeconds int    `json:"age"`
}

// DefaultServiceProperties is what an account reports before any Set.
func DefaultServiceProperties() *ServiceProperties {
	return &ServiceProperties{
		Logging:       &Logging{Version: "1.0"},
		HourMetrics:   &Metrics{Version: "1.0", IncludeAPIs: nil},
		MinuteMetrics: &Metrics{Version: "1.0", IncludeAPIs: nil},
		Cors:          []CorsRule{},
	}
}

// GetServiceProperties implements Get Table Service Properties.
func (s *Service) GetServiceProperties(ctx context.Context, account string) (*ServiceProperties, error) {
	v, err := storage.GetValue(ctx, s.eng, serviceKey(account))
	if errors.Is(err, storage.ErrNotFound) {
		return DefaultServiceProperties(), nil
	}
	if err != nil {
		return nil, err
	}
	var p ServiceProperties
	if err := json.Unmarshal(v, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// SetServiceProperties implements Set Table Service Properties: elements
// absent from the request keep their stored value.
func (s *Service) SetServiceProperties(ctx context.Context, account string, p *ServiceProperties) error {
	if len(p.Cors) > 5 {
		return azerr.New(azerr.InvalidXmlDocument)
	}
	return s.eng.Update(ctx, func(tx storage.Tx) error {
		cur := DefaultServiceProperties()
		if v, err := tx.Get(serviceKey(account)); err == nil {
			if err := json.Unmarshal(v, cur); err != nil {
				return err
			}
		} else if !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		if p.Logging != nil {
			cur.Logging = p.Logging
		}
		if p.HourMetrics != nil {
			cur.HourMetrics = p.HourMetrics
		}
		if p.MinuteMetrics != nil {
			cur.MinuteMetrics = p.MinuteMetrics
		}
		if p.CorsSet {
			cur.Cors = p.Cors
		}
		if cur.Cors == nil {
			cur.Cors = []CorsRule{}
		}
		cur.CorsSet = false
		b, err := json.Marshal(cur)
		if err != nil {
			return err
		}
		return tx.Set(serviceKey(account), b)
	})
}
