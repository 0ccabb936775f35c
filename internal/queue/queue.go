// Package queue is the Azure Queue service domain: queues, their metadata
// and access policies, and messages with visibility timeouts, pop receipts
// and expiry, written once over storage.Engine.
//
// Every check that guards a write (the queue exists, the pop receipt is the
// current one, the message is visible and unexpired) runs inside the same
// Update as the write, so N competing consumers each get distinct messages
// and exactly one of several holders of a receipt wins, on every engine.
//
// The package imports no net/http: queuehttp decodes requests, validates
// query parameters and renders responses.
package queue

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/keycache"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// Limits from the Queue service reference.
const (
	// MaxMessageSize is the largest message text, counted as sent in the
	// request XML.
	MaxMessageSize = 64 * 1024
	// MaxVisibilityTimeout bounds every visibility timeout.
	MaxVisibilityTimeout = 7 * 24 * time.Hour
	// DefaultTTL is a message's time to live when none is given.
	DefaultTTL = 7 * 24 * time.Hour
	// DefaultGetVisibility is Get Messages' default visibility timeout.
	DefaultGetVisibility = 30 * time.Second
	// MaxMessagesPerGet bounds numofmessages of Get and Peek.
	MaxMessagesPerGet = 32
	// MaxSignedIdentifiers bounds a queue ACL.
	MaxSignedIdentifiers = 5
	// MaxListResults is the page size cap of List Queues.
	MaxListResults = 5000
)

// neverExpiresMicro is the expiration of a message put with a TTL of -1:
// Fri, 31 Dec 9999 23:59:59 GMT, as Azure renders it, in Unix microseconds.
const neverExpiresMicro = 253402300799 * 1_000_000

// NeverExpires returns the expiration time of a message with infinite TTL.
func NeverExpires() time.Time { return fromMicros(neverExpiresMicro) }

// maxExpiredPerScan bounds how many expired messages one Get or Peek steps
// over (Get also deletes them), so a queue full of expired messages cannot
// make one request slow; the next request continues the cleanup.
const maxExpiredPerScan = 512

// MetadataItem is one metadata pair; names are stored lowercase (Azure
// compares them case-insensitively).
type MetadataItem struct {
	Name  string `json:"n"`
	Value string `json:"v"`
}

// SignedIdentifier is one stored access policy of a queue ACL. Zero times
// and an empty permission mean the field is absent.
type SignedIdentifier struct {
	ID         string    `json:"id"`
	Start      time.Time `json:"start,omitzero"`
	Expiry     time.Time `json:"expiry,omitzero"`
	Permission string    `json:"perm,omitempty"`
}

// Message is a message as Put, Get, Peek and Update report it.
type Message struct {
	ID              MessageID
	InsertionTime   time.Time
	ExpirationTime  time.Time
	TimeNextVisible time.Time
	DequeueCount    int64
	PopReceipt      string
	Text            string
}

// QueueProperties is what Get Queue Metadata returns.
type QueueProperties struct {
	Metadata []MetadataItem
	// ApproximateMessageCount counts stored messages, including invisible
	// ones and expired ones not yet removed: never lower than the true
	// count.
	ApproximateMessageCount int64
}

// QueueItem is one entry of List Queues.
type QueueItem struct {
	Name     string
	Metadata []MetadataItem
}

// Service is the Queue service over one engine.
type Service struct {
	engine storage.Engine
	now    func() time.Time
	purge  purger
	// busy remembers queues whose last Get Messages returned messages, so
	// the next one goes straight to its write transaction instead of
	// first checking a snapshot for visible messages (see GetMessages).
	busy busyQueues
	// seq is the last message sequence handed out (see nextSeqs).
	seq atomic.Uint64
	// qids remembers the internal id of queues this Service served
	// message operations for, by account/name, so that their
	// transactions read the queue record and the message keys they need
	// together (see loadQueueIDWith).
	qids keycache.Cache[uint64]
	// shard picks the count shard of the next count change (see
	// addCount); it starts at a random place so that instances sharing
	// a database spread over different shards.
	shard atomic.Uint64
	// freeShards holds the count shards no Put Message or Delete Message
	// of this Service is using (see takeShard).
	freeShards chan uint64
}

