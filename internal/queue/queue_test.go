package queue

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// engines runs fn once per engine.
func engines(t *testing.T, fn func(t *testing.T, e storage.Engine)) {
	t.Run("memory", func(t *testing.T) {
		e := memstore.New()
		t.Cleanup(func() { e.Close() })
		fn(t, e)
	})
	t.Run("sqlite", func(t *testing.T) {
		e, err := sqlitestore.Open(sqlitestore.Options{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		fn(t, e)
	})
}

const acct = "devstoreaccount1"

// startService returns a Service on e with its background worker running
// until the test ends, as the server runs it.
func startService(tb testing.TB, e storage.Engine, now func() time.Time) *Service {
	s := New(e, now)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx)
	}()
	tb.Cleanup(func() {
		cancel()
		<-done
	})
	return s
}

func MustCreate(tb testing.TB, s *Service, name string) {
	tb.Helper()
	if _, err := s.CreateQueue(context.Background(), acct, name, nil); err != nil {
		tb.Fatal(err)
	}
}

func wantCode(t *testing.T, err error, code azerr.Code) {
	t.Helper()
	e, ok := azerr.As(err)
	if !ok || e.Code != code {
		t.Fatalf("err = %v, want %s", err, code)
	}
}

func TestCreateQueueIdempotence(t *testing.T) {
	engines(t, func(t *testing.T, e storage.Engine) {
		s := startService(t, e, nil)
		ctx := context.Background()
		md := []MetadataItem{{"B", "2"}, {"a", "1"}}
		created, err := s.CreateQueue(ctx, acct, "q1", md)
		if err != nil || !created {
			t.Fatalf("first create: %v %v", created, err)
		}
		created, err = s.CreateQueue(ctx, acct, "q1", []MetadataItem{{"a", "1"}, {"b", "2"}})
		if err != nil || created {
			t.Fatalf("identical create: created=%v err=%v, want false nil", created, err)
		}
		_, err = s.CreateQueue(ctx, acct, "q1", []MetadataItem{{"a", "9"}})
		wantCode(t, err, azerr.QueueAlreadyExists)
		p, err := s.GetQueueProperties(ctx, acct, "q1")
		if err != nil || len(p.Metadata) != 2 || p.Metadata[0] != (MetadataItem{"a", "1"}) {
			t.Fatalf("props %+v %v", p, err)
		}
		_, err = s.GetQueueProperties(ctx, acct, "nope")
		wantCode(t, err, azerr.QueueNotFound)
	})
}

