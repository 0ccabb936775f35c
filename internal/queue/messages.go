package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/storage"
)

// NewMessage is one message to put.
type NewMessage struct {
	Text string
	// VisibilityTimeout delays the message's first visibility (0..7 days).
	VisibilityTimeout time.Duration
	// TTL is the time to live: 0 means DefaultTTL, negative means the
	// message never expires. Caller-validated: positive TTLs are at least
	// one second and greater than VisibilityTimeout.
	TTL time.Duration
}

// expiry returns the expiration instant in microseconds, saturating at
// the never-expires date.
func (m NewMessage) expiry(now int64) int64 {
	ttl := m.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	if ttl < 0 {
		return neverExpiresMicro
	}
	us := ttl.Microseconds()
	if us >= neverExpiresMicro-now {
		return neverExpiresMicro
	}
	return now + us
}

func (m *message) view(id MessageID, withReceipt bool) Message {
	out := Message{
		ID:             id,
		InsertionTime:  fromMicros(m.insertion),
		ExpirationTime: fromMicros(m.expiration),
		DequeueCount:   int64(m.dequeueCount),
		Text:           m.text,
	}
	if withReceipt {
		out.PopReceipt = m.receipt.String()
		out.TimeNextVisible = fromMicros(m.visibleAt)
	}
	return out
}

// PutMessage implements Put Message.
func (s *Service) PutMessage(ctx context.Context, account, name string, nm NewMessage) (Message, error) {
	out, err := s.PutMessages(ctx, account, name, []NewMessage{nm})
	if err != nil {
		return Message{}, err
	}
	return out[0], nil
}

// PutMessages puts several messages in one transaction, in order. Put
// Message uses it with one message; bulk loads (tests, benchmarks, tools)
// use it to fill a queue fast.
func (s *Service) PutMessages(ctx context.Context, account, name string, nms []NewMessage) ([]Message, error) {
	out := make([]Message, len(nms))
	rnd, receipts := newIDsAndReceipts(len(nms))
	shard, release := s.takeShard()
	defer release()
	err := s.engine.Update(ctx, func(tx storage.Tx) error {
		now := micros(s.now())
		q, vals, err := s.loadQueueIDWith(tx, account, name, func(qid uint64) [][]byte {
			return [][]byte{countShardKey(qid, shard)}
		})
		if err != nil {
			return err
		}
		seq := s.nextSeqs(now, len(nms))
		for i, nm := range nms {
			id := messageIDFrom(seq, &rnd[i])
			m := message{
				insertion:  now,
				expiration: nm.expiry(now),
				visibleAt:  now + nm.VisibilityTimeout.Microseconds(),
				seq:        seq,
				receipt:    receipts[i],
				text:       nm.Text,
			}
			seq++
			// A new message's keys embed its new id: Insert, not Set.
			if err := storage.Insert(tx, msgKey(q.ID, id), m.encode()); err != nil {
				return err
			}
			if err := storage.Insert(tx, visKey(q.ID, m.visibleAt, id), nil); err != nil {
				return err
			}
			if m.expiration != neverExpiresMicro {
				if err := storage.Insert(tx, expKey(q.ID, m.expiration, id), nil); err != nil {
					return err
				}
			}
			out[i] = m.view(id, true)
		}
		return setCount(tx, countShardKey(q.ID, shard), vals[0], int64(len(nms)))
	})
	if err != nil {
		return nil, azerr.FromEngine(err)
	}
	return out, nil
}

// scanVisible walks the queue's visible messages (visibleAt <= now) in
// visibility order and calls fn with each decoded message until fn returns
// false. Expired messages are not passed to fn; they are collected in
// expired (at most maxExpiredPerScan, after which the walk stops).
func scanVisible(tx storage.Tx, qid uint64, now int64, fn func(id MessageID, m *message) bool) (expired []expiredRef, err error) {
	it := tx.Scan(visPrefix(qid), visibleUpTo(qid, now), false)
	defer it.Close()
	for it.Next() {
		id, ok := indexedID(it.Key())
		if !ok {
			return nil, errCorrupt
		}
		v, err := tx.Get(msgKey(qid, id))
		if errors.Is(err, storage.ErrNotFound) {
			// An index entry without its message cannot be produced by
			// this package; drop it defensively.
			expired = append(expired, expiredRef{id: id, visKey: append([]byte(nil), it.Key()...), orphan: true})
			continue
		}
		if err != nil {
			return nil, err
		}
		m, err := decodeMessage(v)
		if err != nil {
			return nil, err
		}
		if m.expiration <= now {
			expired = append(expired, expiredRef{id: id, visKey: append([]byte(nil), it.Key()...), expKey: expKey(qid, m.expiration, id)})
			if len(expired) >= maxExpiredPerScan {
				break
			}
			continue
		}
		if !fn(id, &m) {
			break
		}
	}
	return expired, it.Err()
}