// busyQueues is a small set of recently non-empty queues: an account/name
// key mapped to when Get Messages last returned messages from it. It only
// steers which path Get Messages takes; both answer the same.
type busyQueues struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

// maxBusyQueues bounds the set; it is emptied when full.
const maxBusyQueues = 4096

// busyFor is how long a queue that returned messages skips the snapshot
// check.
const busyFor = time.Second

func (b *busyQueues) recent(key string, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.seen[key]
	return ok && now.Sub(t) < busyFor && !now.Before(t)
}

func (b *busyQueues) note(key string, now time.Time, found bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !found {
		delete(b.seen, key)
		return
	}
	if b.seen == nil || len(b.seen) >= maxBusyQueues {
		b.seen = make(map[string]time.Time)
	}
	b.seen[key] = now
}

// New returns the Queue service. now is the clock for every time rule.
func New(e storage.Engine, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	s := &Service{engine: e, now: now, freeShards: make(chan uint64, countShards)}
	start := rand.Uint64()
	s.shard.Store(start)
	for i := range uint64(countShards) {
		s.freeShards <- (start + i) % countShards
	}
	return s
}

// nextSeqs reserves n message sequences, the first of them returned: at
// least the transaction's time now (Unix microseconds), and above every
// sequence this Service handed out before, so that messages that become
// visible at one instant keep their insertion order. Sequences come from
// the clock rather than a counter stored with the queue: a stored counter
// is one record that every Put Message of the queue reads and rewrites,
// so on an engine with concurrent writers the queue's puts would commit
// one at a time. Between instances sharing a database the order follows
// their (database-corrected) clocks, as visibility times already do.
func (s *Service) nextSeqs(now int64, n int) uint64 {
	for {
		last := s.seq.Load()
		first := max(uint64(now), last+1)
		if s.seq.CompareAndSwap(last, first+uint64(n)-1) {
			return first
		}
	}
}

// countShards is how many records a queue's message count changes are
// spread over. Kept in one record, the count is a key that every Put,
// Delete and expiry of the queue reads and rewrites, and on an engine
// with concurrent writers (PostgreSQL) those transactions then commit
// one at a time. A Service takes the shards in turn, so its concurrent
// writers touch different records; Get Queue Metadata sums them. Measured
// with lazuli-bench queue-put, 16 clients, one instance on PostgreSQL: see
// the commit that introduced it.
const countShards = 64

// nextShard picks the count shard of the next count change.
func (s *Service) nextShard() uint64 { return s.shard.Add(1) % countShards }

// takeShard reserves a count shard for the Update of one Put Message or
// Delete Message, every attempt of it: no other such Update of this
// Service rewrites that shard meanwhile, so that they never fail each
// other on it. Taken in turn, a shard picked by nextShard alone could
// still be in use when its turn came again (an Update slowed by a
// retry), and on PostgreSQL the two rewrites of one row then failed to
// serialize. The least recently used shard comes first, which also
// spreads instances sharing a database. Past countShards Updates at once,
// shards are shared again. release gives the shard back.
func (s *Service) takeShard() (shard uint64, release func()) {
	select {
	case shard = <-s.freeShards:
		return shard, func() { s.freeShards <- shard }
	default:
		return s.nextShard(), func() {}
	}
}

// addCount adds delta to the message count of queue id qid, in one of
// its count shards.
func (s *Service) addCount(tx storage.Tx, qid uint64, delta int64) error {
	k := countShardKey(qid, s.nextShard())
	v, err := tx.Get(k)
	if errors.Is(err, storage.ErrNotFound) {
		v, err = nil, nil
	}
	if err != nil {
		return err
	}
	return setCount(tx, k, v, delta)
}

// setCount stores delta plus the shard value v read at k (nil: absent).
func setCount(tx storage.Tx, k, v []byte, delta int64) error {
	var cur int64
	if v != nil {
		var n int
		if cur, n = binary.Varint(v); n <= 0 {
			return errCorrupt
		}
	}
	return tx.Set(k, binary.AppendVarint(nil, cur+delta))
}