func TestMessageLifecycle(t *testing.T) {
	engines(t, func(t *testing.T, e storage.Engine) {
		c := newClock()
		s := startService(t, e, c.Now)
		ctx := context.Background()
		MustCreate(t, s, "q")
		var put []Message
		for i := range 5 {
			m, err := s.PutMessage(ctx, acct, "q", NewMessage{Text: fmt.Sprint("m", i)})
			if err != nil {
				t.Fatal(err)
			}
			put = append(put, m)
			c.Advance(time.Millisecond)
		}
		peek, err := s.PeekMessages(ctx, acct, "q", 32)
		if err != nil || len(peek) != 5 {
			t.Fatalf("peek %d %v", len(peek), err)
		}
		for i, m := range peek {
			if m.Text != fmt.Sprint("m", i) || m.DequeueCount != 0 || m.PopReceipt != "" || m.ID != put[i].ID {
				t.Fatalf("peek[%d] = %+v", i, m)
			}
		}
		got, err := s.GetMessages(ctx, acct, "q", 3, 10*time.Second)
		if err != nil || len(got) != 3 {
			t.Fatalf("get %d %v", len(got), err)
		}
		seen := map[string]bool{}
		for i, m := range got {
			if m.Text != fmt.Sprint("m", i) || m.DequeueCount != 1 {
				t.Fatalf("get[%d] = %+v", i, m)
			}
			if seen[m.PopReceipt] || !ValidPopReceipt(m.PopReceipt) {
				t.Fatalf("receipt %q repeated or malformed", m.PopReceipt)
			}
			seen[m.PopReceipt] = true
			if !m.TimeNextVisible.Equal(c.Now().Add(10 * time.Second)) {
				t.Fatalf("TimeNextVisible %v", m.TimeNextVisible)
			}
		}
		// The three are invisible; the other two remain.
		rest, _ := s.GetMessages(ctx, acct, "q", 32, 10*time.Second)
		if len(rest) != 2 || rest[0].Text != "m3" {
			t.Fatalf("rest %+v", rest)
		}
		if more, _ := s.GetMessages(ctx, acct, "q", 32, time.Second); len(more) != 0 {
			t.Fatalf("nothing should be visible, got %d", len(more))
		}
		// After the timeout they come back with DequeueCount 2 and new receipts.
		c.Advance(11 * time.Second)
		// The original receipt still works while nobody re-dequeued.
		if err := s.DeleteMessage(ctx, acct, "q", got[0].ID, got[0].PopReceipt); err != nil {
			t.Fatalf("delete with lapsed but current receipt: %v", err)
		}
		again, err := s.GetMessages(ctx, acct, "q", 32, 10*time.Second)
		if err != nil || len(again) != 4 {
			t.Fatalf("again %d %v", len(again), err)
		}
		for _, m := range again {
			if m.DequeueCount != 2 {
				t.Fatalf("dequeue count %d", m.DequeueCount)
			}
		}
		// Stale receipt (got[1] was re-dequeued) -> MessageNotFound.
		wantCode(t, s.DeleteMessage(ctx, acct, "q", got[1].ID, got[1].PopReceipt), azerr.MessageNotFound)
		_, err = s.UpdateMessage(ctx, acct, "q", got[1].ID, got[1].PopReceipt, nil, 0)
		wantCode(t, err, azerr.MessageNotFound)
		// Update with the current receipt: new text, visible now, new receipt.
		var cur Message
		for _, m := range again {
			if m.ID == got[1].ID {
				cur = m
			}
		}
		txt := "changed"
		up, err := s.UpdateMessage(ctx, acct, "q", cur.ID, cur.PopReceipt, &txt, 0)
		if err != nil || up.PopReceipt == cur.PopReceipt {
			t.Fatalf("update %+v %v", up, err)
		}
		pk, _ := s.PeekMessages(ctx, acct, "q", 1)
		if len(pk) != 1 || pk[0].Text != "changed" || pk[0].DequeueCount != 2 {
			t.Fatalf("after update peek %+v", pk)
		}
		wantCode(t, s.DeleteMessage(ctx, acct, "q", cur.ID, cur.PopReceipt), azerr.MessageNotFound)
		if err := s.DeleteMessage(ctx, acct, "q", cur.ID, up.PopReceipt); err != nil {
			t.Fatal(err)
		}
		p, _ := s.GetQueueProperties(ctx, acct, "q")
		if p.ApproximateMessageCount != 3 {
			t.Fatalf("count %d, want 3", p.ApproximateMessageCount)
		}
		// A put receipt deletes a never-dequeued message.
		m, _ := s.PutMessage(ctx, acct, "q", NewMessage{Text: "x"})
		if err := s.DeleteMessage(ctx, acct, "q", m.ID, m.PopReceipt); err != nil {
			t.Fatal(err)
		}
	})
}

func TestExpiryAndDelayedVisibility(t *testing.T) {
	engines(t, func(t *testing.T, e storage.Engine) {
		c := newClock()
		s := startService(t, e, c.Now)
		ctx := context.Background()
		MustCreate(t, s, "q")
		short, _ := s.PutMessage(ctx, acct, "q", NewMessage{Text: "short", TTL: 5 * time.Second})
		s.PutMessage(ctx, acct, "q", NewMessage{Text: "late", VisibilityTimeout: 20 * time.Second, TTL: time.Hour})
		forever, _ := s.PutMessage(ctx, acct, "q", NewMessage{Text: "forever", TTL: -1})
		if !forever.ExpirationTime.Equal(NeverExpires()) {
			t.Fatalf("infinite ttl expiry %v", forever.ExpirationTime)
		}
		if !short.ExpirationTime.Equal(short.InsertionTime.Add(5 * time.Second)) {
			t.Fatalf("expiry %v insertion %v", short.ExpirationTime, short.InsertionTime)
		}
		pk, _ := s.PeekMessages(ctx, acct, "q", 32)
		if len(pk) != 2 || pk[0].Text != "short" || pk[1].Text != "forever" {
			t.Fatalf("peek %+v", pk)
		}
		c.Advance(6 * time.Second)
		pk, _ = s.PeekMessages(ctx, acct, "q", 32)
		if len(pk) != 1 || pk[0].Text != "forever" {
			t.Fatalf("expired message still peeked: %+v", pk)
		}
		wantCode(t, s.DeleteMessage(ctx, acct, "q", short.ID, short.PopReceipt), azerr.MessageNotFound)
		c.Advance(20 * time.Second)
		got, _ := s.GetMessages(ctx, acct, "q", 32, time.Second)
		if len(got) != 2 || got[0].Text != "forever" || got[1].Text != "late" {
			t.Fatalf("get %+v", got)
		}
		p, _ := s.GetQueueProperties(ctx, acct, "q")
		if p.ApproximateMessageCount != 2 {
			t.Fatalf("count after expiry cleanup %d", p.ApproximateMessageCount)
		}
	})
}