type expiredRef struct {
	id             MessageID
	visKey, expKey []byte
	orphan         bool
}

// GetMessages implements Get Messages: up to n visible, unexpired messages
// in visibility order (insertion order among messages that became visible
// together); each gets DequeueCount+1, its own new pop receipt and
// TimeNextVisible = now + visibility. Expired messages met on the way are
// deleted.
func (s *Service) GetMessages(ctx context.Context, account, name string, n int, visibility time.Duration) ([]Message, error) {
	if n < 1 {
		n = 1
	}
	// Consumers poll empty queues far more often than they find messages:
	// answer those from a snapshot without opening a write transaction. A
	// queue that just returned messages most likely still has some, so it
	// skips the snapshot and its extra read.
	busyKey := account + "/" + name
	if !s.busy.recent(busyKey, s.now()) {
		if empty, err := s.nothingVisible(ctx, account, name); err != nil || empty {
			return nil, azerr.FromEngine(err)
		}
	}
	var out []Message
	var qid uint64
	sawExpired := false
	err := s.engine.Update(ctx, func(tx storage.Tx) error {
		out = out[:0]
		now := micros(s.now())
		q, err := loadQueueID(tx, account, name)
		if err != nil {
			return err
		}
		qid = q.ID
		type pick struct {
			id MessageID
			m  message
		}
		var picks []pick
		expired, err := scanVisible(tx, q.ID, now, func(id MessageID, m *message) bool {
			picks = append(picks, pick{id, *m})
			return len(picks) < n
		})
		if err != nil {
			return err
		}
		// The iterator is closed: now write.
		sawExpired = len(expired) > 0
		if err := s.dropExpired(tx, q.ID, expired); err != nil {
			return err
		}
		next := now + visibility.Microseconds()
		for _, p := range picks {
			if err := tx.Delete(visKey(q.ID, p.m.visibleAt, p.id)); err != nil {
				return err
			}
			p.m.visibleAt = next
			p.m.dequeueCount++
			p.m.receipt = newReceipt()
			if err := tx.Set(visKey(q.ID, p.m.visibleAt, p.id), nil); err != nil {
				return err
			}
			if err := tx.Set(msgKey(q.ID, p.id), p.m.encode()); err != nil {
				return err
			}
			out = append(out, p.m.view(p.id, true))
		}
		return nil
	})
	if err != nil {
		return nil, azerr.FromEngine(err)
	}
	s.busy.note(busyKey, s.now(), len(out) > 0)
	if sawExpired {
		// More may be waiting behind the ones this request removed.
		s.purge.reap(qid)
	}
	return out, nil
}

// nothingVisible reports, from a snapshot, whether the queue has no index
// entry visible now (it fails with QueueNotFound for a missing queue).
func (s *Service) nothingVisible(ctx context.Context, account, name string) (bool, error) {
	empty := false
	err := s.engine.View(ctx, func(tx storage.Tx) error {
		q, err := loadQueueID(tx, account, name)
		if err != nil {
			return err
		}
		it := tx.Scan(visPrefix(q.ID), visibleUpTo(q.ID, micros(s.now())), false)
		empty = !it.Next()
		err = it.Err()
		it.Close()
		return err
	})
	return empty, err
}

// dropExpired deletes expired messages (and stray index entries) and
// lowers the queue's count accordingly.
func (s *Service) dropExpired(tx storage.Tx, qid uint64, expired []expiredRef) error {
	if len(expired) == 0 {
		return nil
	}
	dropped := int64(0)
	for _, e := range expired {
		if err := tx.Delete(e.visKey); err != nil {
			return err
		}
		if e.orphan {
			continue
		}
		if err := tx.Delete(msgKey(qid, e.id)); err != nil {
			return err
		}
		if err := tx.Delete(e.expKey); err != nil {
			return err
		}
		dropped++
	}
	if dropped == 0 {
		return nil
	}
	return s.addCount(tx, qid, -dropped)
}

// PeekMessages implements Peek Messages: up to n visible, unexpired
// messages without changing them (no receipt, no TimeNextVisible).
func (s *Service) PeekMessages(ctx context.Context, account, name string, n int) ([]Message, error) {
	if n < 1 {
		n = 1
	}
	var out []Message
	var qid uint64
	sawExpired := false
	err := s.engine.View(ctx, func(tx storage.Tx) error {
		out = out[:0]
		now := micros(s.now())
		q, err := loadQueueID(tx, account, name)
		if err != nil {
			return err
		}
		qid = q.ID
		expired, err := scanVisible(tx, q.ID, now, func(id MessageID, m *message) bool {
			out = append(out, m.view(id, false))
			return len(out) < n
		})
		sawExpired = len(expired) > 0
		return err
	})
	if err != nil {
		return nil, azerr.FromEngine(err)
	}
	if sawExpired {
		s.purge.reap(qid)
	}
	return out, nil
}

