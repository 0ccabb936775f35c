package queue

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/engine/logstore"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/engine/sqlitestore"
	"github.com/lazuli-storage/lazuli/storage"
)

const million = 1_000_000

// fill puts n messages into queue name through the domain's bulk path, in
// batches of one transaction each.
func fill(tb testing.TB, s *Service, name string, n int) {
	tb.Helper()
	ctx := context.Background()
	const batch = 5000
	nms := make([]NewMessage, batch)
	for done := 0; done < n; done += batch {
		k := min(batch, n-done)
		for i := range k {
			nms[i] = NewMessage{Text: fmt.Sprintf("message-%07d", done+i)}
		}
		if _, err := s.PutMessages(ctx, acct, name, nms[:k]); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestLargeQueue fills one queue with 100,000 messages on the memory
// engine and checks that the counter, ordering, the receive / delete cycle
// and the background purge stay right at that size. The million-message
// figures come from BenchmarkMillionMessageQueue, which runs the same
// checks (checkLargeQueue) on a million messages first.
func TestLargeQueue(t *testing.T) {
	e := memstore.New()
	defer e.Close()
	s := startService(t, e, newClock().Now)
	ctx := context.Background()
	MustCreate(t, s, "huge")
	fill(t, s, "huge", 100_000)
	checkLargeQueue(t, s, "huge", 100_000)
	// Deleting the queue is one small transaction; the purge follows.
	if err := s.DeleteQueue(ctx, acct, "huge"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetQueueProperties(ctx, acct, "huge"); err == nil {
		t.Fatal("queue still there")
	}
	MustCreate(t, s, "other")
	if _, err := s.PutMessage(ctx, acct, "other", NewMessage{Text: "served during the purge"}); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitPurged(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countKeys(t, e); n != 3 {
		t.Fatalf("%d keys left after purge, want the 3 of queue other", n)
	}
}

// checkLargeQueue checks a queue filled by fill with n messages, and
// leaves n-32+1 messages in it.
func checkLargeQueue(tb testing.TB, s *Service, name string, n int) {
	tb.Helper()
	ctx := context.Background()
	p, err := s.GetQueueProperties(ctx, acct, name)
	if err != nil || p.ApproximateMessageCount != int64(n) {
		tb.Fatalf("count %d %v", p.ApproximateMessageCount, err)
	}
	got, err := s.GetMessages(ctx, acct, name, 32, time.Minute)
	if err != nil || len(got) != 32 {
		tb.Fatalf("get %d %v", len(got), err)
	}
	for i, m := range got {
		if want := fmt.Sprintf("message-%07d", i); m.Text != want {
			tb.Fatalf("got[%d] = %q, want %q", i, m.Text, want)
		}
		if err := s.DeleteMessage(ctx, acct, name, m.ID, m.PopReceipt); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := s.PutMessage(ctx, acct, name, NewMessage{Text: "tail"}); err != nil {
		tb.Fatal(err)
	}
	pk, _ := s.PeekMessages(ctx, acct, name, 1)
	if len(pk) != 1 || pk[0].Text != "message-0000032" {
		tb.Fatalf("peek %+v", pk)
	}
	p, _ = s.GetQueueProperties(ctx, acct, name)
	if p.ApproximateMessageCount != int64(n-32+1) {
		tb.Fatalf("count %d", p.ApproximateMessageCount)
	}
}

// BenchmarkMillionMessageQueue measures Put Message and Get Messages (plus
// the Delete Message that settles each received message) against a queue
// that already holds a million messages, and reports p50/p99 latencies:
// first one client in a loop, then 8 competing clients (2,000 cycles).
func BenchmarkMillionMessageQueue(b *testing.B) {
	run := func(b *testing.B, e storage.Engine) {
		s := startService(b, e, nil)
		ctx := context.Background()
		MustCreate(b, s, "huge")
		fill(b, s, "huge", million)
		checkLargeQueue(b, s, "huge", million)
		var puts, gets, dels []time.Duration
		b.ResetTimer()
		for b.Loop() {
			t0 := time.Now()
			if _, err := s.PutMessage(ctx, acct, "huge", NewMessage{Text: "benchmark message"}); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			ms, err := s.GetMessages(ctx, acct, "huge", 1, time.Minute)
			if err != nil || len(ms) != 1 {
				b.Fatalf("get %d %v", len(ms), err)
			}
			t2 := time.Now()
			if err := s.DeleteMessage(ctx, acct, "huge", ms[0].ID, ms[0].PopReceipt); err != nil {
				b.Fatal(err)
			}
			t3 := time.Now()
			puts, gets, dels = append(puts, t1.Sub(t0)), append(gets, t2.Sub(t1)), append(dels, t3.Sub(t2))
		}
		b.StopTimer()
		report(b, "put", puts)
		report(b, "get", gets)
		report(b, "delete", dels)

		// The same cycle from 8 competing clients at once.
		var mu sync.Mutex
		puts, gets, dels = puts[:0], gets[:0], dels[:0]
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var p, g, d []time.Duration
				for range 250 {
					t0 := time.Now()
					if _, err := s.PutMessage(ctx, acct, "huge", NewMessage{Text: "benchmark message"}); err != nil {
						b.Error(err)
						return
					}
					t1 := time.Now()
					ms, err := s.GetMessages(ctx, acct, "huge", 1, time.Minute)
					if err != nil || len(ms) != 1 {
						b.Errorf("get %d %v", len(ms), err)
						return
					}
					t2 := time.Now()
					if err := s.DeleteMessage(ctx, acct, "huge", ms[0].ID, ms[0].PopReceipt); err != nil {
						b.Error(err)
						return
					}
					t3 := time.Now()
					p, g, d = append(p, t1.Sub(t0)), append(g, t2.Sub(t1)), append(d, t3.Sub(t2))
				}
				mu.Lock()
				puts, gets, dels = append(puts, p...), append(gets, g...), append(dels, d...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		report(b, "8clients-put", puts)
		report(b, "8clients-get", gets)
		report(b, "8clients-delete", dels)
	}
	b.Run("memory", func(b *testing.B) {
		e := memstore.New()
		defer e.Close()
		run(b, e)
	})
	b.Run("log", func(b *testing.B) {
		e, err := logstore.Open(logstore.Options{Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		run(b, e)
	})
	b.Run("sqlite", func(b *testing.B) {
		e, err := sqlitestore.Open(sqlitestore.Options{Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		run(b, e)
	})
}

func report(b *testing.B, name string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	q := func(p float64) float64 {
		return float64(ds[int(p*float64(len(ds)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.50), name+"-p50-ms")
	b.ReportMetric(q(0.99), name+"-p99-ms")
}