// loadQueueIDWith is loadQueueID that also reads keys(qid), in the same
// round trip on a server engine when this Service knows the queue's id;
// when the id changed since (the queue was cleared, or deleted and
// created again) or was not known, the keys are read after the record.
// Values are as storage.GetMany returns them (nil: absent).
func (s *Service) loadQueueIDWith(tx storage.Tx, account, name string, keys func(qid uint64) [][]byte) (queueRecord, [][]byte, error) {
	ck := account + "/" + name
	qk := queueKey(account, name)
	cached, known := s.qids.Get(ck)
	var want [][]byte
	if known {
		want = keys(cached)
	}
	vals, err := storage.GetMany(tx, append([][]byte{qk}, want...))
	if err != nil {
		return queueRecord{}, nil, err
	}
	if vals[0] == nil {
		return queueRecord{}, nil, azerr.New(azerr.QueueNotFound)
	}
	q, err := queueIDFrom(vals[0])
	if err != nil {
		return queueRecord{}, nil, err
	}
	if known && q.ID == cached {
		return q, vals[1:], nil
	}
	s.qids.Put(ck, q.ID)
	vals, err = storage.GetMany(tx, keys(q.ID))
	return q, vals, err
}

// loadCount returns the message count of queue id qid: the sum of its
// count shards' changes.
func loadCount(tx storage.Tx, qid uint64) (int64, error) {
	live := statsKey(qid)
	it := tx.Scan(live, keyenc.PrefixEnd(live), false)
	defer it.Close()
	var total int64
	for it.Next() {
		if len(it.Key()) == len(live) {
			continue
		}
		d, n := binary.Varint(it.Value())
		if n <= 0 {
			return 0, errCorrupt
		}
		total += d
	}
	return max(total, 0), it.Err()
}