// checkReceipt checks, for message id whose stored record is v (nil when
// absent), that popReceipt is its current receipt and that it has not
// expired. Azure answers 404 MessageNotFound for an unknown id, an expired
// message and a stale receipt alike.
func checkReceipt(v []byte, popReceipt string, now int64) (message, error) {
	if v == nil {
		return message{}, azerr.New(azerr.MessageNotFound)
	}
	m, err := decodeMessage(v)
	if err != nil {
		return message{}, err
	}
	r, ok := parseReceipt(popReceipt)
	if !ok || r != m.receipt || m.expiration <= now {
		return message{}, azerr.New(azerr.MessageNotFound)
	}
	return m, nil
}

// DeleteMessage implements Delete Message. popReceipt must be the
// message's current receipt (the caller rejects malformed ones with 400).
func (s *Service) DeleteMessage(ctx context.Context, account, name string, id MessageID, popReceipt string) error {
	shard, release := s.takeShard()
	defer release()
	return azerr.FromEngine(s.engine.Update(ctx, func(tx storage.Tx) error {
		now := micros(s.now())
		q, vals, err := s.loadQueueIDWith(tx, account, name, func(qid uint64) [][]byte {
			return [][]byte{msgKey(qid, id), countShardKey(qid, shard)}
		})
		if err != nil {
			return err
		}
		m, err := checkReceipt(vals[0], popReceipt, now)
		if err != nil {
			return err
		}
		if err := tx.Delete(msgKey(q.ID, id)); err != nil {
			return err
		}
		if err := tx.Delete(visKey(q.ID, m.visibleAt, id)); err != nil {
			return err
		}
		if err := tx.Delete(expKey(q.ID, m.expiration, id)); err != nil {
			return err
		}
		return setCount(tx, countShardKey(q.ID, shard), vals[1], -1)
	}))
}

// UpdateMessage implements Update Message: with the current receipt, the
// message becomes visible again after visibility, optionally gets new
// text, and gets a new receipt (returned with its new TimeNextVisible).
// DequeueCount is unchanged.
func (s *Service) UpdateMessage(ctx context.Context, account, name string, id MessageID, popReceipt string, text *string, visibility time.Duration) (Message, error) {
	var out Message
	err := s.engine.Update(ctx, func(tx storage.Tx) error {
		now := micros(s.now())
		q, vals, err := s.loadQueueIDWith(tx, account, name, func(qid uint64) [][]byte {
			return [][]byte{msgKey(qid, id)}
		})
		if err != nil {
			return err
		}
		m, err := checkReceipt(vals[0], popReceipt, now)
		if err != nil {
			return err
		}
		next := now + visibility.Microseconds()
		if m.expiration != neverExpiresMicro && next > m.expiration {
			return azerr.InvalidQuery("visibilitytimeout", fmt.Sprint(int64(visibility/time.Second)),
				"The visibility timeout must not be later than the message's expiration time.")
		}
		if err := tx.Delete(visKey(q.ID, m.visibleAt, id)); err != nil {
			return err
		}
		m.visibleAt = next
		m.receipt = newReceipt()
		if text != nil {
			m.text = *text
		}
		if err := tx.Set(visKey(q.ID, m.visibleAt, id), nil); err != nil {
			return err
		}
		if err := tx.Set(msgKey(q.ID, id), m.encode()); err != nil {
			return err
		}
		out = m.view(id, true)
		return nil
	})
	return out, azerr.FromEngine(err)
}

// ClearMessages implements Clear Messages. The queue gets a fresh internal
// id in one small transaction; the old id's messages are purged in the
// background, so clearing a huge queue returns at once.
func (s *Service) ClearMessages(ctx context.Context, account, name string) error {
	err := s.engine.Update(ctx, func(tx storage.Tx) error {
		q, err := loadQueue(tx, account, name)
		if err != nil {
			return err
		}
		if err := tx.Set(tombKey(q.ID), nil); err != nil {
			return err
		}
		q.ID = newQueueID()
		if err := tx.Set(statsKey(q.ID), nil); err != nil {
			return err
		}
		return tx.Set(queueKey(account, name), q.encode())
	})
	if err == nil {
		s.purge.kick()
	}
	return azerr.FromEngine(err)
}

// Policy returns the stored access policy id of a queue, or nil when the
// queue has none by that id (for SAS authorization).
func (s *Service) Policy(ctx context.Context, account, name, id string) (*SignedIdentifier, error) {
	acl, err := s.GetQueueACL(ctx, account, name)
	if err != nil {
		if e, ok := azerr.As(err); ok && e.Code == azerr.QueueNotFound {
			return nil, nil
		}
		return nil, err
	}
	for i := range acl {
		if acl[i].ID == id {
			return &acl[i], nil
		}
	}
	return nil, nil
}

func decodeJSON(b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %v", errCorrupt, err)
	}
	return nil
}

func encodeJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
