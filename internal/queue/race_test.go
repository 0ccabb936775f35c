package queue

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/storage"
)

// gate releases n goroutines at once so that they really overlap.
type gate struct {
	ready sync.WaitGroup
	start chan struct{}
}

func newGate(n int) *gate {
	g := &gate{start: make(chan struct{})}
	g.ready.Add(n)
	return g
}

func (g *gate) wait() { g.ready.Done(); <-g.start }
func (g *gate) open() { g.ready.Wait(); close(g.start) }

// TestRaceGetMessagesWhileExpiring: many consumers dequeue while the clock
// runs past the messages' expiry times. No message is handed out twice,
// none after it expired, and once every message has expired the queue
// count drops to zero.
func TestRaceGetMessagesWhileExpiring(t *testing.T) {
	engines(t, func(t *testing.T, e storage.Engine) {
		clk := newClock()
		s := startService(t, e, clk.Now)
		ctx := context.Background()
		MustCreate(t, s, "expiring")
		const total = 300
		var nms []NewMessage
		for i := 0; i < total; i++ {
			nms = append(nms, NewMessage{Text: "m", TTL: time.Duration(i%30+1) * time.Second})
		}
		if _, err := s.PutMessages(ctx, acct, "expiring", nms); err != nil {
			t.Fatal(err)
		}
		const consumers = 6
		var mu sync.Mutex
		seen := map[MessageID]int{}
		stop := make(chan struct{})
		g := newGate(consumers + 1)
		var wg sync.WaitGroup
		for c := 0; c < consumers; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g.wait()
				for {
					select {
					case <-stop:
						return
					default:
					}
					before := clk.Now()
					ms, err := s.GetMessages(ctx, acct, "expiring", 4, time.Hour)
					if err != nil {
						t.Error(err)
						return
					}
					if len(ms) == 0 {
						time.Sleep(time.Millisecond)
					}
					mu.Lock()
					for _, m := range ms {
						seen[m.ID]++
						if !m.ExpirationTime.After(before) {
							t.Errorf("message %s handed out at or after %v, though it expired at %v", m.ID, before, m.ExpirationTime)
						}
						if m.DequeueCount != 1 {
							t.Errorf("message %s dequeued %d times", m.ID, m.DequeueCount)
						}
					}
					mu.Unlock()
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.wait()
			// 40 s in 200 ms steps: every message expires on the way.
			for i := 0; i < 200; i++ {
				clk.Advance(200 * time.Millisecond)
				time.Sleep(200 * time.Microsecond)
			}
			close(stop)
		}()
		g.open()
		wg.Wait()
		for id, n := range seen {
			if n != 1 {
				t.Fatalf("message %s handed out %d times", id, n)
			}
		}
		ms, err := s.GetMessages(ctx, acct, "expiring", 32, time.Second)
		if err != nil || len(ms) != 0 {
			t.Fatalf("after expiry: %d messages, %v", len(ms), err)
		}
		// Reaping the expired messages brings the count to zero.
		for i := 0; i < 3; i++ {
			if _, err := s.GetQueueProperties(ctx, acct, "expiring"); err != nil {
				t.Fatal(err)
			}
			if err := s.WaitPurged(ctx); err != nil {
				t.Fatal(err)
			}
		}
		p, err := s.GetQueueProperties(ctx, acct, "expiring")
		if err != nil || p.ApproximateMessageCount != 0 {
			t.Fatalf("count %d after every message expired (%v)", p.ApproximateMessageCount, err)
		}
		t.Logf("%d of %d messages dequeued before expiry", len(seen), total)
	})
}

// TestRaceCountAcrossServices: producers and consumers on two Services
// sharing one engine (two instances on one database) put and delete
// messages of one queue at once; the count, spread over shards, ends
// exactly at what is left, and each producer's messages, put at one
// clock instant, come out in the order it put them.
func TestRaceCountAcrossServices(t *testing.T) {
	engines(t, func(t *testing.T, e storage.Engine) {
		clk := newClock() // frozen: every message is visible from one instant
		svcs := []*Service{startService(t, e, clk.Now), startService(t, e, clk.Now)}
		ctx := context.Background()
		MustCreate(t, svcs[0], "shared")
		const producers, perProducer, consumers = 6, 40, 3
		g := newGate(producers + consumers)
		var wg sync.WaitGroup
		var mu sync.Mutex
		deleted := 0
		for p := range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := svcs[p%2]
				g.wait()
				for i := range perProducer {
					if _, err := s.PutMessage(ctx, acct, "shared", NewMessage{Text: fmt.Sprintf("%d/%03d", p, i)}); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		for c := range consumers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := svcs[c%2]
				g.wait()
				for range 20 {
					ms, err := s.GetMessages(ctx, acct, "shared", 2, time.Hour)
					if err != nil {
						t.Error(err)
						return
					}
					for _, m := range ms {
						if err := s.DeleteMessage(ctx, acct, "shared", m.ID, m.PopReceipt); err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						deleted++
						mu.Unlock()
					}
				}
			}()
		}
		g.open()
		wg.Wait()
		if t.Failed() {
			return
		}
		want := int64(producers*perProducer - deleted)
		for _, s := range svcs {
			p, err := s.GetQueueProperties(ctx, acct, "shared")
			if err != nil || p.ApproximateMessageCount != want {
				t.Fatalf("count %d (%v), want %d", p.ApproximateMessageCount, err, want)
			}
		}
		// What is left comes out in each producer's order.
		last := map[string]string{}
		left := int64(0)
		for {
			ms, err := svcs[0].GetMessages(ctx, acct, "shared", 32, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) == 0 {
				break
			}
			for _, m := range ms {
				left++
				prod, seq, _ := strings.Cut(m.Text, "/")
				if prev, ok := last[prod]; ok && seq <= prev {
					t.Fatalf("producer %s: message %s after %s", prod, seq, prev)
				}
				last[prod] = seq
			}
		}
		if left != want {
			t.Fatalf("%d messages left, count said %d", left, want)
		}
	})
}
