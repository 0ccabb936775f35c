package queue

import (
	"context"
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