// countKeys counts every key of the Queue service whose tag is one of the
// per-queue-id families (messages, index, stats, tombstones).
func countKeys(t *testing.T, e storage.Engine) int {
	t.Helper()
	n := 0
	err := e.View(context.Background(), func(tx storage.Tx) error {
		for _, tag := range []string{tagMsg, tagVis, tagExp, tagTomb} {
			lo := root(tag)
			it := tx.Scan(lo, keyenc.PrefixEnd(lo), false)
			for it.Next() {
				n++
			}
			it.Close()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestDeleteAndClearPurgeInBackground(t *testing.T) {
	engines(t, func(t *testing.T, e storage.Engine) {
		s := startService(t, e, nil)
		ctx := context.Background()
		MustCreate(t, s, "big")
		batch := make([]NewMessage, 1000)
		for i := range batch {
			batch[i] = NewMessage{Text: "x"}
		}
		for range 3 {
			if _, err := s.PutMessages(ctx, acct, "big", batch); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.ClearMessages(ctx, acct, "big"); err != nil {
			t.Fatal(err)
		}
		p, _ := s.GetQueueProperties(ctx, acct, "big")
		if p.ApproximateMessageCount != 0 {
			t.Fatalf("count after clear %d", p.ApproximateMessageCount)
		}
		if got, _ := s.PeekMessages(ctx, acct, "big", 32); len(got) != 0 {
			t.Fatalf("peek after clear %d", len(got))
		}
		s.PutMessages(ctx, acct, "big", batch)
		if err := s.DeleteQueue(ctx, acct, "big"); err != nil {
			t.Fatal(err)
		}
		// The name is free again at once; the new queue is empty.
		MustCreate(t, s, "big")
		if got, _ := s.PeekMessages(ctx, acct, "big", 32); len(got) != 0 {
			t.Fatalf("recreated queue has %d messages", len(got))
		}
		if err := s.WaitPurged(ctx); err != nil {
			t.Fatal(err)
		}
		if n := countKeys(t, e); n != 0 {
			t.Fatalf("%d message, index or tombstone keys left after purge", n)
		}
	})
}

// TestCompetingConsumers races many receivers on one queue: every message
// goes to exactly one of them in a visibility window and none is lost.
func TestCompetingConsumers(t *testing.T) {
	engines(t, func(t *testing.T, e storage.Engine) {
		s := startService(t, e, nil)
		ctx := context.Background()
		MustCreate(t, s, "race")
		const total = 600
		batch := make([]NewMessage, total)
		for i := range batch {
			batch[i] = NewMessage{Text: fmt.Sprint(i)}
		}
		if _, err := s.PutMessages(ctx, acct, "race", batch); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		got := map[string]int{}
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for w := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					ms, err := s.GetMessages(ctx, acct, "race", 1+w%5, time.Hour)
					if err != nil {
						errs <- err
						return
					}
					if len(ms) == 0 {
						return
					}
					for _, m := range ms {
						mu.Lock()
						got[m.Text]++
						mu.Unlock()
						if err := s.DeleteMessage(ctx, acct, "race", m.ID, m.PopReceipt); err != nil {
							errs <- err
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if len(got) != total {
			t.Fatalf("received %d distinct messages, want %d", len(got), total)
		}
		for k, n := range got {
			if n != 1 {
				t.Fatalf("message %s delivered %d times", k, n)
			}
		}
		p, _ := s.GetQueueProperties(ctx, acct, "race")
		if p.ApproximateMessageCount != 0 {
			t.Fatalf("count %d", p.ApproximateMessageCount)
		}
	})
}

// TestReceiptRace: several holders of the same receipt race to delete or
// update; exactly one wins, the rest get MessageNotFound.
func TestReceiptRace(t *testing.T) {
	engines(t, func(t *testing.T, e storage.Engine) {
		s := startService(t, e, nil)
		ctx := context.Background()
		MustCreate(t, s, "r")
		s.PutMessage(ctx, acct, "r", NewMessage{Text: "x"})
		ms, _ := s.GetMessages(ctx, acct, "r", 1, time.Minute)
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins, notFound := 0, 0
		deleted := false
		var updated Message
		g := newGate(12)
		for i := range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g.wait()
				var err error
				var m Message
				if i%2 == 0 {
					err = s.DeleteMessage(ctx, acct, "r", ms[0].ID, ms[0].PopReceipt)
				} else {
					m, err = s.UpdateMessage(ctx, acct, "r", ms[0].ID, ms[0].PopReceipt, nil, time.Minute)
				}
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					wins++
					deleted, updated = i%2 == 0, m
				} else if e, ok := azerr.As(err); ok && e.Code == azerr.MessageNotFound {
					notFound++
				} else {
					t.Errorf("unexpected %v", err)
				}
			}()
		}
		g.open()
		wg.Wait()
		if wins != 1 || notFound != 11 {
			t.Fatalf("wins %d notFound %d", wins, notFound)
		}
		// The store agrees with the winner.
		p, err := s.GetQueueProperties(ctx, acct, "r")
		if err != nil {
			t.Fatal(err)
		}
		if deleted {
			if p.ApproximateMessageCount != 0 {
				t.Fatalf("delete won, count %d", p.ApproximateMessageCount)
			}
			return
		}
		if p.ApproximateMessageCount != 1 || updated.PopReceipt == ms[0].PopReceipt {
			t.Fatalf("update won, count %d, receipt renewed %v", p.ApproximateMessageCount, updated.PopReceipt != ms[0].PopReceipt)
		}
		if err := s.DeleteMessage(ctx, acct, "r", ms[0].ID, updated.PopReceipt); err != nil {
			t.Fatalf("the winning update's receipt: %v", err)
		}
	})
}

func TestListQueues(t *testing.T) {
	engines(t, func(t *testing.T, e storage.Engine) {
		s := startService(t, e, nil)
		ctx := context.Background()
		for _, n := range []string{"alpha", "beta1", "beta2", "beta3", "gamma"} {
			MustCreate(t, s, n)
		}
		s.CreateQueue(ctx, "other", "beta9", nil)
		items, next, err := s.ListQueues(ctx, acct, "beta", "", 2)
		if err != nil || len(items) != 2 || items[0].Name != "beta1" || next != "beta3" {
			t.Fatalf("page1 %+v %q %v", items, next, err)
		}
		items, next, _ = s.ListQueues(ctx, acct, "beta", next, 2)
		if len(items) != 1 || items[0].Name != "beta3" || next != "" {
			t.Fatalf("page2 %+v %q", items, next)
		}
		items, _, _ = s.ListQueues(ctx, acct, "", "", 0)
		if len(items) != 5 {
			t.Fatalf("all %+v", items)
		}
	})
}

func TestMessageIDRoundTrip(t *testing.T) {
	id := newMessageID(12345)
	back, ok := ParseMessageID(id.String())
	if !ok || back != id {
		t.Fatalf("%s -> %v %v", id, back, ok)
	}
	for _, bad := range []string{"", "x", "0000000000000000000000000000000000000", "zzzzzzzz-0000-0000-0000-000000000000"} {
		if _, ok := ParseMessageID(bad); ok {
			t.Fatalf("%q parsed", bad)
		}
	}
	if ValidPopReceipt("AAAA") || ValidPopReceipt("not base64!") || !ValidPopReceipt(newReceipt().String()) {
		t.Fatal("receipt validation")
	}
}

// TestReaperRemovesExpired: expired messages are removed in the background
// once noticed, the count comes down to the live messages, and the live
// messages behind many expired ones are reachable again.
func TestReaperRemovesExpired(t *testing.T) {
	engines(t, func(t *testing.T, e storage.Engine) {
		c := newClock()
		s := startService(t, e, c.Now)
		ctx := context.Background()
		MustCreate(t, s, "exp")
		batch := make([]NewMessage, 1500)
		for i := range batch {
			batch[i] = NewMessage{Text: "short", TTL: 5 * time.Second}
		}
		if _, err := s.PutMessages(ctx, acct, "exp", batch); err != nil {
			t.Fatal(err)
		}
		c.Advance(time.Millisecond)
		for range 3 {
			if _, err := s.PutMessage(ctx, acct, "exp", NewMessage{Text: "live", TTL: -1}); err != nil {
				t.Fatal(err)
			}
		}
		c.Advance(6 * time.Second)
		p, _ := s.GetQueueProperties(ctx, acct, "exp")
		if p.ApproximateMessageCount < 3 {
			t.Fatalf("count %d below the true count", p.ApproximateMessageCount)
		}
		if err := s.WaitPurged(ctx); err != nil {
			t.Fatal(err)
		}
		p, _ = s.GetQueueProperties(ctx, acct, "exp")
		if p.ApproximateMessageCount != 3 {
			t.Fatalf("count after reaping %d, want 3", p.ApproximateMessageCount)
		}
		pk, _ := s.PeekMessages(ctx, acct, "exp", 32)
		if len(pk) != 3 {
			t.Fatalf("peek after reaping %d, want 3", len(pk))
		}
		if n := countKeys(t, e); n != 6 {
			t.Fatalf("%d keys, want the 6 of the live messages", n)
		}
	})
}

// TestPurgeResumesAfterRestart: a deleted queue whose messages were not
// purged yet (the process stopped) is purged by the next service on the
// same store.
func TestPurgeResumesAfterRestart(t *testing.T) {
	engines(t, func(t *testing.T, e storage.Engine) {
		ctx := context.Background()
		first := startService(t, e, nil)
		MustCreate(t, first, "left")
		batch := make([]NewMessage, 1200)
		for i := range batch {
			batch[i] = NewMessage{Text: "x"}
		}
		if _, err := first.PutMessages(ctx, acct, "left", batch); err != nil {
			t.Fatal(err)
		}
		// What DeleteQueue stores, without starting the purge: as if the
		// process stopped right after answering.
		err := e.Update(ctx, func(tx storage.Tx) error {
			q, err := loadQueue(tx, acct, "left")
			if err != nil {
				return err
			}
			if err := tx.Delete(queueKey(acct, "left")); err != nil {
				return err
			}
			return tx.Set(tombKey(q.ID), nil)
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := countKeys(t, e); n != 3*1200+1 {
			t.Fatalf("%d keys before restart", n)
		}
		second := startService(t, e, nil)
		if err := second.WaitPurged(ctx); err != nil {
			t.Fatal(err)
		}
		if n := countKeys(t, e); n != 0 {
			t.Fatalf("%d keys left after the resumed purge", n)
		}
	})
}

func TestLeadingQueueIDAgreesWithJSON(t *testing.T) {
	for _, id := range []uint64{0, 1, 42, 1<<63 + 12345, math.MaxUint64, 9999999999999999999} {
		q := queueRecord{ID: id, Metadata: []MetadataItem{{Name: "a", Value: "b"}}}
		for _, rec := range []queueRecord{{ID: id}, q} {
			got, ok := leadingQueueID(rec.encode())
			if !ok || got != id {
				t.Errorf("leadingQueueID(%s) = %d, %v; want %d", rec.encode(), got, ok, id)
			}
		}
	}
	for _, bad := range []string{``, `{}`, `{"id":}`, `{"id":01}`, `{"id":18446744073709551616}`, `{"id":1x}`, `{"id":-1}`, `{"id":1`} {
		if _, ok := leadingQueueID([]byte(bad)); ok {
			t.Errorf("leadingQueueID(%s) accepted", bad)
		}
	}
}