// NormalizeMetadata lowercases names and sorts the pairs so that two
// metadata sets compare equal exactly when Azure considers them the same.
func NormalizeMetadata(md []MetadataItem) []MetadataItem {
	out := make([]MetadataItem, len(md))
	for i, m := range md {
		out[i] = MetadataItem{Name: strings.ToLower(m.Name), Value: m.Value}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func sameMetadata(a, b []MetadataItem) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func loadQueue(tx storage.Tx, account, name string) (queueRecord, error) {
	v, err := tx.Get(queueKey(account, name))
	if errors.Is(err, storage.ErrNotFound) {
		return queueRecord{}, azerr.New(azerr.QueueNotFound)
	}
	if err != nil {
		return queueRecord{}, err
	}
	return decodeQueue(v)
}

// loadQueueID loads a queue record for the message operations, which need
// only its internal id: the id is read from the front of the stored JSON
// without decoding the metadata and ACL behind it. Metadata and ACL are
// left empty.
func loadQueueID(tx storage.Tx, account, name string) (queueRecord, error) {
	v, err := tx.Get(queueKey(account, name))
	if errors.Is(err, storage.ErrNotFound) {
		return queueRecord{}, azerr.New(azerr.QueueNotFound)
	}
	if err != nil {
		return queueRecord{}, err
	}
	return queueIDFrom(v)
}

// queueIDFrom is loadQueueID's decoding of a stored queue record v.
func queueIDFrom(v []byte) (queueRecord, error) {
	if id, ok := leadingQueueID(v); ok {
		return queueRecord{ID: id}, nil
	}
	q, err := decodeQueue(v)
	return queueRecord{ID: q.ID}, err
}

// leadingQueueID reads the id of a stored queue record as encode writes it
// ({"id":<digits> first); ok is false for any other shape.
func leadingQueueID(v []byte) (uint64, bool) {
	const head = `{"id":`
	if len(v) <= len(head) || string(v[:len(head)]) != head {
		return 0, false
	}
	var id uint64
	i := len(head)
	start := i
	for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
		d := uint64(v[i] - '0')
		if id > (math.MaxUint64-d)/10 {
			return 0, false // overflow; let encoding/json decide
		}
		id = id*10 + d
	}
	if i == start || i >= len(v) || (v[i] != ',' && v[i] != '}') || (v[start] == '0' && i-start > 1) {
		return 0, false
	}
	return id, true
}

// CreateQueue implements Create Queue. It reports created=false when a
// queue with the same name and identical metadata already exists (Azure
// answers 204), and QueueAlreadyExists when the metadata differs.
func (s *Service) CreateQueue(ctx context.Context, account, name string, md []MetadataItem) (created bool, err error) {
	md = NormalizeMetadata(md)
	err = s.engine.Update(ctx, func(tx storage.Tx) error {
		created = false
		q, err := loadQueue(tx, account, name)
		if err == nil {
			if sameMetadata(q.Metadata, md) {
				return nil
			}
			return azerr.New(azerr.QueueAlreadyExists)
		}
		if e, ok := azerr.As(err); !ok || e.Code != azerr.QueueNotFound {
			return err
		}
		q = queueRecord{ID: newQueueID(), Metadata: md}
		if err := tx.Set(queueKey(account, name), q.encode()); err != nil {
			return err
		}
		created = true
		return tx.Set(statsKey(q.ID), nil)
	})
	return created, azerr.FromEngine(err)
}

// DeleteQueue implements Delete Queue. The queue disappears in one small
// transaction; its messages are purged in the background.
func (s *Service) DeleteQueue(ctx context.Context, account, name string) error {
	err := s.engine.Update(ctx, func(tx storage.Tx) error {
		q, err := loadQueue(tx, account, name)
		if err != nil {
			return err
		}
		if err := tx.Delete(queueKey(account, name)); err != nil {
			return err
		}
		return tx.Set(tombKey(q.ID), nil)
	})
	if err == nil {
		s.purge.kick()
	}
	return azerr.FromEngine(err)
}

// GetQueueProperties implements Get Queue Metadata.
func (s *Service) GetQueueProperties(ctx context.Context, account, name string) (QueueProperties, error) {
	var p QueueProperties
	var qid uint64
	stale := false
	err := s.engine.View(ctx, func(tx storage.Tx) error {
		q, err := loadQueue(tx, account, name)
		if err != nil {
			return err
		}
		n, err := loadCount(tx, q.ID)
		if err != nil {
			return err
		}
		p = QueueProperties{Metadata: q.Metadata, ApproximateMessageCount: n}
		qid = q.ID
		// Expired messages still counted: have the reaper remove them so
		// the count comes down.
		it := tx.Scan(expPrefix(q.ID), expiredUpTo(q.ID, micros(s.now())), false)
		stale = it.Next()
		err = it.Err()
		it.Close()
		return err
	})
	if err == nil && stale {
		s.purge.reap(qid)
	}
	return p, azerr.FromEngine(err)
}

// SetQueueMetadata implements Set Queue Metadata: the new set replaces the
// old one (last writer wins).
func (s *Service) SetQueueMetadata(ctx context.Context, account, name string, md []MetadataItem) error {
	md = NormalizeMetadata(md)
	return azerr.FromEngine(s.engine.Update(ctx, func(tx storage.Tx) error {
		q, err := loadQueue(tx, account, name)
		if err != nil {
			return err
		}
		q.Metadata = md
		return tx.Set(queueKey(account, name), q.encode())
	}))
}

// GetQueueACL implements Get Queue ACL.
func (s *Service) GetQueueACL(ctx context.Context, account, name string) ([]SignedIdentifier, error) {
	var acl []SignedIdentifier
	err := s.engine.View(ctx, func(tx storage.Tx) error {
		q, err := loadQueue(tx, account, name)
		acl = q.ACL
		return err
	})
	return acl, azerr.FromEngine(err)
}

// SetQueueACL implements Set Queue ACL: the identifiers replace the stored
// ones (last writer wins). The caller validates count and fields.
func (s *Service) SetQueueACL(ctx context.Context, account, name string, acl []SignedIdentifier) error {
	return azerr.FromEngine(s.engine.Update(ctx, func(tx storage.Tx) error {
		q, err := loadQueue(tx, account, name)
		if err != nil {
			return err
		}
		q.ACL = acl
		return tx.Set(queueKey(account, name), q.encode())
	}))
}

// ListQueues implements List Queues: queues of account whose names start
// with prefix, from marker (a queue name, inclusive) on, at most max of
// them. next is the name to continue from, or "" at the end.
func (s *Service) ListQueues(ctx context.Context, account, prefix, marker string, max int) (items []QueueItem, next string, err error) {
	if max <= 0 || max > MaxListResults {
		max = MaxListResults
	}
	lo := queueNamePrefix(account, prefix)
	hi := keyenc.PrefixEnd(lo)
	if marker != "" {
		if mk := queueKey(account, marker); bytes.Compare(mk, lo) > 0 {
			lo = mk
		}
	}
	base := len(keyenc.AppendString(root(tagQueue), account))
	err = s.engine.View(ctx, func(tx storage.Tx) error {
		items, next = nil, ""
		it := tx.Scan(lo, hi, false)
		defer it.Close()
		for it.Next() {
			name, _, err := keyenc.ReadString(it.Key()[base:])
			if err != nil {
				return errCorrupt
			}
			if len(items) == max {
				next = name
				return nil
			}
			q, err := decodeQueue(it.Value())
			if err != nil {
				return err
			}
			items = append(items, QueueItem{Name: name, Metadata: q.Metadata})
		}
		return it.Err()
	})
	return items, next, azerr.FromEngine(err)
}

// ServiceProperties are the stored Queue service properties as raw,
// already validated values; queuehttp owns their XML shape.
type ServiceProperties struct {
	Logging       *Logging   `json:"logging,omitempty"`
	HourMetrics   *Metrics   `json:"hour,omitempty"`
	MinuteMetrics *Metrics   `json:"minute,omitempty"`
	Cors          []CorsRule `json:"cors,omitempty"`
}

// RetentionPolicy is the retention setting of logging and metrics.
type RetentionPolicy struct {
	Enabled bool `json:"enabled"`
	Days    *int `json:"days,omitempty"`
}

// Logging is the Storage Analytics logging setting.
type Logging struct {
	Version         string          `json:"version"`
	Delete          bool            `json:"delete"`
	Read            bool            `json:"read"`
	Write           bool            `json:"write"`
	RetentionPolicy RetentionPolicy `json:"retention"`
}

// Metrics is an hour or minute metrics setting.
type Metrics struct {
	Version         string          `json:"version"`
	Enabled         bool            `json:"enabled"`
	IncludeAPIs     *bool           `json:"apis,omitempty"`
	RetentionPolicy RetentionPolicy `json:"retention"`
}

// CorsRule is one CORS rule; list fields are comma-separated as on the
// wire.
type CorsRule struct {
	AllowedOrigins  string `json:"origins"`
	AllowedMethods  string `json:"methods"`
	AllowedHeaders  string `json:"headers"`
	ExposedHeaders  string `json:"exposed"`
	MaxAgeInSeconds int    `json:"maxage"`
}

// DefaultServiceProperties is what an account reports before any Set.
func DefaultServiceProperties() ServiceProperties {
	return ServiceProperties{
		Logging:       &Logging{Version: "1.0"},
		HourMetrics:   &Metrics{Version: "1.0"},
		MinuteMetrics: &Metrics{Version: "1.0"},
	}
}

// GetServiceProperties implements Get Queue Service Properties.
func (s *Service) GetServiceProperties(ctx context.Context, account string) (ServiceProperties, error) {
	p := DefaultServiceProperties()
	err := s.engine.View(ctx, func(tx storage.Tx) error {
		v, err := tx.Get(propsKey(account))
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return decodeJSON(v, &p)
	})
	return p, azerr.FromEngine(err)
}

// SetServiceProperties implements Set Queue Service Properties. Parts left
// nil keep their stored value; a non-nil Cors (even empty) replaces the
// rules. Last writer wins.
func (s *Service) SetServiceProperties(ctx context.Context, account string, in ServiceProperties, setCors bool) error {
	return azerr.FromEngine(s.engine.Update(ctx, func(tx storage.Tx) error {
		p := DefaultServiceProperties()
		v, err := tx.Get(propsKey(account))
		switch {
		case err == nil:
			if err := decodeJSON(v, &p); err != nil {
				return err
			}
		case !errors.Is(err, storage.ErrNotFound):
			return err
		}
		if in.Logging != nil {
			p.Logging = in.Logging
		}
		if in.HourMetrics != nil {
			p.HourMetrics = in.HourMetrics
		}
		if in.MinuteMetrics != nil {
			p.MinuteMetrics = in.MinuteMetrics
		}
		if setCors {
			p.Cors = in.Cors
		}
		return tx.Set(propsKey(account), encodeJSON(p))
	}))
}
